/**
 * Whole OAuth 2.1 / OIDC flows driven by two independent relying-party libraries against a real
 * server: openid-client (public `spa` client) and oauth4webapi in its strict mode (confidential
 * `web` client, and the spa client too). Access tokens are verified locally with jose's
 * remote JWKS the way an application backend would.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as client from 'openid-client';
import * as oauth from 'oauth4webapi';
import { eq } from 'drizzle-orm';
import { auditLog, people, webhookDeliveries } from '../../server/db/schema.js';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { createClient, follow, signUpCookie, startOAuthServer, type OAuthServer } from '../helpers/oauth-server.js';
import { many } from '../../server/db/store.js';

let server: OAuthServer;
let spa: Awaited<ReturnType<typeof createClient>>;
let web: Awaited<ReturnType<typeof createClient>>;
let cookie: string;
const SPA_REDIRECT = 'http://127.0.0.1:5173/callback';
const WEB_REDIRECT = 'http://127.0.0.1:3000/auth/callback';

beforeAll(async () => {
  server = await startOAuthServer();
  spa = await createClient(server, {
    id: 'notes-spa', name: 'Notes', audience: 'https://notes.example.com/api', clientType: 'spa', redirectUris: [SPA_REDIRECT],
  });
  web = await createClient(server, {
    id: 'billing', name: 'Billing', audience: 'https://billing.example.com/api', clientType: 'web', redirectUris: [WEB_REDIRECT],
    webhookUrl: 'http://10.0.0.9:9/hook', // a LAN receiver (never reached here: the attempts only fail)
  });
  cookie = await signUpCookie(server, 'ada@example.com', 'notes-spa');
  // Billing is another realm: signing in there marks it too (same person, same session cookie name).
  const res = await fetch(`${server.url}/api/auth/sign-in/email`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie },
    body: JSON.stringify({ email: 'ada@example.com', password: 'correct horse battery', applicationId: 'billing' }),
  });
  expect(res.status).toBe(200);
  const renewed = res.headers.getSetCookie().find((c) => c.startsWith('gatehouse_session='));
  if (renewed) cookie = renewed.split(';')[0]!;
});

afterAll(async () => {
  await server?.stop();
});

describe('openid-client with a public spa client', () => {
  it('discovers, authorizes with PKCE, exchanges, verifies, refreshes with rotation, detects reuse, reads userinfo and revokes', async () => {
    const config = await client.discovery(new URL(server.url), spa.id, undefined, client.None(), {
      execute: [client.allowInsecureRequests],
    });
    const meta = config.serverMetadata();
    expect(meta.issuer).toBe(server.url);
    expect(meta.code_challenge_methods_supported).toEqual(['S256']);
    expect(meta.authorization_response_iss_parameter_supported).toBe(true);

    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const authUrl = client.buildAuthorizationUrl(config, {
      redirect_uri: SPA_REDIRECT,
      scope: 'openid profile email offline_access',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
      resource: spa.audience,
    });
    const hop = await follow(authUrl, cookie);
    expect(hop.status).toBe(302);
    expect(hop.location!.origin + hop.location!.pathname).toBe(SPA_REDIRECT);
    expect(hop.location!.searchParams.get('iss')).toBe(server.url);

    const tokens = await client.authorizationCodeGrant(config, hop.location!, {
      pkceCodeVerifier: verifier,
      expectedState: state,
      expectedNonce: nonce,
      idTokenExpected: true,
    });
    expect(tokens.token_type).toBe('bearer');
    expect(tokens.expires_in).toBe(900);
    expect(tokens.scope).toBe('openid profile email offline_access');
    expect(tokens.refresh_token).toMatch(/^ghr_/);
    const idClaims = tokens.claims()!;
    expect(idClaims).toMatchObject({ iss: server.url, aud: spa.id, nonce, email: 'ada@example.com', name: 'Ada Lovelace' });
    expect(typeof idClaims.auth_time).toBe('number');
    expect(typeof idClaims.sid).toBe('string');

    // A backend verifies locally: signature from the JWKS, iss, aud, exp.
    const jwks = createRemoteJWKSet(new URL(meta.jwks_uri!));
    const { payload, protectedHeader } = await jwtVerify(tokens.access_token, jwks, {
      issuer: server.url, audience: spa.audience, typ: 'at+jwt', algorithms: ['RS256'],
    });
    expect(protectedHeader.kid).toBeTruthy();
    expect(Object.keys(payload).sort()).toEqual(['app_user', 'aud', 'azp', 'client_id', 'exp', 'iat', 'iss', 'jti', 'scope', 'sid', 'sub']);
    expect(payload).toMatchObject({ sub: idClaims.sub, aud: spa.audience, azp: spa.id, scope: 'openid profile email offline_access' });
    expect(payload.exp! - payload.iat!).toBe(900);
    expect(payload.app_user).toMatchObject({ status: 'active', role: 'member' });
    expect((payload.app_user as { id: string }).id).toMatch(/^mem_/);
    await expect(jwtVerify(tokens.access_token, jwks, { issuer: server.url, audience: web.audience })).rejects.toThrow();

    const info = await client.fetchUserInfo(config, tokens.access_token, idClaims.sub);
    // The profile scope's claims (spec claims-and-groups.md): the username made from the address, the last change.
    const person = (await many(server.running.db.select().from(people).where(eq(people.id, idClaims.sub))))[0]!;
    expect(info).toEqual({
      sub: idClaims.sub, name: 'Ada Lovelace', preferred_username: 'ada', updated_at: Math.floor(person.updatedAt.getTime() / 1000),
      email: 'ada@example.com', email_verified: false,
    });
    expect(idClaims).toMatchObject({ name: 'Ada Lovelace', preferred_username: 'ada', updated_at: info.updated_at, email: 'ada@example.com' });

    // Rotation on every use; the first token is then spent.
    const first = tokens.refresh_token!;
    const second = await client.refreshTokenGrant(config, first);
    expect(second.refresh_token).toBeTruthy();
    expect(second.refresh_token).not.toBe(first);
    expect(second.id_token).toBeUndefined();
    await jwtVerify(second.access_token, jwks, { issuer: server.url, audience: spa.audience });
    const third = await client.refreshTokenGrant(config, second.refresh_token!);

    // Reuse of a rotated token revokes the whole family, including the newest token.
    await expect(client.refreshTokenGrant(config, first)).rejects.toMatchObject({ error: 'invalid_grant' });
    await expect(client.refreshTokenGrant(config, third.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });

    // Revocation (RFC 7009) of a fresh family.
    const again = await client.authorizationCodeGrant(
      config,
      (await follow(client.buildAuthorizationUrl(config, {
        redirect_uri: SPA_REDIRECT, scope: 'openid offline_access', code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256', state,
      }), cookie)).location!,
      { pkceCodeVerifier: verifier, expectedState: state },
    );
    await client.tokenRevocation(config, again.refresh_token!);
    await expect(client.refreshTokenGrant(config, again.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });

    // Revoking an access token (RFC 7009 §2.2.1) makes userinfo refuse it at once, not at expiry.
    expect((await client.fetchUserInfo(config, again.access_token, idClaims.sub)).sub).toBe(idClaims.sub);
    await client.tokenRevocation(config, again.access_token, { token_type_hint: 'access_token' });
    await expect(client.fetchUserInfo(config, again.access_token, idClaims.sub)).rejects.toMatchObject({
      status: 401,
      cause: [{ scheme: 'bearer', parameters: { realm: 'gatehouse', error: 'invalid_token', error_description: 'The access token has been revoked.' } }],
    });
  });
});

describe('oauth4webapi (strict) with a confidential web client', () => {
  const opts = { [oauth.allowInsecureRequests]: true } as const;

  async function authServer() {
    const issuer = new URL(server.url);
    return oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, opts));
  }

  async function codeFor(as: oauth.AuthorizationServer, c: oauth.Client, redirectUri: string, extra: Record<string, string> = {}) {
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const nonce = oauth.generateRandomNonce();
    const url = new URL(as.authorization_endpoint!);
    const params = {
      client_id: c.client_id, redirect_uri: redirectUri, response_type: 'code', scope: 'openid email offline_access',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state, nonce, ...extra,
    };
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    const hop = await follow(url, cookie);
    expect(hop.status).toBe(302);
    return { params: oauth.validateAuthResponse(as, c, hop.location!, state), verifier, nonce };
  }

  it('completes code exchange with client_secret_basic, validates RFC 9068 tokens, refreshes, reads userinfo, revokes', async () => {
    const as = await authServer();
    const c: oauth.Client = { client_id: web.id };
    const auth = oauth.ClientSecretBasic(web.clientSecret!);
    const { params, verifier, nonce } = await codeFor(as, c, WEB_REDIRECT, { resource: web.audience });

    const response = await oauth.authorizationCodeGrantRequest(as, c, auth, params, WEB_REDIRECT, verifier, {
      ...opts, additionalParameters: { resource: web.audience },
    });
    expect(response.headers.get('cache-control')).toBe('no-store');
    const result = await oauth.processAuthorizationCodeResponse(as, c, response, { expectedNonce: nonce, requireIdToken: true });
    expect(result.scope).toBe('openid email offline_access');
    const claims = oauth.getValidatedIdTokenClaims(result)!;
    expect(claims.aud).toBe(web.id);

    // The backend's view: RFC 9068 validation by oauth4webapi itself.
    const request = new Request(`${server.url}/resource`, { headers: { authorization: `Bearer ${result.access_token}` } });
    const at = await oauth.validateJwtAccessToken(as, request, web.audience, opts);
    expect(at).toMatchObject({ iss: server.url, aud: web.audience, client_id: web.id, sub: claims.sub });

    const info = await oauth.processUserInfoResponse(as, c, claims.sub, await oauth.userInfoRequest(as, c, result.access_token, opts));
    expect(info).toEqual({ sub: claims.sub, email: 'ada@example.com', email_verified: false });

    const refreshed = await oauth.processRefreshTokenResponse(
      as, c, await oauth.refreshTokenGrantRequest(as, c, auth, result.refresh_token!, opts),
    );
    expect(refreshed.refresh_token).not.toBe(result.refresh_token);
    expect(refreshed.expires_in).toBe(900);

    // Reuse → family revoked → the newest token is dead as well; the app hears about it.
    await expect(
      oauth.processRefreshTokenResponse(as, c, await oauth.refreshTokenGrantRequest(as, c, auth, result.refresh_token!, opts)),
    ).rejects.toMatchObject({ error: 'invalid_grant' });
    await expect(
      oauth.processRefreshTokenResponse(as, c, await oauth.refreshTokenGrantRequest(as, c, auth, refreshed.refresh_token!, opts)),
    ).rejects.toMatchObject({ error: 'invalid_grant' });
    const events = await many(server.running.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.type, 'security.refresh_token_reused')));
    expect(events).toHaveLength(1);
    expect(JSON.parse(events[0]!.payload)).toMatchObject({ applicationId: 'billing', data: { userId: claims.sub, clientId: 'billing' } });
    const audits = await many(server.running.db.select().from(auditLog).where(eq(auditLog.action, 'security.refresh_token_reused')));
    expect(audits.map((a) => a.applicationId)).toEqual(['notes-spa', 'billing']);

    // client_secret_post works too, and revocation ends a fresh family.
    const post = oauth.ClientSecretPost(web.clientSecret!);
    const second = await codeFor(as, c, WEB_REDIRECT);
    const tokens = await oauth.processAuthorizationCodeResponse(
      as, c, await oauth.authorizationCodeGrantRequest(as, c, post, second.params, WEB_REDIRECT, second.verifier, opts),
      { expectedNonce: second.nonce },
    );
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, c, post, tokens.refresh_token!, opts));
    await expect(
      oauth.processRefreshTokenResponse(as, c, await oauth.refreshTokenGrantRequest(as, c, post, tokens.refresh_token!, opts)),
    ).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('runs the public spa flow (none + PKCE) and a refresh without offline_access yields no refresh token', async () => {
    const as = await authServer();
    const c: oauth.Client = { client_id: spa.id };
    const { params, verifier, nonce } = await codeFor(as, c, SPA_REDIRECT, { scope: 'openid' });
    const result = await oauth.processAuthorizationCodeResponse(
      as, c, await oauth.authorizationCodeGrantRequest(as, c, oauth.None(), params, SPA_REDIRECT, verifier, opts),
      { expectedNonce: nonce },
    );
    expect(result.refresh_token).toBeUndefined();
    expect(result.scope).toBe('openid');
    const header = decodeProtectedHeader(result.access_token);
    expect(header).toMatchObject({ alg: 'RS256', typ: 'at+jwt' });
  });
});
