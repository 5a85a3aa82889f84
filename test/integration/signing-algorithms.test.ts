/**
 * Per-application signing algorithms (issue 38), through the HTTP API on either engine: the
 * `signingAlg` field (admin API, OpenAPI, validation), tokens of every grant signed with the
 * application's algorithm and its key (jose verifies them against the JWKS, naming the one
 * algorithm), a change that applies to new tokens only, userinfo, introspection and the one
 * access-token check the other features use (`ctx.readAccessToken`: the admin API's panel tokens,
 * forward auth) accepting every algorithm Gatehouse signs with and nothing else (no algorithm confusion: a header whose
 * `alg` is not its key's own, HS256 keyed with a public key, `none`), rotation of every
 * algorithm's key under the publish-first rule, keys made on upgrade, and private keys sealed at
 * rest in PostgreSQL mode.
 */
import { createHmac, sign, type KeyObject } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import { eq } from 'drizzle-orm';
import { makeApp, makeInstance, type TestApp } from '../helpers/app.js';
import { signUp, sessionCookieOf } from '../helpers/accounts.js';
import { authorize, location, token } from '../helpers/oauth-inject.js';
import { expectValidation } from '../helpers/problem.js';
import { auditLog, signingKeys } from '../../server/db/schema.js';
import { engineOf, exec, many } from '../../server/db/store.js';
import { KEY_ACTIVATION_DELAY_MS, KeyRing } from '../../server/oauth/keys.js';

const ALGS = ['RS256', 'ES256', 'EdDSA'] as const;
type Alg = (typeof ALGS)[number];
/** One confidential application per algorithm: code flow, refresh, client credentials and introspection. */
const APP: Record<Alg, string> = { RS256: 'rs-app', ES256: 'es-app', EdDSA: 'ed-app' };
const redirectOf = (id: string) => `https://${id}.example.com/callback`;
const audienceOf = (id: string) => `https://${id}.example.com/api`;

interface Tokens {
  access_token: string;
  id_token: string;
  refresh_token: string;
}

let t: TestApp;
let cookie: string;
const secrets: Record<string, string> = {};

const basic = (id: string) => ({ authorization: `Basic ${Buffer.from(`${id}:${secrets[id]}`).toString('base64')}` });

async function codeFlow(id: string): Promise<Tokens> {
  const params = { response_type: 'code', client_id: id, redirect_uri: redirectOf(id), scope: 'openid email offline_access', state: 's' };
  const code = location(await authorize(t, params, cookie)).searchParams.get('code')!;
  const res = await token(t, { grant_type: 'authorization_code', code, redirect_uri: redirectOf(id) }, basic(id));
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as Tokens;
}

const jwks = async () => (await t.app.inject({ method: 'GET', url: '/api/auth/jwks' })).json() as JSONWebKeySet;
const userinfo = (accessToken: string) => t.app.inject({ method: 'GET', url: '/api/auth/oauth2/userinfo', headers: { authorization: `Bearer ${accessToken}` } });
const introspect = (id: string, value: string) =>
  t.app.inject({
    method: 'POST', url: '/api/auth/oauth2/introspect',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...basic(id) }, payload: new URLSearchParams({ token: value }).toString(),
  });
/** The active key of each algorithm, from the admin key list. */
async function activeKids(): Promise<Record<Alg, string>> {
  const keys = (await t.admin('GET', '/api/admin/keys')).json().keys as { kid: string; alg: Alg; status: string }[];
  return Object.fromEntries(keys.filter((k) => k.status === 'active').map((k) => [k.alg, k.kid])) as Record<Alg, string>;
}

