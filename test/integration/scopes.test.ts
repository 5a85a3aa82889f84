/**
 * Scopes (spec claims-and-groups.md "Scopes"): `groups`, `address` and `phone` are granted;
 * an application's `unknownScopes` decides whether other names are `invalid_scope` (`reject`, the
 * default, so existing applications do not change) or dropped (`ignore`: the token response's
 * `scope` lists what was granted), at authorize, on refresh, for device sign-in and client
 * credentials; and the admin API's field.
 */
import { describe, expect, it } from 'vitest';
import { makeApp } from '../helpers/app.js';
import { expectOAuthError, location, authorize, setUpClients, SPA_REDIRECT, spaParams, spaTokens, token } from '../helpers/oauth-inject.js';
import { decodeJwt } from 'jose';

async function setUp() {
  const t = await makeApp();
  return { t, ...(await setUpClients(t)) };
}

describe('scopes', () => {
  it('grants groups, address and phone, in canonical order', async () => {
    const { t, cookie } = await setUp();
    const tokens = await spaTokens(t, cookie, { scope: 'phone offline_access address groups openid email' });
    expect(tokens.scope).toBe('openid email groups address phone offline_access');
    expect(decodeJwt(tokens.access_token).scope).toBe('openid email groups address phone offline_access');
  });

  it('reject (the default): an unknown scope is invalid_scope at authorize, naming it', async () => {
    const { t, cookie } = await setUp();
    expect((await t.admin('GET', '/api/admin/applications/notes')).json().unknownScopes).toBe('reject');
    const answer = location(await authorize(t, spaParams({ scope: 'openid offline_access api.read' }).params, cookie));
    expect(answer.origin + answer.pathname).toBe(SPA_REDIRECT);
    expect(answer.searchParams.get('error')).toBe('invalid_scope');
    expect(answer.searchParams.get('error_description')).toBe('Unsupported scope: api.read.');
  });

  it('ignore: unknown scopes are dropped and the token response lists what was granted; nothing known at all is invalid_scope', async () => {
    const { t, cookie } = await setUp();
    const patched = await t.admin('PATCH', '/api/admin/applications/notes', { unknownScopes: 'ignore' });
    expect(patched.statusCode).toBe(200);
    expect(patched.json().unknownScopes).toBe('ignore');
    const tokens = await spaTokens(t, cookie, { scope: 'openid api.read offline_access roles' });
    expect(tokens.scope).toBe('openid offline_access');
    expect(decodeJwt(tokens.access_token).scope).toBe('openid offline_access');

    const none = location(await authorize(t, spaParams({ scope: 'api.read roles' }).params, cookie));
    expect(none.searchParams.get('error')).toBe('invalid_scope');
    expect(none.searchParams.get('error_description')).toBe('None of the requested scopes is supported: api.read roles.');

    // A refresh may narrow with unknown names too (dropped); it still may not widen.
    const narrowed = await token(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: 'notes', scope: 'openid extra' });
    expect(narrowed.statusCode, narrowed.body).toBe(200);
    expect(narrowed.json().scope).toBe('openid');
    const wider = await token(t, { grant_type: 'refresh_token', refresh_token: narrowed.json().refresh_token, client_id: 'notes', scope: 'openid email' });
    expectOAuthError(wider, 400, 'invalid_scope');

    // Back to reject: the same request fails again.
    await t.admin('PATCH', '/api/admin/applications/notes', { unknownScopes: 'reject' });
    expect(location(await authorize(t, spaParams({ scope: 'openid api.read' }).params, cookie)).searchParams.get('error')).toBe('invalid_scope');
  });

  it('client credentials: a person scope is refused either way; under ignore, unknown names alone give a token without scope', async () => {
    const { t, web } = await setUp();
    await t.admin('PATCH', '/api/admin/applications/billing', { grantTypes: ['authorization_code', 'client_credentials'] });
    const basic = { authorization: `Basic ${Buffer.from(`billing:${web.clientSecret}`).toString('base64')}` };
    expectOAuthError(await token(t, { grant_type: 'client_credentials', scope: 'api.read' }, basic), 400, 'invalid_scope');
    await t.admin('PATCH', '/api/admin/applications/billing', { unknownScopes: 'ignore' });
    const machine = await token(t, { grant_type: 'client_credentials', scope: 'api.read' }, basic);
    expect(machine.statusCode, machine.body).toBe(200);
    expect(machine.json().scope).toBeUndefined();
    expect(decodeJwt(machine.json().access_token).scope).toBeUndefined();
    const person = await token(t, { grant_type: 'client_credentials', scope: 'openid api.read' }, basic);
    expectOAuthError(person, 400, 'invalid_scope');
  });

  it('device sign-in follows the same rule', async () => {
    const { t } = await setUp();
    await t.admin('PATCH', '/api/admin/applications/notes', { grantTypes: ['urn:ietf:params:oauth:grant-type:device_code', 'refresh_token'] });
    const ask = (scope: string) => t.app.inject({
      method: 'POST', url: '/api/auth/oauth2/device_authorization', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ client_id: 'notes', scope }).toString(),
    });
    expectOAuthError(await ask('openid unknown'), 400, 'invalid_scope');
    await t.admin('PATCH', '/api/admin/applications/notes', { unknownScopes: 'ignore' });
    expect((await ask('openid unknown')).statusCode).toBe(200);
  });

  it('the admin API refuses another value, naming the field', async () => {
    const { t } = await setUp();
    const res = await t.admin('PATCH', '/api/admin/applications/notes', { unknownScopes: 'drop' });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('validation_failed');
    expect(res.json().errors.map((e: { path: string }) => e.path)).toContain('body.unknownScopes');
  });

  it('discovery lists the scopes', async () => {
    const { t } = await setUp();
    const meta = (await t.app.inject({ method: 'GET', url: '/.well-known/openid-configuration' })).json();
    expect(meta.scopes_supported).toEqual(['openid', 'profile', 'email', 'groups', 'address', 'phone', 'offline_access']);
  });
});
