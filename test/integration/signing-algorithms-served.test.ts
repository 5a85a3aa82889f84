/**
 * Signing algorithms on a real server (issue 38), as relying parties meet them: openid-client
 * signs in with the client's `id_token_signed_response_alg` and checks the ID token's signature
 * against the JWKS (non-repudiation checks), oauth4webapi validates the access token as a resource
 * server would (RFC 9068, naming the one algorithm), a back-channel logout token arrives in the
 * application's algorithm, and a verifier caching the JWKS (jose's createRemoteJWKSet: 30 s
 * between fetches) keeps accepting every algorithm's tokens across a rotation. Then the keys'
 * life on disk: an encrypted backup carries every algorithm's key into a restored data directory,
 * and a data directory from before issue 38 is upgraded (its applications keep RS256, its RS256
 * key goes on, ES256 and EdDSA keys are made). SQLite data directories: these run in the unit
 * project only; the PostgreSQL counterparts are in signing-algorithms.test.ts.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { generateKeyPairSync } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as client from 'openid-client';
import * as oauth from 'oauth4webapi';
import { createLocalJWKSet, createRemoteJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { createClient, follow, PASSWORD, pkcePair, signUpCookie, startOAuthServer, type OAuthServer } from '../helpers/oauth-server.js';
import { eventually, startReceiver, type Receiver } from '../helpers/webhook-receiver.js';
import { ensureBuilt, runCli } from '../helpers/cli.js';
import { OPS_ADMIN_TOKEN, startServer, tempDataDir } from '../helpers/data-dir.js';
import { migrationsFolder } from '../../server/db/client.js';

const ALGS = ['RS256', 'ES256', 'EdDSA'] as const;
type Alg = (typeof ALGS)[number];
const REDIRECT = 'http://127.0.0.1:5173/callback';
const PASS = 'correct horse battery staple';
const DAY = 86_400_000;

let server: OAuthServer;
let receiver: Receiver;

beforeAll(async () => {
  server = await startOAuthServer({
    GATEHOUSE_WEBHOOK_TIMEOUT_MS: '2000',
    GATEHOUSE_WEBHOOK_POLL_MS: '100',
    // The logout receiver listens on 127.0.0.1, as one on the appliance itself would.
    GATEHOUSE_WEBHOOK_ALLOW_LOOPBACK: '1',
  });
  receiver = await startReceiver();
}, 240_000);

afterAll(async () => {
  await receiver?.close();
  await server?.stop();
});

const idOf = (alg: Alg) => `rp-${alg.toLowerCase()}`;
const jwks = async (url = server.url) => (await (await fetch(`${url}/api/auth/jwks`)).json()) as JSONWebKeySet;

/** openid-client signed in to the application of `alg`, expecting ID tokens in `expected`. */
async function signIn(alg: Alg, expected: Alg, cookie: string) {
  const id = idOf(alg);
  const config = await client.discovery(new URL(server.url), id, { id_token_signed_response_alg: expected }, client.None(), {
    execute: [client.allowInsecureRequests, client.enableNonRepudiationChecks],
  });
  const verifier = client.randomPKCECodeVerifier();
  const nonce = client.randomNonce();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT, scope: 'openid email', code_challenge: await client.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', nonce,
  });
  const hop = await follow(url, cookie);
  return { config, tokens: await client.authorizationCodeGrant(config, hop.location!, { pkceCodeVerifier: verifier, expectedNonce: nonce, idTokenExpected: true }) };
}

