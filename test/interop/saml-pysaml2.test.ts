/**
 * Gatehouse's SAML identity provider with a second real service provider (issue 42, item 7):
 * Debian's pysaml2 (python3-pysaml2, which verifies signatures with xmlsec1), run as
 * /usr/bin/python3 from test/interop/fixtures/pysaml2_sp.py, its configuration and keys in a
 * temporary directory. Its own metadata is imported through the admin API; it reads Gatehouse's.
 * pysaml2 makes the signed AuthnRequests and logout messages and checks our Responses as an SP
 * does: both signatures, issuer, destination, audience, recipient, InResponseTo, time conditions.
 * Single logout both ways: pysaml2's LogoutRequest ends the Gatehouse session and gets our signed
 * LogoutResponse; the account page's sign-out sends pysaml2 our signed LogoutRequest.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminJsonOf, signInCookie, signUpCookie, startOAuthServer, type OAuthServer } from '../helpers/oauth-server.js';
import { newKeyMaterial } from '../../server/saml/keys.js';

const PYTHON = '/usr/bin/python3';
const SP = 'https://wiki.example.com/saml2';
const BASE = 'https://wiki.example.com/saml2';

let server: OAuthServer;
let dir: string;
let python: ChildProcessWithoutNullStreams;
let answers: AsyncIterator<string>;

/** One command to the SP, its answer (a refusal is `{ ok: false, error }`). */
async function sp<T = Record<string, unknown>>(cmd: string, args: Record<string, unknown> = {}): Promise<T & { ok: boolean; error?: string }> {
  python.stdin.write(`${JSON.stringify({ cmd, ...args })}\n`);
  const line = await answers.next();
  if (line.done) throw new Error('pysaml2 exited');
  return JSON.parse(line.value) as T & { ok: boolean; error?: string };
}

beforeAll(async () => {
  server = await startOAuthServer();
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-pysaml2-'));
  const material = await newKeyMaterial(BASE, new Date());
  writeFileSync(join(dir, 'sp.key'), material.privateKeyPem, { mode: 0o600 });
  writeFileSync(join(dir, 'sp.crt'), material.certificatePem);
  await adminJsonOf(server, 'POST', '/api/admin/applications', {
    id: 'wiki', name: 'Wiki', audience: 'https://wiki.example.com/', redirectUris: ['https://wiki.example.com/'], authPolicy: { signup_policy: 'open' },
  });
  writeFileSync(join(dir, 'idp.xml'), await (await fetch(`${server.url}/saml/metadata`)).text());
  python = spawn(PYTHON, [join(import.meta.dirname, 'fixtures', 'pysaml2_sp.py')], { cwd: dir, env: { PATH: process.env.PATH ?? '' } });
  python.stderr.on('data', (chunk: Buffer) => process.stderr.write(chunk));
  answers = createInterface({ input: python.stdout })[Symbol.asyncIterator]();
  expect(await sp('init', { entityid: SP, base: BASE, key: join(dir, 'sp.key'), cert: join(dir, 'sp.crt'), idp_metadata: join(dir, 'idp.xml') })).toEqual({ ok: true });
  // pysaml2's own metadata, imported: its ACS, SLO and certificate; it signs, so Gatehouse requires it.
  const { xml } = await sp<{ xml: string }>('metadata');
  const imported = await adminJsonOf<{ saml: Record<string, unknown> & { spCertificates: string[] } }>(server, 'POST', '/api/admin/applications/wiki/saml/metadata', { xml });
  expect(imported.saml).toMatchObject({
    entityId: SP, acs: [{ url: `${BASE}/acs`, binding: 'HTTP-POST', index: 1 }], slo: { url: `${BASE}/slo`, binding: 'HTTP-Redirect' },
  });
  expect(imported.saml.spCertificates).toHaveLength(1);
  await adminJsonOf(server, 'PATCH', '/api/admin/applications/wiki', {
    saml: {
      entityId: SP, acs: imported.saml.acs, slo: imported.saml.slo, spCertificates: imported.saml.spCertificates, wantAuthnRequestsSigned: true,
      attributes: [
        { name: 'mail', source: { type: 'personField', field: 'email' } },
        { name: 'displayName', source: { type: 'personField', field: 'name' } },
        { name: 'eduPersonAffiliation', source: { type: 'constant', value: ['member', 'staff'] } },
      ],
    },
  });
}, 120_000);

afterAll(async () => {
  python?.stdin.end();
  if (python && python.exitCode === null) await new Promise((resolve) => python.once('exit', resolve));
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const manual = async (url: string, cookie: string) => fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {} });

/** The SAMLResponse our auto-posting form carries to pysaml2's ACS. */
async function postedResponse(res: Response): Promise<string> {
  expect(res.status).toBe(200);
  const html = await res.text();
  expect(html).toContain(`action="${BASE}/acs" data-auto-submit`);
  return /name="SAMLResponse" value="([^"]+)"/.exec(html)![1]!;
}