beforeAll(async () => {
  t = await makeApp({ perFile: true, clock: new Date('2026-03-01T10:00:00Z') });
  expect((await t.admin('POST', '/api/admin/sso-groups', { id: 'team', name: 'Team' })).statusCode).toBe(201);
  for (const alg of ALGS) {
    const id = APP[alg];
    const res = await t.admin('POST', '/api/admin/applications', {
      id, name: id, audience: audienceOf(id), redirectUris: [redirectOf(id)], clientType: 'web', ssoGroupId: 'team',
      grantTypes: ['authorization_code', 'refresh_token', 'client_credentials'], authPolicy: { signup_policy: 'open' },
      // RS256 by leaving it out: the default.
      ...(alg === 'RS256' ? {} : { signingAlg: alg }),
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().signingAlg).toBe(alg);
    secrets[id] = res.json().clientSecret;
  }
  const signedUp = await signUp(t, { email: 'ada@example.com', name: 'Ada', applicationId: APP.RS256 });
  expect(signedUp.statusCode).toBe(201);
  cookie = `gatehouse_session=${sessionCookieOf(signedUp)}`;
});

describe('the signingAlg field', () => {
  it('defaults to RS256, takes RS256, ES256 or EdDSA, and refuses anything else naming body.signingAlg, changing nothing', async () => {
    const created = await t.admin('POST', '/api/admin/applications', { id: 'plain', name: 'Plain', audience: 'urn:plain', redirectUris: ['https://plain.example.com/cb'] });
    expect(created.json().signingAlg).toBe('RS256');
    for (const bad of ['HS256', 'none', 'rs256', 'ES384', 'Ed25519', '', null, 7]) {
      expectValidation(await t.admin('PATCH', '/api/admin/applications/plain', { signingAlg: bad }), ['body.signingAlg']);
      expectValidation(
        await t.admin('POST', '/api/admin/applications', { id: 'other', name: 'Other', audience: 'urn:other', redirectUris: ['https://other.example.com/cb'], signingAlg: bad }),
        ['body.signingAlg'],
      );
    }
    expect((await t.admin('GET', '/api/admin/applications/plain')).json().signingAlg).toBe('RS256');
    expect((await t.admin('GET', '/api/admin/applications/other')).statusCode).toBe(404);
    const patched = await t.admin('PATCH', '/api/admin/applications/plain', { signingAlg: 'ES256' });
    expect([patched.statusCode, patched.json().signingAlg]).toEqual([200, 'ES256']);
    const listed = (await t.admin('GET', '/api/admin/applications')).json().applications as { id: string; signingAlg: string }[];
    // Created at the same (fixed) moment: in id order.
    expect(listed.map((a) => [a.id, a.signingAlg])).toEqual([['ed-app', 'EdDSA'], ['es-app', 'ES256'], ['plain', 'ES256'], ['rs-app', 'RS256']]);
    const audit = await many(t.db.select({ details: auditLog.details }).from(auditLog).where(eq(auditLog.action, 'application.updated')));
    expect(audit.map((a) => a.details)).toEqual([{ fields: ['signingAlg'] }]);
    expect((await t.admin('DELETE', '/api/admin/applications/plain')).statusCode).toBe(204);
  });

  it("may be changed by the application's API key with application:write (it decides how tokens are signed, not who gets them)", async () => {
    const key = await t.admin('POST', `/api/admin/applications/${APP.EdDSA}/api-keys`, { name: 'deploy', scopes: ['application:write'] });
    expect(key.statusCode).toBe(201);
    const headers = { authorization: `Bearer ${key.json().key}` };
    const changed = await t.admin('PATCH', `/api/admin/applications/${APP.EdDSA}`, { signingAlg: 'ES256' }, headers);
    expect([changed.statusCode, changed.json().signingAlg]).toEqual([200, 'ES256']);
    expect((await t.admin('PATCH', `/api/admin/applications/${APP.EdDSA}`, { signingAlg: 'EdDSA' }, headers)).json().signingAlg).toBe('EdDSA');
    expect((await t.admin('DELETE', `/api/admin/applications/${APP.EdDSA}/api-keys/${key.json().id}`)).statusCode).toBe(204);
  });

  it('is in the OpenAPI document with its three values, on create, update and the record', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
    type AlgSchema = { anyOf: { enum: string[] }[]; description: string };
    const values = (schema: AlgSchema | undefined) => {
      expect(schema?.description).toMatch(/^How this application's ID, access and back-channel logout tokens are signed/);
      return schema!.anyOf.map((s) => s.enum[0]);
    };
    type Schema = { properties: Record<string, AlgSchema>; anyOf?: Schema[] };
    const body = (op: { requestBody: { content: Record<string, { schema: Schema }> } }) => op.requestBody.content['application/json']!.schema;
    // Create takes a plain application or one from a preset: the plain shape (the first) carries signingAlg.
    expect(values(body(doc.paths['/api/admin/applications'].post).anyOf![0]!.properties.signingAlg)).toEqual(['RS256', 'ES256', 'EdDSA']);
    expect(values(body(doc.paths['/api/admin/applications/{id}'].patch).properties.signingAlg)).toEqual(['RS256', 'ES256', 'EdDSA']);
    const record = doc.paths['/api/admin/applications/{id}'].get.responses['200'].content['application/json'].schema;
    expect(values(record.properties.signingAlg)).toEqual(['RS256', 'ES256', 'EdDSA']);
    expect(record.required).toContain('signingAlg');
  });
});

describe("an application's tokens", () => {
  it.each(ALGS)('%s: access, ID and refreshed tokens and client-credentials tokens are signed with its key; jose verifies them naming that algorithm only', async (alg) => {
    const id = APP[alg];
    const set = await jwks();
    const key = set.keys.find((k) => k.alg === alg)!;
    expect(key.kid).toBe((await activeKids())[alg]);
    const local = createLocalJWKSet(set);
    const issuer = t.config.issuer;
    const at = { issuer, audience: audienceOf(id), typ: 'at+jwt', algorithms: [alg], currentDate: t.clock.now() };

    const tokens = await codeFlow(id);
    expect(decodeProtectedHeader(tokens.access_token)).toEqual({ alg, typ: 'at+jwt', kid: key.kid });
    expect(decodeProtectedHeader(tokens.id_token)).toEqual({ alg, typ: 'JWT', kid: key.kid });
    expect((await jwtVerify(tokens.access_token, local, at)).payload).toMatchObject({ azp: id, client_id: id, scope: 'openid email offline_access' });
    const { payload: idClaims } = await jwtVerify(tokens.id_token, local, { issuer, audience: id, algorithms: [alg], currentDate: t.clock.now() });
    expect(idClaims.email).toBe('ada@example.com');
    // Named for another algorithm, the same token is refused by the verifier itself.
    const other = ALGS.find((a) => a !== alg)!;
    await expect(jwtVerify(tokens.access_token, local, { ...at, algorithms: [other] })).rejects.toMatchObject({ code: 'ERR_JOSE_ALG_NOT_ALLOWED' });

    const refreshed = await token(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }, basic(id));
    expect(refreshed.statusCode, refreshed.body).toBe(200);
    expect(decodeProtectedHeader(refreshed.json().access_token)).toEqual({ alg, typ: 'at+jwt', kid: key.kid });
    await jwtVerify(refreshed.json().access_token, local, at);

    const machine = await token(t, { grant_type: 'client_credentials' }, basic(id));
    expect(machine.statusCode, machine.body).toBe(200);
    expect(decodeProtectedHeader(machine.json().access_token)).toEqual({ alg, typ: 'at+jwt', kid: key.kid });
    expect((await jwtVerify(machine.json().access_token, local, at)).payload.sub).toBe(id);

    // Gatehouse's own checks accept it: the one check other features use (the admin API's panel
    // tokens, forward auth: ctx.readAccessToken), userinfo and introspection.
    expect(await t.app.ctx.readAccessToken(refreshed.json().access_token)).toMatchObject({ client_id: id, sub: idClaims.sub });
    expect(await t.app.ctx.readAccessToken(machine.json().access_token)).toMatchObject({ client_id: id, sub: id });
    const info = await userinfo(refreshed.json().access_token);
    expect([info.statusCode, info.json().email]).toEqual([200, 'ada@example.com']);
    const intro = await introspect(id, refreshed.json().access_token);
    expect(intro.json()).toMatchObject({ active: true, client_id: id, token_type: 'Bearer', sub: idClaims.sub });
    expect((await introspect(id, machine.json().access_token)).json()).toMatchObject({ active: true, sub: id });
  });

  it('after a change of algorithm, new tokens use the new one and the tokens issued before still verify, the family going on', async () => {
    const before = await codeFlow(APP.ES256);
    expect((await t.admin('PATCH', `/api/admin/applications/${APP.ES256}`, { signingAlg: 'EdDSA' })).json().signingAlg).toBe('EdDSA');
    try {
      const kids = await activeKids();
      expect(decodeProtectedHeader(before.access_token)).toMatchObject({ alg: 'ES256', kid: kids.ES256 });
      expect((await userinfo(before.access_token)).statusCode).toBe(200);
      expect((await introspect(APP.ES256, before.access_token)).json().active).toBe(true);
      const refreshed = await token(t, { grant_type: 'refresh_token', refresh_token: before.refresh_token }, basic(APP.ES256));
      expect(decodeProtectedHeader(refreshed.json().access_token)).toEqual({ alg: 'EdDSA', typ: 'at+jwt', kid: kids.EdDSA });
      const after = await codeFlow(APP.ES256);
      expect(decodeProtectedHeader(after.id_token)).toEqual({ alg: 'EdDSA', typ: 'JWT', kid: kids.EdDSA });
      const local = createLocalJWKSet(await jwks());
      for (const jwt of [before.access_token, refreshed.json().access_token, after.access_token]) {
        await jwtVerify(jwt, local, { issuer: t.config.issuer, audience: audienceOf(APP.ES256), currentDate: t.clock.now() });
      }
    } finally {
      await t.admin('PATCH', `/api/admin/applications/${APP.ES256}`, { signingAlg: 'ES256' });
    }
  });
});