describe('relying parties', () => {
  const cookies = new Map<Alg, string>();

  beforeAll(async () => {
    for (const alg of ALGS) {
      const id = idOf(alg);
      await createClient(server, {
        id, name: id, audience: `https://${id}.example.com/api`, clientType: 'spa', redirectUris: [REDIRECT], signingAlg: alg,
        backchannelLogoutUri: `http://127.0.0.1:${receiver.port}/logout/${id}`,
      });
      cookies.set(alg, await signUpCookie(server, `${id}@example.com`, id));
    }
  });

  it.each(ALGS)('%s: openid-client checks the ID token signature with id_token_signed_response_alg, oauth4webapi the access token', async (alg) => {
    const { config, tokens } = await signIn(alg, alg, cookies.get(alg)!);
    const kid = (await jwks()).keys.find((k) => k.alg === alg)!.kid;
    expect(decodeProtectedHeader(tokens.id_token!)).toEqual({ alg, typ: 'JWT', kid });
    expect(tokens.claims()).toMatchObject({ aud: idOf(alg), email: `${idOf(alg)}@example.com` });

    const as = config.serverMetadata();
    const request = new Request(`https://${idOf(alg)}.example.com/api/notes`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    const claims = await oauth.validateJwtAccessToken(as, request, `https://${idOf(alg)}.example.com/api`, {
      signingAlgorithms: [alg], [oauth.allowInsecureRequests]: true,
    });
    expect(claims).toMatchObject({ iss: server.url, client_id: idOf(alg), scope: 'openid email' });
    const other = ALGS.find((a) => a !== alg)!;
    const again = new Request(request.url, { headers: request.headers });
    await expect(oauth.validateJwtAccessToken(as, again, `https://${idOf(alg)}.example.com/api`, { signingAlgorithms: [other], [oauth.allowInsecureRequests]: true }))
      .rejects.toThrow('unexpected JWT "alg" header parameter');
    // Userinfo answers the access token, whatever its algorithm.
    expect((await client.fetchUserInfo(config, tokens.access_token, tokens.claims()!.sub)).email).toBe(`${idOf(alg)}@example.com`);
  });

  it('a client expecting another algorithm than its application signs with refuses the ID token', async () => {
    for (const [alg, expected] of [['EdDSA', 'ES256'], ['ES256', 'RS256']] as const) {
      const refused = await signIn(alg, expected, cookies.get(alg)!).then(() => undefined, (error: Error & { code?: string; cause?: Error & { cause?: unknown } }) => error);
      expect(refused).toMatchObject({ message: 'invalid response encountered', code: 'OAUTH_INVALID_RESPONSE' });
      expect(refused!.cause).toMatchObject({ message: 'unexpected JWT "alg" header parameter', cause: { header: { alg }, expected, reason: 'client configuration' } });
    }
  });

  it.each(ALGS)('%s: the back-channel logout token is signed with the application\'s algorithm', async (alg) => {
    const id = idOf(alg);
    const cookie = cookies.get(alg)!;
    const { tokens } = await signIn(alg, alg, cookie);
    const out = await fetch(`${server.url}/api/auth/sign-out`, { method: 'POST', headers: { cookie, 'content-type': 'application/json' } });
    expect(out.status).toBe(204);
    const request = await eventually(() => receiver.received.find((r) => r.path === `/logout/${id}`));
    const logoutToken = new URLSearchParams(request.body).get('logout_token')!;
    const { payload, protectedHeader } = await jwtVerify(logoutToken, createRemoteJWKSet(new URL(`${server.url}/api/auth/jwks`)), {
      issuer: server.url, audience: id, typ: 'logout+jwt', algorithms: [alg], maxTokenAge: '2 minutes',
    });
    expect(protectedHeader).toEqual({ alg, typ: 'logout+jwt', kid: (await jwks()).keys.find((k) => k.alg === alg)!.kid });
    expect(payload.sid).toBe(tokens.claims()!.sid);
    cookies.set(alg, await signInAgain(id));
  });

  /** A fresh session for the application (the previous one was signed out). */
  async function signInAgain(id: string): Promise<string> {
    const res = await fetch(`${server.url}/api/auth/sign-in/email`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: `${id}@example.com`, password: PASSWORD, applicationId: id }),
    });
    expect(res.status).toBe(200);
    return res.headers.getSetCookie().find((c) => c.startsWith('gatehouse_session='))!.split(';')[0]!;
  }

  it("a verifier caching the JWKS (jose's createRemoteJWKSet) accepts every algorithm's tokens issued right after a rotation", async () => {
    const remote = createRemoteJWKSet(new URL(`${server.url}/api/auth/jwks`));
    const verify = (alg: Alg, token: string) => jwtVerify(token, remote, { issuer: server.url, audience: `https://${idOf(alg)}.example.com/api`, algorithms: [alg] });
    const before = new Map<Alg, string>();
    for (const alg of ALGS) {
      const { tokens } = await signIn(alg, alg, cookies.get(alg)!);
      before.set(alg, (await verify(alg, tokens.access_token)).protectedHeader.kid!); // the verifier has fetched and cached the key set
    }
    const rotated = await server.admin('POST', '/api/admin/keys/rotate');
    expect(rotated.status).toBe(201);
    expect(((await rotated.json()) as { keys: { alg: string }[] }).keys.map((k) => k.alg)).toEqual([...ALGS]);
    // jose waits 30 s before it fetches again; a token signed by a new key now would be refused.
    for (const alg of ALGS) {
      const { tokens } = await signIn(alg, alg, cookies.get(alg)!);
      expect((await verify(alg, tokens.access_token)).protectedHeader).toEqual({ alg, typ: 'at+jwt', kid: before.get(alg) });
    }
  });
});

