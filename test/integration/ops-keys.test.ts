import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { auditLog } from '../../server/db/schema.js';
import { rotateKeyIfDue } from '../../server/ops/key-rotation.js';
import { makeApp } from '../helpers/app.js';
import { openDatabase } from '../../server/db/client.js';
import { ensureSigningKeys, KEY_ACTIVATION_DELAY_MS, listKeys } from '../../server/oauth/keys.js';
import { recordAccessTokenTtl, retiringWindowSeconds } from '../../server/ops/token-lifetime.js';
import { CLI, cleanEnv, ensureBuilt, removeTempDirs, runCli, startServer, tempDir } from '../helpers/server-process.js';
import { many } from '../../server/db/store.js';

const DAY = 24 * 3600 * 1000;

describe('signing-key rotation schedule', () => {
  it('rotates the active key once it is older than GATEHOUSE_KEY_ROTATION_DAYS, keeping the old one published', async () => {
    const t = await makeApp({ clock: new Date('2026-03-01T00:00:00Z') });
    expect(t.config.keyRotationDays).toBe(90);
    const before = (await t.admin('GET', '/api/admin/keys')).json().keys as { kid: string }[];
    expect(before).toHaveLength(3); // RS256, ES256, EdDSA

    t.clock.advance(89 * DAY);
    expect(await rotateKeyIfDue(t.app.ctx)).toBeUndefined();

    t.clock.advance(2 * DAY);
    const kid = await rotateKeyIfDue(t.app.ctx);
    expect(kid).toMatch(/^kid_/);
    // Published first; they sign after the JWKS cache lifetime (oauth/keys.ts). Every algorithm's key rotates.
    const listed = async () => (await t.admin('GET', '/api/admin/keys')).json().keys as { kid: string; alg: string; status: string }[];
    const rotated = (await listed()).filter((k) => !before.some((b) => b.kid === k.kid));
    expect(rotated.map((k) => k.alg)).toEqual(['RS256', 'ES256', 'EdDSA']);
    expect(rotated[0]!.kid).toBe(kid);
    const statuses = async () => (await listed()).map((k) => [k.kid, k.status]);
    expect(await statuses()).toEqual(before.flatMap((old, i) => [[rotated[i]!.kid, 'next'], [old.kid, 'active']]));
    expect(await rotateKeyIfDue(t.app.ctx)).toBeUndefined();
    t.clock.advance(KEY_ACTIVATION_DELAY_MS);
    expect(await statuses()).toEqual(before.flatMap((old, i) => [[rotated[i]!.kid, 'active'], [old.kid, 'retiring']]));
    for (const key of await listed()) expect(Object.keys(key).some((name) => /private/i.test(name))).toBe(false);
    const jwks = (await t.app.inject({ method: 'GET', url: '/api/auth/jwks' })).json().keys;
    expect(jwks.map((k: { kid: string }) => k.kid).sort()).toEqual([...rotated, ...before].map((k) => k.kid).sort());
    const audit = await many(t.db.select().from(auditLog).where(eq(auditLog.action, 'signing_key.rotated')));
    expect(audit.map((a) => [a.actor, a.target])).toEqual([['system:key-rotation', kid]]);
    expect(audit[0]!.details).toMatchObject({ keys: { RS256: rotated[0]!.kid, ES256: rotated[1]!.kid, EdDSA: rotated[2]!.kid } });

    // The new key is young: nothing more is due.
    expect(await rotateKeyIfDue(t.app.ctx)).toBeUndefined();
  });

  it('honours a configured period', async () => {
    const t = await makeApp({ clock: new Date('2026-03-01T00:00:00Z'), config: { keyRotationDays: 7 } });
    t.clock.advance(7 * DAY);
    expect(await rotateKeyIfDue(t.app.ctx)).toMatch(/^kid_/);
  });
});

