/**
 * PostgreSQL's drizzle schema is generated from SQLite's (scripts/pg-schema.ts, issue 26): the
 * committed file must be what the generator writes now, so a schema change cannot reach one engine only.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generate } from '../../scripts/pg-schema.js';

describe('server/db/pg-schema.ts', () => {
  it('is in step with server/db/schema.ts (run `npx tsx scripts/pg-schema.ts` after a schema change)', () => {
    expect(readFileSync(new URL('../../server/db/pg-schema.ts', import.meta.url), 'utf8')).toBe(generate());
  });
});