describe('keys on disk', () => {
  beforeAll(() => ensureBuilt(), 240_000);

  /** Tokens of an application per algorithm on a running server: its access tokens by algorithm. */
  async function tokensOf(url: string, alg: Alg, cookie: string): Promise<string> {
    const id = idOf(alg);
    const { verifier, challenge } = pkcePair();
    const authorized = await follow(
      `${url}/api/auth/oauth2/authorize?${new URLSearchParams({ response_type: 'code', client_id: id, redirect_uri: REDIRECT, scope: 'openid', state: 's', code_challenge: challenge, code_challenge_method: 'S256' })}`,
      cookie,
    );
    const code = authorized.location!.searchParams.get('code')!;
    const res = await fetch(`${url}/api/auth/oauth2/token`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: id, code_verifier: verifier }),
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { access_token: string }).access_token;
  }

  const admin = (url: string, method: string, path: string, body?: unknown) =>
    fetch(`${url}${path}`, { method, headers: { authorization: `Bearer ${OPS_ADMIN_TOKEN}`, 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });

  it('an encrypted backup carries every algorithm\'s key: the restored server publishes and signs with the same keys', async () => {
    const dataDir = tempDataDir();
    const issuer = 'http://gatehouse.test';
    const first = await startServer(dataDir, { GATEHOUSE_ISSUER: issuer });
    const cookies = new Map<Alg, string>();
    for (const alg of ALGS) {
      const id = idOf(alg);
      const created = await admin(first.url, 'POST', '/api/admin/applications', {
        id, name: id, audience: `https://${id}.example.com/api`, clientType: 'spa', redirectUris: [REDIRECT], signingAlg: alg, authPolicy: { signup_policy: 'open' },
      });
      expect(created.status).toBe(201);
      const res = await fetch(`${first.url}/api/auth/sign-up/email`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: `${id}@example.com`, password: PASS, applicationId: id }),
      });
      expect(res.status).toBe(201);
      cookies.set(alg, res.headers.getSetCookie().find((c) => c.startsWith('gatehouse_session='))!.split(';')[0]!);
    }
    const original = await jwks(first.url);
    const issued = new Map<Alg, string>();
    for (const alg of ALGS) issued.set(alg, await tokensOf(first.url, alg, cookies.get(alg)!));

    const file = join(dataDir, 'keys.gatehouse-backup');
    const backup = await runCli(['backup', '--data-dir', dataDir, '--out', file, '--passphrase-env', 'GH_PASS'], { GH_PASS: PASS });
    expect(backup.code, backup.stderr).toBe(0);
    expect(readFileSync(file).includes(Buffer.from('PRIVATE KEY'))).toBe(false);
    await first.stop();

    const target = tempDataDir();
    const restored = await runCli(['restore', file, '--data-dir', target, '--passphrase-env', 'GH_PASS'], { GH_PASS: PASS });
    expect(restored.code, restored.stderr).toBe(0);
    const second = await startServer(target, { GATEHOUSE_ISSUER: issuer });
    expect(await jwks(second.url)).toEqual(original);
    const originalSet = createLocalJWKSet(original);
    for (const alg of ALGS) {
      // The tokens issued before the backup are taken by the restored server…
      const info = await fetch(`${second.url}/api/auth/oauth2/userinfo`, { headers: { authorization: `Bearer ${issued.get(alg)}` } });
      expect([alg, info.status]).toEqual([alg, 200]);
      // …and its new tokens are signed by the same private keys: the key set from before the backup verifies them.
      const fresh = await tokensOf(second.url, alg, cookies.get(alg)!);
      const { protectedHeader } = await jwtVerify(fresh, originalSet, { issuer, algorithms: [alg] });
      expect(protectedHeader.kid).toBe(original.keys.find((k) => k.alg === alg)!.kid);
    }
  });

  it('a data directory from before signing algorithms: applications keep RS256, the RS256 key goes on, ES256 and EdDSA keys are made', async () => {
    const dataDir = tempDataDir();
    let created = 0;
    // The migrations up to the one that added `applications.signing_alg`, and the store as they left it.
    const folder = mkdtempSync(join(tmpdir(), 'gatehouse-old-migrations-'));
    try {
      cpSync(migrationsFolder(), folder, { recursive: true });
      const journalFile = join(folder, 'meta', '_journal.json');
      const journal = JSON.parse(readFileSync(journalFile, 'utf8')) as { entries: { tag: string }[] };
      const at = journal.entries.findIndex((e) => e.tag.endsWith('_application_signing_alg'));
      expect(at).toBeGreaterThan(0);
      journal.entries = journal.entries.slice(0, at);
      writeFileSync(journalFile, JSON.stringify(journal));
      const sqlite = new Database(join(dataDir, 'gatehouse.db'));
      migrate(drizzle(sqlite), { migrationsFolder: folder });
      expect((sqlite.prepare('SELECT name FROM pragma_table_info(?)').all('applications') as { name: string }[]).map((c) => c.name)).not.toContain('signing_alg');
      const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
      const jwk = { ...publicKey.export({ format: 'jwk' }), kid: 'kid_old_rs256', alg: 'RS256', use: 'sig' };
      // Ten days old: the schedule (90 days) counts from it.
      created = Math.floor(Date.now() / 1000) * 1000 - 10 * DAY;
      sqlite.prepare('INSERT INTO signing_keys (kid, alg, public_jwk, private_key_pem, created_at) VALUES (?, ?, ?, ?, ?)')
        .run('kid_old_rs256', 'RS256', JSON.stringify(jwk), privateKey.export({ type: 'pkcs8', format: 'pem' }), created);
      sqlite.prepare(`INSERT INTO applications (id, name, audience, redirect_uris, client_type, auth_policy, created_at, updated_at)
                      VALUES ('legacy', 'Legacy', 'https://legacy.example.com/api', ?, 'spa', ?, ?, ?)`)
        .run(JSON.stringify([REDIRECT]), JSON.stringify({ signup_policy: 'open', allowed_providers: ['email'], profile_fields: [] }), created, created);
      sqlite.close();
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }

    const upgraded = await startServer(dataDir);
    expect(((await (await admin(upgraded.url, 'GET', '/api/admin/applications/legacy')).json()) as { signingAlg: string }).signingAlg).toBe('RS256');
    const keys = ((await (await admin(upgraded.url, 'GET', '/api/admin/keys')).json()) as { keys: { kid: string; alg: string; status: string; createdAt: string }[] }).keys;
    expect(keys.map((k) => [k.alg, k.status])).toEqual([['RS256', 'active'], ['ES256', 'active'], ['EdDSA', 'active']]);
    expect([keys[0]!.kid, keys[0]!.createdAt]).toEqual(['kid_old_rs256', new Date(created).toISOString()]);
    const cookie = await (async () => {
      const res = await fetch(`${upgraded.url}/api/auth/sign-up/email`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'old@example.com', password: PASS, applicationId: 'legacy' }),
      });
      expect(res.status).toBe(201);
      return res.headers.getSetCookie().find((c) => c.startsWith('gatehouse_session='))!.split(';')[0]!;
    })();
    const { verifier, challenge } = pkcePair();
    const hop = await follow(
      `${upgraded.url}/api/auth/oauth2/authorize?${new URLSearchParams({ response_type: 'code', client_id: 'legacy', redirect_uri: REDIRECT, scope: 'openid', state: 's', code_challenge: challenge, code_challenge_method: 'S256' })}`,
      cookie,
    );
    const res = await fetch(`${upgraded.url}/api/auth/oauth2/token`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: hop.location!.searchParams.get('code')!, redirect_uri: REDIRECT, client_id: 'legacy', code_verifier: verifier }),
    });
    const idToken = ((await res.json()) as { id_token: string }).id_token;
    expect(decodeProtectedHeader(idToken)).toEqual({ alg: 'RS256', typ: 'JWT', kid: 'kid_old_rs256' });
    // The next scheduled rotation counts from the old RS256 key, not from the keys the upgrade made.
    const schedule = (await (await admin(upgraded.url, 'GET', '/api/admin/keys/schedule')).json()) as { activeKid: string; nextRotationAt: string };
    expect(schedule).toMatchObject({ activeKid: 'kid_old_rs256', nextRotationAt: new Date(created + 90 * DAY).toISOString() });
  });
});