describe('retiring window of `gatehouse rotate-keys`', () => {
  beforeAll(() => ensureBuilt(), 300_000);
  afterAll(() => removeTempDirs());

  const ADMIN = 'rotate-window-admin-token-0123456789';
  interface KeyRow {
    kid: string;
    alg: string;
    status: string;
    retiredAt: string | null;
    expiresAt: string | null;
  }
  const keys = async (url: string): Promise<KeyRow[]> =>
    ((await (await fetch(`${url}/api/admin/keys`, { headers: { authorization: `Bearer ${ADMIN}` } })).json()) as { keys: KeyRow[] }).keys;
  const windowMs = (key: KeyRow) => Date.parse(key.expiresAt!) - Date.parse(key.retiredAt!);
  const serve = (dataDir: string, ttl: string) =>
    startServer(process.execPath, [CLI, 'serve', '--port', '0', '--data-dir', dataDir, '--access-token-ttl', ttl], cleanEnv({ ADMIN_TOKEN: ADMIN }));

  it("keeps the retired key published for the running server's access-token lifetime, not the CLI's own", async () => {
    const dataDir = tempDir();
    const server = await serve(dataDir, '3600');
    let kid: string;
    try {
      const first = await keys(server.url);
      // The CLI's environment has no GATEHOUSE_ACCESS_TOKEN_TTL (its own default is 900 s).
      const rotated = await runCli(['rotate-keys', '--data-dir', dataDir], cleanEnv());
      expect(rotated.code, rotated.stderr).toBe(0);
      const kids = rotated.stdout.trimEnd().split('\n');
      kid = kids[0]!;
      const listed = await keys(server.url);
      // By algorithm (RS256, ES256, EdDSA), the new key before the one it takes over from.
      expect(listed.map((k) => [k.kid, k.alg, k.status])).toEqual(first.flatMap((old, i) => [[kids[i], old.alg, 'next'], [old.kid, old.alg, 'active']]));
      const active = listed[1]!;
      for (const old of listed.filter((k) => k.status === 'active')) expect(windowMs(old)).toBe(3_600_000 + 60_000); // lifetime + clock skew after it stops signing
      expect(rotated.stderr).toBe(
        first.map((old) => `Key ${old.kid} (${old.alg}) signs until ${active.retiredAt} and stays in the JWKS until ${active.expiresAt}.\n`).join('') +
          first.map((old, i) => `New ${old.alg} signing key ${kids[i]} is published now and signs from ${active.retiredAt}.\n`).join(''),
      );
      // Another rotation before the hand-over is refused with one sentence.
      const early = await runCli(['rotate-keys', '--data-dir', dataDir], cleanEnv());
      expect(early.code).toBe(1);
      expect(early.stderr).toBe(`gatehouse: Keys ${kids.join(', ')} are published and start signing at ${active.retiredAt}; rotate again after that.\n`);
    } finally {
      await server.stop();
    }
    // The hand-over is two minutes away in real time: move it into the past, as if they had gone by.
    const shift = openDatabase(join(dataDir, 'gatehouse.db'));
    shift.$client.prepare('UPDATE signing_keys SET retired_at = retired_at - 180000, expires_at = expires_at - 180000 WHERE retired_at IS NOT NULL').run();
    shift.$client.close();

    // Restarted with a shorter lifetime: tokens from the 3600 s run still need their key for about an hour.
    const restarted = await serve(dataDir, '600');
    try {
      const rotated = await runCli(['rotate-keys', '--data-dir', dataDir], cleanEnv());
      expect(rotated.code, rotated.stderr).toBe(0);
      const retiring = (await keys(restarted.url)).find((k) => k.kid === kid)!;
      expect(retiring.status).toBe('active'); // signs until the next key takes over
      // What is left of the hour since the restart (seconds, rounded up), plus skew; not 600 s.
      expect(windowMs(retiring)).toBeGreaterThan(3_600_000 - 60_000);
      expect(windowMs(retiring)).toBeLessThanOrEqual(3_660_000);
    } finally {
      await restarted.stop();
    }
  }, 240_000);

  it('assumes the longest allowed lifetime for a database no server has recorded one in', async () => {
    const dataDir = tempDir();
    const db = openDatabase(join(dataDir, 'gatehouse.db'));
    await ensureSigningKeys(db, new Date());
    db.$client.close();
    const rotated = await runCli(['rotate-keys', '--data-dir', dataDir], cleanEnv());
    expect(rotated.code, rotated.stderr).toBe(0);
    const check = openDatabase(join(dataDir, 'gatehouse.db'));
    const retired = (await listKeys(check, new Date())).find((k) => k.retiredAt !== null)!;
    check.$client.close();
    expect(Date.parse(retired.expiresAt!) - Date.parse(retired.retiredAt!)).toBe(86_400_000 + 60_000);
  });

  it('covers a longer earlier lifetime after a restart with a shorter one, until those tokens expire', async () => {
    const dataDir = tempDir();
    const db = openDatabase(join(dataDir, 'gatehouse.db'));
    try {
      const t0 = Date.parse('2026-04-01T00:00:00Z');
      expect(await retiringWindowSeconds(db, new Date(t0), 900, 86_400)).toBe(86_400);
      await recordAccessTokenTtl(db, 3600, new Date(t0));
      expect(await retiringWindowSeconds(db, new Date(t0 + 5_000), 900, 86_400)).toBe(3600);
      expect(await retiringWindowSeconds(db, new Date(t0 + 5_000), 7200)).toBe(7200); // never below the caller's own
      await recordAccessTokenTtl(db, 600, new Date(t0 + 100_000));
      expect(await retiringWindowSeconds(db, new Date(t0 + 200_000), 60)).toBe(3500);
      expect(await retiringWindowSeconds(db, new Date(t0 + 100_000 + 3_600_000), 60)).toBe(600);
      // A third start keeps the earlier promise too.
      await recordAccessTokenTtl(db, 300, new Date(t0 + 300_000));
      expect(await retiringWindowSeconds(db, new Date(t0 + 400_000), 60)).toBe(3300);
    } finally {
      db.$client.close();
    }
  });
});
