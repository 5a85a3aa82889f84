import { describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { auditLog } from '../../server/db/schema.js';
import { rotateKeyIfDue } from '../../server/ops/key-rotation.js';
import { makeApp } from '../helpers/app.js';

const DAY = 24 * 3600 * 1000;

describe('signing-key rotation schedule', () => {
  it('rotates the active key once it is older than GATEHOUSE_KEY_ROTATION_DAYS, keeping the old one published', async () => {
    const t = await makeApp({ clock: new Date('2026-03-01T00:00:00Z') });
    expect(t.config.keyRotationDays).toBe(90);
    const before = (await t.admin('GET', '/api/admin/keys')).json().keys;
    expect(before).toHaveLength(1);

    t.clock.advance(89 * DAY);
    expect(await rotateKeyIfDue(t.app.ctx)).toBeUndefined();

    t.clock.advance(2 * DAY);
    const kid = await rotateKeyIfDue(t.app.ctx);
    expect(kid).toMatch(/^kid_/);
    const keys = (await t.admin('GET', '/api/admin/keys')).json().keys;
    expect(keys.map((k: { kid: string; status: string }) => [k.kid, k.status])).toEqual([
      [kid, 'active'],
      [before[0].kid, 'retiring'],
    ]);
    for (const key of keys) expect(Object.keys(key).some((name) => /private/i.test(name))).toBe(false);
    const jwks = (await t.app.inject({ method: 'GET', url: '/api/auth/jwks' })).json().keys;
    expect(jwks.map((k: { kid: string }) => k.kid).sort()).toEqual([kid, before[0].kid].sort());
    const audit = t.db.select().from(auditLog).where(eq(auditLog.action, 'signing_key.rotated')).all();
    expect(audit.map((a) => a.actor)).toEqual(['system:key-rotation']);

    // The new key is young: nothing more is due.
    expect(await rotateKeyIfDue(t.app.ctx)).toBeUndefined();
  });

  it('honours a configured period', async () => {
    const t = await makeApp({ clock: new Date('2026-03-01T00:00:00Z'), config: { keyRotationDays: 7 } });
    t.clock.advance(7 * DAY);
    expect(await rotateKeyIfDue(t.app.ctx)).toMatch(/^kid_/);
  });
});