describe('tokens Gatehouse did not sign as they are', () => {
  const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

  it('are refused by userinfo and introspection: a header alg that is not its key\'s own, HS256 keyed with a public key, none, other algorithms', async () => {
    const ring = new KeyRing(t.app.ctx);
    const kids = await activeKids();
    const now = Math.floor(t.clock.now().getTime() / 1000);
    const claims = (id: string) => ({
      iss: t.config.issuer, sub: 'usr_x', aud: audienceOf(id), azp: id, client_id: id, iat: now, exp: now + 600, jti: `forged-${Math.random()}`,
    });
    /** A token over `header` signed by Gatehouse's own private key of `keyAlg` (as an attacker never could: the strongest case). */
    const signedBy = async (keyAlg: Alg, header: Record<string, string>, id: string) => {
      const { key } = await ring.signingKey(keyAlg);
      const input = `${b64(header)}.${b64(claims(id))}`;
      const signature = sign(keyAlg === 'EdDSA' ? null : 'sha256', Buffer.from(input), (keyAlg === 'ES256' ? { key, dsaEncoding: 'ieee-p1363' } : key) as KeyObject);
      return `${input}.${signature.toString('base64url')}`;
    };
    const hmac = (header: Record<string, string>, secret: string | Buffer, id: string) => {
      const input = `${b64(header)}.${b64(claims(id))}`;
      return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
    };
    const set = await jwks();
    const publicJwk = (alg: Alg) => set.keys.find((k) => k.alg === alg)!;
    const { createPublicKey } = await import('node:crypto');
    const publicPem = createPublicKey({ key: publicJwk('RS256') as never, format: 'jwk' }).export({ type: 'spki', format: 'pem' });

    // The control: Gatehouse's ES256 key under its own kid and alg is accepted.
    const genuine = await signedBy('ES256', { alg: 'ES256', typ: 'at+jwt', kid: kids.ES256 }, APP.ES256);
    expect((await introspect(APP.ES256, genuine)).json()).toMatchObject({ active: true, sub: 'usr_x' });
    expect(await t.app.ctx.readAccessToken(genuine)).toMatchObject({ sub: 'usr_x' });

    const refused: [string, string, string][] = [
      ['ES256 signature, RS256 key named', APP.ES256, await signedBy('ES256', { alg: 'ES256', typ: 'at+jwt', kid: kids.RS256 }, APP.ES256)],
      ['EdDSA signature, ES256 key named', APP.EdDSA, await signedBy('EdDSA', { alg: 'EdDSA', typ: 'at+jwt', kid: kids.ES256 }, APP.EdDSA)],
      ['RS256 signature, EdDSA key named', APP.RS256, await signedBy('RS256', { alg: 'RS256', typ: 'at+jwt', kid: kids.EdDSA }, APP.RS256)],
      ['the ES256 key with alg ES384', APP.ES256, await signedBy('ES256', { alg: 'ES384', typ: 'at+jwt', kid: kids.ES256 }, APP.ES256)],
      ['the RS256 key with alg PS256', APP.RS256, await signedBy('RS256', { alg: 'PS256', typ: 'at+jwt', kid: kids.RS256 }, APP.RS256)],
      ['HS256 keyed with the RS256 public key (PEM)', APP.RS256, hmac({ alg: 'HS256', typ: 'at+jwt', kid: kids.RS256 }, publicPem as string, APP.RS256)],
      ['HS256 keyed with the ES256 public JWK', APP.ES256, hmac({ alg: 'HS256', typ: 'at+jwt', kid: kids.ES256 }, JSON.stringify(publicJwk('ES256')), APP.ES256)],
      ['HS256 keyed with the EdDSA public key bytes', APP.EdDSA, hmac({ alg: 'HS256', typ: 'at+jwt', kid: kids.EdDSA }, Buffer.from(publicJwk('EdDSA').x!, 'base64url'), APP.EdDSA)],
      ['alg none, no signature', APP.RS256, `${b64({ alg: 'none', typ: 'at+jwt', kid: kids.RS256 })}.${b64(claims(APP.RS256))}.`],
      ['alg none, no kid', APP.ES256, `${b64({ alg: 'none', typ: 'at+jwt' })}.${b64(claims(APP.ES256))}.`],
      ['a signature of the wrong length', APP.ES256, `${genuine.slice(0, genuine.lastIndexOf('.'))}.${Buffer.alloc(72, 1).toString('base64url')}`],
    ];
    for (const [what, id, forged] of refused) {
      const info = await userinfo(forged);
      expect([what, info.statusCode, info.json().error]).toEqual([what, 401, 'invalid_token']);
      expect(info.headers['www-authenticate']).toBe(`Bearer realm="gatehouse", error="invalid_token", error_description="The access token is invalid or expired."`);
      expect([what, (await introspect(id, forged)).body]).toEqual([what, '{"active":false}']);
      expect([what, await t.app.ctx.readAccessToken(forged)]).toEqual([what, undefined]);
    }
  });
});