describe('pysaml2 as the service provider', () => {
  let cookie: string;
  let nameId: string;

  it('accepts our Response to its signed AuthnRequest after its own signature and condition checks', async () => {
    cookie = await signUpCookie(server, 'ada@example.com', 'wiki');
    const login = await sp<{ url: string; request_id: string }>('login', { relay_state: '/page' });
    expect(login.url.startsWith(`${server.url}/saml/sso?SAMLRequest=`)).toBe(true);
    expect(new URL(login.url).searchParams.get('SigAlg')).toBe('http://www.w3.org/2001/04/xmldsig-more#rsa-sha256');
    const saml = await postedResponse(await manual(login.url, cookie));
    const accepted = await sp<{ name_id: string; name_id_format: string; session_index: string; attributes: Record<string, string[]>; issuer: string; in_response_to: string }>('acs', { SAMLResponse: saml });
    expect(accepted.error).toBeUndefined();
    expect(accepted).toMatchObject({
      ok: true, issuer: `${server.url}/saml`, in_response_to: login.request_id, name_id_format: 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent',
      attributes: { mail: ['ada@example.com'], displayName: ['Ada Lovelace'], eduPersonAffiliation: ['member', 'staff'] },
    });
    expect(accepted.session_index).toMatch(/^_/);
    nameId = accepted.name_id;

    // The same Response again: pysaml2 refuses it (the request it answered is no longer outstanding).
    expect((await sp('acs', { SAMLResponse: saml })).ok).toBe(false);
    // A Response changed after signing: pysaml2 (xmlsec1) refuses the signature.
    const next = await sp<{ url: string }>('login');
    const fresh = Buffer.from(await postedResponse(await manual(next.url, cookie)), 'base64').toString();
    const tampered = Buffer.from(fresh.replace('ada@example.com', 'eve@example.com')).toString('base64');
    const refused = await sp('acs', { SAMLResponse: tampered });
    expect(refused.ok).toBe(false);
    expect(refused.error).toMatch(/[Ss]ignature/);
  });

  it('SP-initiated single logout: its LogoutRequest ends the Gatehouse session, our signed LogoutResponse satisfies it', async () => {
    // A fresh sign-on to log out of.
    const login = await sp<{ url: string }>('login');
    expect((await sp('acs', { SAMLResponse: await postedResponse(await manual(login.url, cookie)) })).ok).toBe(true);
    const out = await sp<{ url: string }>('logout');
    expect(out.url.startsWith(`${server.url}/saml/slo?SAMLRequest=`)).toBe(true);
    const answered = await manual(out.url, cookie);
    expect(answered.status).toBe(302);
    const back = new URL(answered.headers.get('location')!);
    expect(`${back.origin}${back.pathname}`).toBe(`${BASE}/slo`);
    const done = await sp<{ status: string; logged_in: boolean }>('slo_response', { query: back.search.slice(1) });
    expect(done).toMatchObject({ ok: true, status: 'urn:oasis:names:tc:SAML:2.0:status:Success', logged_in: false });
    expect((await manual(`${server.url}/api/me/memberships`, cookie)).status).toBe(401);
  });

  it('IdP-initiated single logout from the account page: pysaml2 verifies our LogoutRequest and answers it signed', async () => {
    cookie = await signInCookie(server, 'ada@example.com', 'wiki');
    const login = await sp<{ url: string; }>('login');
    const accepted = await sp<{ name_id: string }>('acs', { SAMLResponse: await postedResponse(await manual(login.url, cookie)) });
    expect(accepted.name_id).toBe(nameId);
    const page = await manual(`${server.url}/account`, cookie);
    const html = await page.text();
    const csrf = /action="\/account\/sign-out">\s*<input type="hidden" name="csrf_token" value="([^"]+)"/.exec(html)![1]!;
    const csrfCookie = page.headers.getSetCookie().find((c) => c.startsWith('gatehouse_csrf='))!.split(';')[0]!;
    const out = await fetch(`${server.url}/account/sign-out`, {
      method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `${cookie}; ${csrfCookie}` },
      body: new URLSearchParams({ csrf_token: csrf }).toString(),
    });
    const toSp = new URL(out.headers.get('location')!);
    expect(`${toSp.origin}${toSp.pathname}`).toBe(`${BASE}/slo`);
    const reply = await sp<{ url: string; logged_in: boolean }>('slo_request', { query: toSp.search.slice(1) });
    expect(reply).toMatchObject({ ok: true, logged_in: false });
    expect(reply.url.startsWith(`${server.url}/saml/slo?SAMLResponse=`)).toBe(true);
    const finished = await manual(reply.url, '');
    expect(finished.status).toBe(303);
    expect(finished.headers.get('location')).toBe('/account?notice=signed_out');
  });
});
