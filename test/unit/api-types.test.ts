/**
 * The panel's wire types are generated from the server's OpenAPI document (scripts/api-types.ts).
 * This fails when a route schema changed and `npm run api:types` was not run, so the committed
 * types (and with them `npm run typecheck` of the panel) always describe the real server.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { API_TYPES_FILE, apiTypes } from '../../scripts/api-types.js';

describe('renderer/src/api/schema.d.ts', () => {
  it('is what the server describes today', async () => {
    const fresh = await apiTypes();
    expect(fresh).toContain("'/api/admin/people': {".replace(/'/g, '"'));
    expect(readFileSync(API_TYPES_FILE, 'utf8') === fresh, 'stale: run `npm run api:types` and commit the result').toBe(true);
  });
});