describe('rotation of every algorithm', () => {
  it("publishes every new key first; each application's tokens switch to its algorithm's new key after the JWKS cache lifetime, and all verify with the set fetched at rotation", async () => {
    const before = await activeKids();
    const issued = Object.fromEntries(await Promise.all(ALGS.map(async (alg) => [alg, await codeFlow(APP[alg])]))) as Record<Alg, Tokens>;
    const rotated = await t.admin('POST', '/api/admin/keys/rotate');
    expect(rotated.statusCode).toBe(201);
    const next = Object.fromEntries((rotated.json().keys as { kid: string; alg: Alg }[]).map((k) => [k.alg, k.kid])) as Record<Alg, string>;
    // A verifier that fetched the key set right after the rotation (and caches it for up to a minute).
    const cached = createLocalJWKSet(await jwks());
    for (const alg of ALGS) {
      const during = await codeFlow(APP[alg]);
      expect(decodeProtectedHeader(during.access_token).kid).toBe(before[alg]);
    }
    t.clock.advance(KEY_ACTIVATION_DELAY_MS);
    expect(await activeKids()).toEqual(next);
    for (const alg of ALGS) {
      const after = await codeFlow(APP[alg]);
      expect(decodeProtectedHeader(after.access_token)).toEqual({ alg, typ: 'at+jwt', kid: next[alg] });
      expect(decodeProtectedHeader(after.id_token)).toEqual({ alg, typ: 'JWT', kid: next[alg] });
      const options = { issuer: t.config.issuer, audience: audienceOf(APP[alg]), algorithms: [alg], currentDate: t.clock.now() };
      await jwtVerify(after.access_token, cached, options);
      await jwtVerify(issued[alg].access_token, cached, options);
      // And Gatehouse still takes the tokens the old keys signed.
      expect((await userinfo(issued[alg].access_token)).statusCode).toBe(200);
      expect((await userinfo(after.access_token)).statusCode).toBe(200);
    }
  });
});

