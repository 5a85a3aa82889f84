/**
 * Gatehouse's tokens as a Python back end reads them (issue 38): Debian's PyJWT (python3-jwt, with
 * python3-cryptography for the EC and Ed25519 keys), run as /usr/bin/python3, fetches the JWKS with
 * its `PyJWKClient`, picks the key by `kid` and decodes access and ID tokens of an application per
 * algorithm — RS256, ES256, EdDSA — naming that one algorithm, the issuer and the audience, as
 * PyJWT's documentation shows. A token decoded naming another algorithm is refused by PyJWT itself.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, follow, pkcePair, signUpCookie, startOAuthServer, type OAuthServer } from '../helpers/oauth-server.js';

const PYTHON = '/usr/bin/python3';
const ALGS = ['RS256', 'ES256', 'EdDSA'] as const;
const REDIRECT = 'http://127.0.0.1:5173/callback';

/** Reads {jwks_uri, issuer, tokens: [{name, token, alg, audience, other}]} on stdin; prints one JSON line per token. */
const SCRIPT = `
import json, sys
import jwt
request = json.load(sys.stdin)
keys = jwt.PyJWKClient(request["jwks_uri"])
for t in request["tokens"]:
    result = {"name": t["name"], "pyjwt": jwt.__version__}
    try:
        signing_key = keys.get_signing_key_from_jwt(t["token"])
        claims = jwt.decode(t["token"], signing_key.key, algorithms=[t["alg"]], audience=t["audience"], issuer=request["issuer"])
        result["sub"] = claims["sub"]
        result["kid"] = signing_key.key_id
        result["key_type"] = type(signing_key.key).__name__
    except Exception as error:
        result["error"] = type(error).__name__
    try:
        jwt.decode(t["token"], signing_key.key, algorithms=[t["other"]], audience=t["audience"], issuer=request["issuer"])
        result["other"] = "accepted"
    except Exception as error:
        result["other"] = type(error).__name__
    print(json.dumps(result))
`;

let server: OAuthServer;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-pyjwt-'));
  writeFileSync(join(dir, 'verify.py'), SCRIPT);
  server = await startOAuthServer();
});

afterAll(async () => {
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** An application of `alg`, a person signed in to it, and its access and ID tokens. */
async function tokensOf(alg: (typeof ALGS)[number]) {
  const id = `py-${alg.toLowerCase()}`;
  await createClient(server, { id, name: id, audience: `https://${id}.example.com/api`, clientType: 'spa', redirectUris: [REDIRECT], signingAlg: alg });
  const cookie = await signUpCookie(server, `${id}@example.com`, id);
  const { verifier, challenge } = pkcePair();
  const query = new URLSearchParams({ response_type: 'code', client_id: id, redirect_uri: REDIRECT, scope: 'openid', state: 's', code_challenge: challenge, code_challenge_method: 'S256' });
  const code = (await follow(`${server.url}/api/auth/oauth2/authorize?${query}`, cookie)).location!.searchParams.get('code')!;
  const res = await fetch(`${server.url}/api/auth/oauth2/token`, {
    method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: id, code_verifier: verifier }),
  });
  expect(res.status).toBe(200);
  const tokens = (await res.json()) as { access_token: string; id_token: string };
  return { id, ...tokens };
}

/** Runs the script with `input` on stdin; resolves when the process it started has exited. */
function python(input: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, ['-I', join(dir, 'verify.py')], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('exit', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
    child.stdin.end(input);
  });
}

describe('PyJWT', () => {
  it('decodes access and ID tokens of every algorithm with the key PyJWKClient picks from the JWKS, and refuses them named as another algorithm', async () => {
    const request = { jwks_uri: `${server.url}/api/auth/jwks`, issuer: server.url, tokens: [] as object[] };
    const subs = new Map<string, string>();
    for (const alg of ALGS) {
      const { id, access_token, id_token } = await tokensOf(alg);
      const other = alg === 'RS256' ? 'ES256' : 'RS256';
      const info = (await (await fetch(`${server.url}/api/auth/oauth2/userinfo`, { headers: { authorization: `Bearer ${access_token}` } })).json()) as { sub: string };
      subs.set(alg, info.sub);
      request.tokens.push(
        { name: `${alg} access`, token: access_token, alg, audience: `https://${id}.example.com/api`, other },
        { name: `${alg} id`, token: id_token, alg, audience: id, other },
      );
    }
    // Asynchronously: the server answering PyJWKClient's fetch runs in this process.
    const run = await python(JSON.stringify(request));
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const results = run.stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, string>);
    const jwks = (await (await fetch(request.jwks_uri)).json()) as { keys: { kid: string; alg: string }[] };
    const keyType = { RS256: 'RSAPublicKey', ES256: 'EllipticCurvePublicKey', EdDSA: 'Ed25519PublicKey' };
    expect(results.map(({ pyjwt, key_type, ...rest }) => [rest, pyjwt, key_type?.replace(/^_/, '')])).toEqual(
      ALGS.flatMap((alg) =>
        ['access', 'id'].map((kind) => [
          { name: `${alg} ${kind}`, sub: subs.get(alg), kid: jwks.keys.find((k) => k.alg === alg)!.kid, other: 'InvalidAlgorithmError' },
          expect.stringMatching(/^2\./),
          expect.stringContaining(keyType[alg]),
        ]),
      ),
    );
  });
});
