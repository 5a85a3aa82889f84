/**
 * The rules the prepared, transaction-free hot paths must keep
 * (docs/decisions/0066-prepared-statements.md): session expiry compared in epoch milliseconds, an
 * active member's authorize read outside a transaction yet a suspension seen at once, and a code exchange that spends its code
 * with a single UPDATE — or, when the membership's activity is stale, in a transaction that also
 * touches it.
 */
import { describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { memberships } from '../../server/db/schema.js';
import { makeApp } from '../helpers/app.js';
import { authorize, expectOAuthError, location, refusedBack, setUpClients, spaParams, SPA_REDIRECT, token } from '../helpers/oauth-inject.js';
import { exec, one } from '../../server/db/store.js';

describe('OAuth hot paths', () => {
  it('is silent up to the last millisecond of a session and sends to sign-in at its expiry', async () => {
    const t = await makeApp();
    const { cookie } = await setUpClients(t);
    const expiresAt = t.clock.now().getTime() + t.config.sessionTtl * 1000;

    t.clock.set(new Date(expiresAt - 1));
    const silent = location(await authorize(t, spaParams().params, cookie));
    expect(silent.origin + silent.pathname).toBe(SPA_REDIRECT);
    expect(silent.searchParams.get('code')).toBeTruthy();

    t.clock.set(new Date(expiresAt));
    const asked = location(await authorize(t, spaParams().params, cookie));
    expect(asked.pathname).toBe('/sign-in');
  });

  it('refuses a member suspended after an authorize that passed', async () => {
    const t = await makeApp();
    const { cookie } = await setUpClients(t);
    expect(location(await authorize(t, spaParams().params, cookie)).searchParams.get('code')).toBeTruthy();

    await exec(t.db.update(memberships).set({ status: 'suspended' }).where(eq(memberships.applicationId, 'notes')));
    const refused = refusedBack(await authorize(t, spaParams().params, cookie), 'suspended');
    expect(refused.searchParams.get('error')).toBe('access_denied');
    expect(refused.searchParams.get('code')).toBeNull();
  });

  it('spends an openid-only code once, and touches a stale membership in the same exchange', async () => {
    const t = await makeApp();
    const { cookie } = await setUpClients(t);
    const joined = (await one(t.db.select().from(memberships).where(eq(memberships.applicationId, 'notes'))))!;
    t.clock.advance(2 * 3600_000); // lastActiveAt is now older than its hourly resolution

    const { pkce, params } = spaParams({ scope: 'openid profile' });
    const code = location(await authorize(t, params, cookie)).searchParams.get('code')!;
    const form = { grant_type: 'authorization_code', code, redirect_uri: SPA_REDIRECT, client_id: 'notes', code_verifier: pkce.verifier };
    const first = await token(t, form);
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json()).toMatchObject({ token_type: 'Bearer', scope: 'openid profile' });
    expect(first.json().refresh_token).toBeUndefined();
    const touched = (await one(t.db.select().from(memberships).where(eq(memberships.id, joined.id))))!;
    expect(touched.lastActiveAt).toEqual(t.clock.now());

    // Within the hour: the next exchange takes the single-UPDATE path, and a replay still fails.
    t.clock.advance(1_000);
    const again = spaParams({ scope: 'openid profile' });
    const second = location(await authorize(t, again.params, cookie)).searchParams.get('code')!;
    const secondForm = { ...form, code: second, code_verifier: again.pkce.verifier };
    expect((await token(t, secondForm)).statusCode).toBe(200);
    expect((await one(t.db.select().from(memberships).where(eq(memberships.id, joined.id))))!.lastActiveAt).toEqual(touched.lastActiveAt);
    const replay = await token(t, secondForm);
    expectOAuthError(replay, 400, 'invalid_grant');
    expect(replay.json().error_description).toBe('The authorization code has already been used.');
  });
});