describe('keys of a store', () => {
  it('made on upgrade: a store holding only an RS256 key gets an ES256 and an EdDSA key, the RS256 key going on', async () => {
    const u = await makeApp({ clock: new Date('2026-03-01T10:00:00Z') });
    const first = (await u.admin('GET', '/api/admin/keys')).json().keys as { kid: string; alg: string }[];
    const rsKid = first.find((k) => k.alg === 'RS256')!.kid;
    // As a store from before issue 38: its one key is RS256.
    await exec(u.db.delete(signingKeys).where(eq(signingKeys.alg, 'ES256')));
    await exec(u.db.delete(signingKeys).where(eq(signingKeys.alg, 'EdDSA')));
    u.clock.advance(3_600_000);
    const upgraded = await makeInstance(u);
    const keys = (await upgraded.admin('GET', '/api/admin/keys')).json().keys as { kid: string; alg: string; status: string; createdAt: string }[];
    expect(keys.map((k) => [k.alg, k.status, k.createdAt])).toEqual([
      ['RS256', 'active', '2026-03-01T10:00:00.000Z'],
      ['ES256', 'active', '2026-03-01T11:00:00.000Z'],
      ['EdDSA', 'active', '2026-03-01T11:00:00.000Z'],
    ]);
    expect(keys[0]!.kid).toBe(rsKid);
    expect(((await upgraded.app.inject({ method: 'GET', url: '/api/auth/jwks' })).json().keys as { alg: string }[]).map((k) => k.alg)).toEqual(['RS256', 'ES256', 'EdDSA']);
  });

  it('keeps the private keys sealed under GATEHOUSE_KEY_SECRET in PostgreSQL mode, as PEM in SQLite mode', async () => {
    const rows = await many(t.db.select({ alg: signingKeys.alg, pem: signingKeys.privateKeyPem }).from(signingKeys));
    expect(new Set(rows.map((r) => r.alg))).toEqual(new Set(ALGS));
    for (const row of rows) {
      if (engineOf(t.db) === 'postgres') expect(row.pem).toMatch(/^gks1\.[\w-]+\.[\w-]+\.[\w-]+\.[\w-]+$/);
      else expect(row.pem).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
    }
  });
});
