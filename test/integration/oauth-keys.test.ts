/** Signing keys, JWKS, discovery and rotation (admin API and `gatehouse rotate-keys`). */
import { beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalJWKSet, createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { makeApp } from '../helpers/app.js';
import { ensureBuilt, runCli } from '../helpers/cli.js';
import { setUpClients, spaTokens } from '../helpers/oauth-inject.js';
import { rotateKeysCommand } from '../../server/cli/rotate-keys.js';
import { loadConfig } from '../../server/config.js';
import { start } from '../../server/main.js';
import { JWKS_MAX_AGE_SECONDS } from '../../server/oauth/keys.js';
import { createClient, follow, pkcePair, signUpCookie, startOAuthServer } from '../helpers/oauth-server.js';
import { answerHeaders, headerRecord } from '../helpers/header-record.js';

describe('JWKS and discovery', () => {
  it('publishes an RS256, an ES256 and an EdDSA public key on first start, and the discovery document', async () => {
    const t = await makeApp();
    const jwks = await t.app.inject({ method: 'GET', url: '/api/auth/jwks' });
    expect(jwks.statusCode).toBe(200);
    const keys = jwks.json().keys as Record<string, string>[];
    // RS256 first: a client that ignores `kid` takes the first key.
    expect(keys.map((k) => k.alg)).toEqual(['RS256', 'ES256', 'EdDSA']);
    expect(new Set(keys.map((k) => k.kid)).size).toBe(3);
    const [rsa, ec, ed] = keys as [Record<string, string>, Record<string, string>, Record<string, string>];
    expect(Object.keys(rsa).sort()).toEqual(['alg', 'e', 'kid', 'kty', 'n', 'use']);
    expect(rsa).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig', e: 'AQAB' });
    expect(Buffer.from(rsa.n!, 'base64url').length).toBe(256); // 2048 bits
    expect(Object.keys(ec).sort()).toEqual(['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y']);
    expect(ec).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
    expect([Buffer.from(ec.x!, 'base64url').length, Buffer.from(ec.y!, 'base64url').length]).toEqual([32, 32]);
    expect(Object.keys(ed).sort()).toEqual(['alg', 'crv', 'kid', 'kty', 'use', 'x']);
    expect(ed).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig' });
    expect(Buffer.from(ed.x!, 'base64url').length).toBe(32);
    // The admin key list says the same, one active key per algorithm.
    const list = (await t.admin('GET', '/api/admin/keys')).json().keys as { kid: string; alg: string; status: string }[];
    expect(list.map((k) => [k.kid, k.alg, k.status])).toEqual(keys.map((k) => [k.kid, k.alg, 'active']));

    const doc = (await t.app.inject({ method: 'GET', url: '/.well-known/openid-configuration' })).json();
    const iss = t.config.issuer;
    expect(doc).toMatchObject({
      issuer: iss,
      authorization_endpoint: `${iss}/api/auth/oauth2/authorize`,
      token_endpoint: `${iss}/api/auth/oauth2/token`,
      userinfo_endpoint: `${iss}/api/auth/oauth2/userinfo`,
      jwks_uri: `${iss}/api/auth/jwks`,
      revocation_endpoint: `${iss}/api/auth/oauth2/revoke`,
      end_session_endpoint: `${iss}/api/auth/oauth2/end-session`,
      scopes_supported: ['openid', 'profile', 'email', 'groups', 'address', 'phone', 'offline_access'],
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials', 'urn:ietf:params:oauth:grant-type:device_code'],
      device_authorization_endpoint: `${iss}/api/auth/oauth2/device_authorization`,
      introspection_endpoint: `${iss}/api/auth/oauth2/introspect`,
      introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      backchannel_logout_supported: true,
      backchannel_logout_session_supported: true,
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      id_token_signing_alg_values_supported: ['RS256', 'ES256', 'EdDSA'],
      authorization_response_iss_parameter_supported: true,
      prompt_values_supported: ['none', 'login', 'consent', 'select_account'],
    });
    // RFC 8414's well-known name answers the same document, with the same headers.
    const oauthMeta = await t.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' });
    expect(oauthMeta.statusCode).toBe(200);
    expect(oauthMeta.json()).toEqual(doc);
    expect(oauthMeta.headers['access-control-allow-origin']).toBe('*');
  });
});

describe('key rotation', () => {
  it('admin rotation publishes the next key first and signs with it only after the JWKS cache lifetime; one set of status words', async () => {
    const t = await makeApp({ clock: new Date('2026-03-01T10:00:00Z') });
    const { cookie } = await setUpClients(t);
    const before = await spaTokens(t, cookie);
    const oldKid = decodeProtectedHeader(before.access_token).kid!;
    // Served (and cached as a serialised body) before the rotation, so the rotation must replace it.
    const published = await t.app.inject({ method: 'GET', url: '/api/auth/jwks' });
    const oldKids = published.json().keys.map((k: { kid: string }) => k.kid) as string[];
    expect(oldKids).toHaveLength(3);
    expect(oldKids[0]).toBe(oldKid); // the spa app signs with RS256
    // The cache lifetime the rotation waits out is the one the JWKS announces.
    expect(published.headers['cache-control']).toBe(`public, max-age=${JWKS_MAX_AGE_SECONDS}`);

    expect((await t.app.inject({ method: 'POST', url: '/api/admin/keys/rotate' })).statusCode).toBe(401);
    // Admin token only: an application's API key, whatever its scopes, is refused.
    const apiKey = await t.admin('POST', '/api/admin/applications/notes/api-keys', { name: 'ops', scopes: ['application:read', 'application:write'] });
    expect(apiKey.statusCode).toBe(201);
    for (const [method, url] of [['GET', '/api/admin/keys'], ['POST', '/api/admin/keys/rotate']] as const) {
      const res = await t.app.inject({ method, url, headers: { authorization: `Bearer ${apiKey.json().key}` } });
      expect(res.statusCode).toBe(403);
      expect(res.json().code).toBe('insufficient_scope');
    }
    const rotated = await t.admin('POST', '/api/admin/keys/rotate');
    expect(rotated.statusCode).toBe(201);
    // One new key per algorithm, RS256 first; `key` is the RS256 one.
    const newKids = (rotated.json().keys as { kid: string }[]).map((k) => k.kid);
    const newKid = newKids[0]!;
    const activatesAt = '2026-03-01T10:02:00.000Z'; // now + max-age (60 s) + 60 s skew
    const oldExpires = '2026-03-01T10:18:00.000Z'; // activation + 900 s tokens + 60 s skew
    const created = '2026-03-01T10:00:00.000Z';
    const algs = ['RS256', 'ES256', 'EdDSA'];
    const newRecords = algs.map((alg, i) => ({ kid: newKids[i], alg, status: 'next', createdAt: created, activatesAt, retiredAt: null, expiresAt: null }));
    const oldRecords = algs.map((alg, i) => ({ kid: oldKids[i], alg, status: 'active', createdAt: created, activatesAt: created, retiredAt: activatesAt, expiresAt: oldExpires }));
    expect(rotated.json()).toEqual({ key: newRecords[0], keys: newRecords, previous: oldRecords });
    // The list says exactly what the rotate answer said, with the same words: by algorithm, newest first.
    const list = await t.admin('GET', '/api/admin/keys');
    expect(list.statusCode).toBe(200);
    expect(list.json()).toEqual({ keys: algs.flatMap((_, i) => [newRecords[i], oldRecords[i]]) });
    expect(JSON.stringify(list.json())).not.toContain('PRIVATE KEY');
    // A second rotation while one is waiting would retire keys that never signed.
    const again = await t.admin('POST', '/api/admin/keys/rotate');
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ code: 'key_rotation_pending', detail: `Keys ${newKids.join(', ')} are published and start signing at ${activatesAt}; rotate again after that.` });

    // Published at once, not yet signing: a verifier that fetched the JWKS now has the key in time.
    const jwks = (await t.app.inject({ method: 'GET', url: '/api/auth/jwks' })).json();
    expect(jwks.keys.map((k: { kid: string }) => k.kid)).toEqual(algs.flatMap((_, i) => [newKids[i], oldKids[i]]));
    const during = await spaTokens(t, cookie);
    expect(decodeProtectedHeader(during.access_token).kid).toBe(oldKid);
    expect(decodeProtectedHeader(during.id_token!).kid).toBe(oldKid);

    t.clock.advance(119_999);
    expect(decodeProtectedHeader((await spaTokens(t, cookie)).access_token).kid).toBe(oldKid);
    t.clock.advance(1);
    const after = await spaTokens(t, cookie);
    expect(decodeProtectedHeader(after.access_token).kid).toBe(newKid);
    expect((await t.admin('GET', '/api/admin/keys')).json().keys.map((k: { status: string }) => k.status)).toEqual(['active', 'retiring', 'active', 'retiring', 'active', 'retiring']);
    const set = createLocalJWKSet(jwks);
    const opts = { issuer: t.config.issuer, currentDate: t.clock.now() };
    await jwtVerify(before.access_token, set, opts);
    await jwtVerify(after.access_token, set, opts);

    // Once every token the old key signed has expired (900 s + 60 s skew after it stopped), it leaves the JWKS.
    t.clock.advance(959_999);
    expect((await t.app.inject({ method: 'GET', url: '/api/auth/jwks' })).json().keys).toHaveLength(6);
    t.clock.advance(1);
    const later = (await t.app.inject({ method: 'GET', url: '/api/auth/jwks' })).json();
    expect(later.keys.map((k: { kid: string }) => k.kid)).toEqual(newKids);
    const statuses = (await t.admin('GET', '/api/admin/keys')).json().keys.map((k: { status: string }) => k.status);
    expect(statuses).toEqual(['active', 'retired', 'active', 'retired', 'active', 'retired']);
  });

  it("a verifier caching the JWKS (jose's createRemoteJWKSet) accepts tokens issued right after a rotation", async () => {
    const server = await startOAuthServer();
    try {
      const spa = await createClient(server, { id: 'notes', name: 'Notes', audience: 'https://notes.example.com/api', clientType: 'spa', redirectUris: ['http://127.0.0.1:5173/cb'] });
      const cookie = await signUpCookie(server, 'ada@example.com', spa.id);
      const tokens = async () => {
        const pkce = pkcePair();
        const query = new URLSearchParams({
          response_type: 'code', client_id: spa.id, redirect_uri: spa.redirectUris[0]!, scope: 'openid', state: 's',
          code_challenge: pkce.challenge, code_challenge_method: 'S256',
        });
        const code = (await follow(`${server.url}/api/auth/oauth2/authorize?${query}`, cookie)).location!.searchParams.get('code')!;
        const res = await fetch(`${server.url}/api/auth/oauth2/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: spa.redirectUris[0]!, client_id: spa.id, code_verifier: pkce.verifier }),
        });
        expect(res.status).toBe(200);
        return ((await res.json()) as { access_token: string }).access_token;
      };
      const jwks = createRemoteJWKSet(new URL(`${server.url}/api/auth/jwks`));
      const verify = (token: string) => jwtVerify(token, jwks, { issuer: server.url, audience: spa.audience });
      await verify(await tokens()); // the verifier has fetched and cached the key set
      expect((await server.admin('POST', '/api/admin/keys/rotate')).status).toBe(201);
      // jose waits 30 s before it fetches again; a token signed by the new key now would be refused.
      const { protectedHeader } = await verify(await tokens());
      expect(protectedHeader.kid).toBe(((await (await server.admin('GET', '/api/admin/keys')).json()) as { keys: { kid: string; status: string }[] }).keys.find((k) => k.status === 'active')!.kid);
    } finally {
      await server.stop();
    }
  });

  it('gatehouse rotate-keys rotates the keys of a data directory; a running server publishes the new key', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-keys-'));
    try {
      const running = await start(loadConfig({ LOG_LEVEL: 'silent' }, { dataDir, port: '0', adminToken: 'rotate-keys-admin-token-123' }));
      const first = ((await (await fetch(`${running.url}/api/auth/jwks`)).json()) as { keys: { kid: string }[] }).keys;
      expect(first).toHaveLength(3);
      const logs: string[] = [];
      const log = console.log;
      console.log = (line: string) => logs.push(line);
      const errLog = console.error;
      console.error = () => {};
      try {
        await rotateKeysCommand.run({ 'data-dir': dataDir }, []);
      } finally {
        console.log = log;
        console.error = errLog;
      }
      // The new kids, one a line: RS256, ES256, EdDSA.
      expect(logs).toHaveLength(3);
      for (const kid of logs) expect(kid).toMatch(/^kid_/);
      const second = ((await (await fetch(`${running.url}/api/auth/jwks`)).json()) as { keys: { kid: string }[] }).keys;
      expect(second.map((k) => k.kid)).toEqual(logs.flatMap((kid, i) => [kid, first[i]!.kid]));
      await running.stop();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('discovery and JWKS on the network', () => {
  beforeAll(() => ensureBuilt(), 240_000);

  it('answers GET and HEAD with the routes\' exact status, headers and body; other requests reach the routes', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-early-'));
    try {
      const running = await start(loadConfig({ LOG_LEVEL: 'silent' }, { dataDir, port: '0', adminToken: 'early-answers-admin-token-123' }));
      const security = {
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
        'x-frame-options': 'DENY',
        'content-security-policy': "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
        'access-control-allow-origin': '*',
      };
      for (const [path, type, cache] of [
        ['/.well-known/openid-configuration', 'application/json; charset=utf-8', 'public, max-age=300'],
        ['/api/auth/jwks', 'application/jwk-set+json; charset=utf-8', 'public, max-age=60'],
      ]) {
        const viaRoute = await running.app.inject({ method: 'GET', url: path });
        const body = viaRoute.body;
        const expected = { ...security, 'content-type': type, 'cache-control': cache, 'content-length': String(Buffer.byteLength(body)) };
        expect(answerHeaders(viaRoute.headers)).toEqual(expected);

        const get = await fetch(`${running.url}${path}`);
        expect(get.status).toBe(200);
        expect(answerHeaders(headerRecord(get.headers))).toEqual(expected);
        expect(await get.text()).toBe(body);

        const head = await fetch(`${running.url}${path}`, { method: 'HEAD' });
        expect(head.status).toBe(200);
        expect(answerHeaders(headerRecord(head.headers))).toEqual(expected);
        expect(await head.text()).toBe('');

        const withQuery = await fetch(`${running.url}${path}?v=1`);
        expect(withQuery.status).toBe(200);
        expect(await withQuery.text()).toBe(body);

        const post = await fetch(`${running.url}${path}`, { method: 'POST' });
        const postViaRoute = await running.app.inject({ method: 'POST', url: path });
        expect(post.status).toBe(405);
        expect(post.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
        expect(post.headers.get('content-type')).toBe('application/json; charset=utf-8');
        expect(await post.json()).toEqual(postViaRoute.json());
      }
      expect(JSON.parse((await running.app.inject({ url: '/.well-known/openid-configuration' })).body).issuer).toBe(running.url);

      // A rotation by another process is published within a second, before the server signs with it.
      const before = (await (await fetch(`${running.url}/api/auth/jwks`)).json()) as { keys: { kid: string }[] };
      const rotated = await runCli(['rotate-keys', '--data-dir', dataDir]);
      expect(rotated.code).toBe(0);
      const newKids = rotated.stdout.trimEnd().split('\n');
      expect(newKids).toHaveLength(3);
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      const after = (await (await fetch(`${running.url}/api/auth/jwks`)).json()) as { keys: { kid: string }[] };
      expect(after.keys.map((k) => k.kid)).toEqual(newKids.flatMap((kid, i) => [kid, before.keys[i]!.kid]));
      await running.stop();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('CORS for browser clients', () => {
  it('lets any origin call discovery, JWKS, token, userinfo and revoke without credentials, but not authorize', async () => {
    const t = await makeApp();
    const preflight = await t.app.inject({
      method: 'OPTIONS', url: '/api/auth/oauth2/token',
      headers: { origin: 'http://127.0.0.1:5173', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('*');
    expect(preflight.headers['access-control-allow-methods']).toBe('GET, POST');
    expect(preflight.headers['access-control-allow-credentials']).toBeUndefined();
    const token = await t.app.inject({ method: 'POST', url: '/api/auth/oauth2/token', headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'http://127.0.0.1:5173' }, payload: 'grant_type=x' });
    expect(token.headers['access-control-allow-origin']).toBe('*');
    const jwks = await t.app.inject({ method: 'GET', url: '/api/auth/jwks' });
    expect(jwks.headers['access-control-allow-origin']).toBe('*');
    const authorize = await t.app.inject({ method: 'GET', url: '/api/auth/oauth2/authorize?client_id=x' });
    expect(authorize.headers['access-control-allow-origin']).toBeUndefined();
  });
});
