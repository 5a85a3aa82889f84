/**
 * A relying party on the LAN: openid-client completes discovery, the authorization-code flow with
 * PKCE, ID-token verification against the JWKS and userinfo over HTTPS, trusting only the local CA
 * from `<data>/tls/ca.pem` — no `allowInsecureRequests`, no disabled verification.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as client from 'openid-client';
import { caFetch } from '../helpers/ca-fetch.js';
import { OPS_ADMIN_TOKEN, startServer, tempDataDir } from '../helpers/data-dir.js';

const REDIRECT = 'http://127.0.0.1:5173/callback';

describe('relying party over LAN HTTPS', () => {
  it('signs in with openid-client trusting only the local CA', async () => {
    const dir = tempDataDir();
    const running = await startServer(dir, { GATEHOUSE_TLS: 'auto' });
    const issuer = running.url;
    expect(issuer).toMatch(/^https:/);
    const httpsFetch = caFetch(readFileSync(join(dir, 'tls', 'ca.pem'), 'utf8'));

    const created = await httpsFetch(`${issuer}/api/admin/applications`, {
      method: 'POST',
      headers: { authorization: `Bearer ${OPS_ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        id: 'notes-spa', name: 'Notes', audience: 'https://notes.example.com/api', clientType: 'spa',
        redirectUris: [REDIRECT], authPolicy: { signup_policy: 'open' },
      }),
    });
    expect(created.status).toBe(201);

    const signUp = await httpsFetch(`${issuer}/api/auth/sign-up/email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'ada@example.com', password: 'correct horse battery', name: 'Ada Lovelace', applicationId: 'notes-spa' }),
    });
    expect(signUp.status).toBe(201);
    // Under HTTPS the session cookie is __Host- prefixed and Secure.
    const setCookie = signUp.headers.getSetCookie().find((c) => c.startsWith('__Host-gatehouse_session='));
    expect(setCookie).toMatch(/; Secure/i);
    const cookie = setCookie!.split(';')[0]!;

    const config = await client.discovery(new URL(issuer), 'notes-spa', undefined, client.None(), {
      [client.customFetch]: httpsFetch as never,
    });
    config[client.customFetch] = httpsFetch as never;
    expect(config.serverMetadata().issuer).toBe(issuer);
    expect(config.serverMetadata().jwks_uri).toBe(`${issuer}/api/auth/jwks`);

    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const authUrl = client.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: 'openid profile email',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
      resource: 'https://notes.example.com/api',
    });
    const hop = await httpsFetch(authUrl, { headers: { cookie } });
    expect(hop.status).toBe(302);
    const callback = new URL(hop.headers.get('location')!);
    expect(callback.origin + callback.pathname).toBe(REDIRECT);
    expect(callback.searchParams.get('iss')).toBe(issuer);

    // The ID token's signature is checked against the JWKS fetched over verified HTTPS.
    const tokens = await client.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
      expectedState: state,
      expectedNonce: nonce,
      idTokenExpected: true,
    });
    const claims = tokens.claims()!;
    expect(claims.iss).toBe(issuer);
    expect(claims.aud).toBe('notes-spa');
    const info = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
    expect(info.email).toBe('ada@example.com');

    const jwks = await httpsFetch(`${issuer}/api/auth/jwks`);
    expect(jwks.status).toBe(200);
    expect(((await jwks.json()) as { keys: unknown[] }).keys.length).toBeGreaterThan(0);
  });
});
