/**
 * The new grants driven by openid-client v6 as the relying party against a real server
 * (spec grants-and-logout.md): `clientCredentialsGrant` (RFC 6749 §4.4, the RFC 9068 token
 * profile, audited), and `initiateDeviceAuthorization` + `pollDeviceAuthorizationGrant`
 * (RFC 8628) with the person approving on /device meanwhile. Tokens are verified with jose
 * against the published JWKS, as an application backend would.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as client from 'openid-client';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { createClient, signUpCookie, startOAuthServer, type OAuthServer } from '../helpers/oauth-server.js';

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

let server: OAuthServer;
let jwks: ReturnType<typeof createRemoteJWKSet>;

beforeAll(async () => {
  server = await startOAuthServer();
  jwks = createRemoteJWKSet(new URL(`${server.url}/api/auth/jwks`));
});

afterAll(async () => {
  await server?.stop();
});

async function discover(clientId: string, auth: client.ClientAuth) {
  return client.discovery(new URL(server.url), clientId, undefined, auth, { execute: [client.allowInsecureRequests] });
}

describe('client credentials', () => {
  it('issues an RFC 9068 access token to a confidential client: sub = client_id, aud from resource, no refresh or ID token', async () => {
    const machine = await createClient(server, {
      id: 'reports', name: 'Reports job', audience: 'https://reports.example.com/api', clientType: 'web',
      redirectUris: ['https://reports.example.com/cb'], grantTypes: ['client_credentials'],
    });
    for (const auth of [client.ClientSecretBasic(machine.clientSecret!), client.ClientSecretPost(machine.clientSecret!)]) {
      const config = await discover(machine.id, auth);
      expect(config.serverMetadata().grant_types_supported).toContain('client_credentials');
      const tokens = await client.clientCredentialsGrant(config, { resource: machine.audience });
      expect(tokens.token_type).toBe('bearer');
      expect(tokens.expires_in).toBe(900);
      expect(tokens.refresh_token).toBeUndefined();
      expect(tokens.id_token).toBeUndefined();
      expect(tokens.scope).toBeUndefined();
      const { payload, protectedHeader } = await jwtVerify(tokens.access_token, jwks, {
        issuer: server.url, audience: machine.audience, typ: 'at+jwt', algorithms: ['RS256'],
      });
      expect(protectedHeader.typ).toBe('at+jwt');
      expect(Object.keys(payload).sort()).toEqual(['aud', 'azp', 'client_id', 'exp', 'iat', 'iss', 'jti', 'sub']);
      expect(payload).toMatchObject({ sub: 'reports', client_id: 'reports', azp: 'reports', aud: machine.audience });
      expect(payload.exp! - payload.iat!).toBe(900);
    }
    // Without `resource`, the audience is the application's own.
    const tokens = await client.clientCredentialsGrant(await discover(machine.id, client.ClientSecretPost(machine.clientSecret!)));
    await jwtVerify(tokens.access_token, jwks, { issuer: server.url, audience: machine.audience });

    // Each issued token is in the audit log, by its jti.
    const audit = (await (await server.admin('GET', '/api/admin/audit-log?limit=200')).json()) as { entries: { action: string; actor: string; target: string }[] };
    const issued = audit.entries.filter((e) => e.action === 'token.client_credentials');
    expect(issued).toHaveLength(3);
    expect(issued.every((e) => e.actor === 'client:reports' && e.target.length > 0)).toBe(true);
  });

  it('refuses a wrong secret, another audience, any scope, and an application without the grant', async () => {
    const machine = await createClient(server, {
      id: 'backup-job', name: 'Backups', audience: 'https://backup.example.com/api', clientType: 'web',
      redirectUris: ['https://backup.example.com/cb'], grantTypes: ['client_credentials'],
    });
    const plain = await createClient(server, {
      id: 'plain-web', name: 'Plain', audience: 'https://plain.example.com/api', clientType: 'web', redirectUris: ['https://plain.example.com/cb'],
    });
    // client_secret_post: a plain 401 invalid_client, without a Basic challenge (RFC 6749 §5.2 asks for
    // one only when the client used the Authorization header), so a browser never pops up a dialog.
    const wrong = await discover(machine.id, client.ClientSecretPost('ghs_wrong'));
    await expect(client.clientCredentialsGrant(wrong)).rejects.toMatchObject({
      name: 'ResponseBodyError', status: 401, error: 'invalid_client', error_description: 'Client authentication failed.',
    });
    // client_secret_basic: the same refusal carries the Basic challenge, which openid-client surfaces.
    const wrongBasic = await discover(machine.id, client.ClientSecretBasic('ghs_wrong'));
    await expect(client.clientCredentialsGrant(wrongBasic)).rejects.toMatchObject({
      name: 'WWWAuthenticateChallengeError', status: 401, cause: [{ scheme: 'basic', parameters: { realm: 'gatehouse' } }],
    });
    const right = await discover(machine.id, client.ClientSecretPost(machine.clientSecret!));
    await expect(client.clientCredentialsGrant(right, { resource: 'https://plain.example.com/api' })).rejects.toMatchObject({ error: 'invalid_target' });
    await expect(client.clientCredentialsGrant(right, { scope: 'openid' })).rejects.toMatchObject({ error: 'invalid_scope' });
    await expect(client.clientCredentialsGrant(right, { scope: 'reports:read' })).rejects.toMatchObject({
      error: 'invalid_scope', error_description: 'Unsupported scope: reports:read.',
    });
    const other = await discover(plain.id, client.ClientSecretPost(plain.clientSecret!));
    await expect(client.clientCredentialsGrant(other)).rejects.toMatchObject({ error: 'unauthorized_client', status: 400 });
  });
});

describe('device authorization', () => {
  async function tvClient(id: string) {
    await createClient(server, {
      id, name: 'Lobby TV', audience: `https://${id}.example.com/api`, clientType: 'native', redirectUris: ['http://127.0.0.1/cb'],
      grantTypes: [DEVICE_GRANT, 'refresh_token'],
    });
    return discover(id, client.None());
  }

  /** What a person does on /device with their session: open the code's page and press a button. */
  async function decideOnPage(cookie: string, userCode: string, action: 'approve' | 'deny') {
    const page = await fetch(`${server.url}/device?user_code=${userCode}`, { headers: { cookie }, redirect: 'manual' });
    expect(page.status).toBe(200);
    const html = await page.text();
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(html)![1]!;
    const csrfCookie = page.headers.getSetCookie().find((c) => c.startsWith('gatehouse_csrf='))!.split(';')[0]!;
    const res = await fetch(`${server.url}/device`, {
      method: 'POST', redirect: 'manual',
      headers: { cookie: `${cookie}; ${csrfCookie}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf_token: csrf, user_code: userCode, action }).toString(),
    });
    expect(res.status).toBe(200);
  }

  /**
   * The device's answer with a 1-second interval instead of the announced 5 (asserted above):
   * openid-client waits the interval before its first poll, and the decision on /device is made
   * during that wait either way (issue 45: 5 s less per test). Were the decision late, the poll
   * would be answered authorization_pending, the next slow_down, which openid-client honours by
   * waiting 5 s longer: the same outcome, later.
   */
  const soonFirstPoll = (started: client.DeviceAuthorizationResponse): client.DeviceAuthorizationResponse => ({ ...started, interval: 1 });

  it('initiate, approve on /device while polling, then tokens: access, refresh and ID token with the device session', async () => {
    const config = await tvClient('tv');
    expect(config.serverMetadata().device_authorization_endpoint).toBe(`${server.url}/api/auth/oauth2/device_authorization`);
    const cookie = await signUpCookie(server, 'ada@example.com', 'tv');
    const started = await client.initiateDeviceAuthorization(config, { scope: 'openid profile offline_access' });
    expect(started.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    expect(started.verification_uri).toBe(`${server.url}/device`);
    expect(started.interval).toBe(5);

    const polling = client.pollDeviceAuthorizationGrant(config, soonFirstPoll(started));
    await decideOnPage(cookie, started.user_code, 'approve');
    const tokens = await polling;
    expect(tokens.scope).toBe('openid profile offline_access');
    expect(tokens.refresh_token).toMatch(/^ghr_/);
    const claims = tokens.claims()!;
    expect(claims).toMatchObject({ iss: server.url, aud: 'tv', name: 'Ada Lovelace' });
    const { payload } = await jwtVerify(tokens.access_token, jwks, { issuer: server.url, audience: 'https://tv.example.com/api', typ: 'at+jwt' });
    expect(payload).toMatchObject({ sub: claims.sub, client_id: 'tv', sid: claims.sid });
    // The refresh token works like any other.
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.access_token).toBeTruthy();
  }, 60_000);

  it('a denial reaches the polling device as access_denied', async () => {
    const config = await tvClient('tv-2');
    const cookie = await signUpCookie(server, 'grace@example.com', 'tv-2');
    const started = await client.initiateDeviceAuthorization(config, { scope: 'openid' });
    const polling = client.pollDeviceAuthorizationGrant(config, soonFirstPoll(started));
    await decideOnPage(cookie, started.user_code, 'deny');
    await expect(polling).rejects.toMatchObject({ error: 'access_denied' });
  }, 60_000);
});
