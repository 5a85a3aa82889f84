/**
 * Hosted-page hardening from the audit: a `return_to` Node could not write as a header falls back
 * to the account page (item 3, never a 500 after a successful sign-in); `?notice=` names only
 * real notices (item 4); answers to malformed URLs carry the security headers, and a server that
 * speaks TLS adds HSTS to every answer while plain http never does (item 5). Issue 22 review: the
 * hosted sign-up form and invitations take only what the JSON API calls an e-mail address.
 */
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ensureLocalTls } from '../../server/ops/tls.js';
import { PAGE_CSP } from '../../server/pages/render.js';
import { STRICT_CSP } from '../../server/http/security-headers.js';
import { makeApp, type TestApp } from '../helpers/app.js';
import { PASSWORD, createApplication, signUp } from '../helpers/accounts.js';
import { csrfFrom, openPage, postForm } from '../helpers/pages.js';
import { expectProblem } from '../helpers/problem.js';
import { caFetch } from '../helpers/ca-fetch.js';
import { tempDataDir } from '../helpers/data-dir.js';
import { signedUpCookie } from '../helpers/self-service.js';
import { headerRecord } from '../helpers/header-record.js';

const RESUME = '/api/auth/oauth2/authorize?client_id=notes';
/** Each passed the old check; Node refuses the first four in a header, the rest are not printable ASCII. */
const UNWRITABLE = [`${RESUME}&x=Ā`, `${RESUME}&x=\u0001`, `${RESUME}&x=\u007f`, `${RESUME}&x=\u2028`, `${RESUME}&x=ÿ`, `${RESUME}&x=a b`];

async function notesApp(): Promise<TestApp> {
  const t = await makeApp();
  await createApplication(t, { authPolicy: { signup_policy: 'open' } });
  return t;
}

describe('return_to that cannot be a Location header', () => {
  it('POST /sign-in succeeds and answers 303 to /account for each', async () => {
    const t = await notesApp();
    expect((await signUp(t, { email: 'ada@example.com', applicationId: 'notes' })).statusCode).toBe(201);
    for (const returnTo of UNWRITABLE) {
      const page = await openPage(t, '/sign-in?client_id=notes');
      const res = await postForm(t, '/sign-in', {
        csrf_token: csrfFrom(page.res), client_id: 'notes', return_to: returnTo, email: 'ada@example.com', password: PASSWORD,
      }, page.cookie);
      expect({ returnTo, status: res.statusCode, location: res.headers.location }).toEqual({ returnTo, status: 303, location: '/account' });
    }
    // A well-formed one still resumes the authorization request.
    const page = await openPage(t, '/sign-in?client_id=notes');
    const ok = await postForm(t, '/sign-in', { csrf_token: csrfFrom(page.res), client_id: 'notes', return_to: `${RESUME}&state=a%C4%80`, email: 'ada@example.com', password: PASSWORD }, page.cookie);
    expect({ status: ok.statusCode, location: ok.headers.location }).toEqual({ status: 303, location: `${RESUME}&state=a%C4%80` });
  });

  it('POST /sign-up creates the account and answers 303 to /account; the forms carry /account', async () => {
    const t = await notesApp();
    const shown = await openPage(t, `/sign-in?client_id=notes&return_to=${encodeURIComponent(UNWRITABLE[0]!)}`);
    expect(shown.res.statusCode).toBe(200);
    expect(shown.res.body).toContain('name="return_to" value="/account"');
    const page = await openPage(t, '/sign-up?client_id=notes');
    const res = await postForm(t, '/sign-up', {
      csrf_token: csrfFrom(page.res), client_id: 'notes', return_to: UNWRITABLE[0]!, name: 'Ada', email: 'ada@example.com', password: PASSWORD,
    }, page.cookie);
    expect({ status: res.statusCode, location: res.headers.location }).toEqual({ status: 303, location: '/account' });
  });
});

describe('/account?notice=', () => {
  it('shows nothing for names inherited from Object.prototype', async () => {
    const t = await notesApp();
    const cookie = await signedUpCookie(t, 'ada@example.com', 'notes');
    for (const notice of ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf']) {
      for (const headers of [{ cookie }, {}]) {
        const res = await t.app.inject({ method: 'GET', url: `/account?notice=${notice}`, headers });
        expect(res.statusCode).toBe(200);
        expect(res.body).not.toContain('class="notice"');
        expect(res.body).not.toContain('native code');
      }
    }
    const real = await t.app.inject({ method: 'GET', url: '/account?notice=profile_saved', headers: { cookie } });
    expect(real.body).toContain('<p class="notice" role="status">Your profile was saved.</p>');
  });
});

const FIXED = { 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer', 'x-frame-options': 'DENY' };
const securityOf = (headers: Record<string, unknown>) => ({
  'x-content-type-options': headers['x-content-type-options'],
  'referrer-policy': headers['referrer-policy'],
  'x-frame-options': headers['x-frame-options'],
  'content-security-policy': headers['content-security-policy'],
  'strict-transport-security': headers['strict-transport-security'],
});

describe('security headers', () => {
  it('are on answers to malformed URLs (problem+json and the error page)', async () => {
    const t = await makeApp();
    const problem = await t.app.inject({ method: 'GET', url: '/sign-in%zz' });
    expectProblem(problem, 400, 'bad_request');
    expect(securityOf(problem.headers)).toEqual({ ...FIXED, 'content-security-policy': STRICT_CSP, 'strict-transport-security': undefined });

    const page = await t.app.inject({ method: 'GET', url: '/account/%zz' });
    expect({ status: page.statusCode, type: page.headers['content-type'] }).toEqual({ status: 400, type: 'text/html; charset=utf-8' });
    expect(securityOf(page.headers)).toEqual({ ...FIXED, 'content-security-policy': PAGE_CSP, 'strict-transport-security': undefined });
  });

  /** Status, content type and security headers of every kind of answer, fetched with `get`. */
  async function answers(get: (path: string) => Promise<Response>) {
    const seen: Record<string, unknown> = {};
    // JSON, a hosted page, an early answer (discovery, before Fastify), a 404, a malformed URL.
    for (const path of ['/healthz', '/sign-in', '/.well-known/openid-configuration', '/nope', '/sign-in%zz', '/account/%zz']) {
      const res = await get(path);
      await res.arrayBuffer();
      seen[path] = { status: res.status, ...securityOf(headerRecord(res.headers)) };
    }
    return seen;
  }
  const expected = (hsts: string | undefined) => ({
    '/healthz': { status: 200, ...FIXED, 'content-security-policy': STRICT_CSP, 'strict-transport-security': hsts },
    '/sign-in': { status: 200, ...FIXED, 'content-security-policy': PAGE_CSP, 'strict-transport-security': hsts },
    '/.well-known/openid-configuration': { status: 200, ...FIXED, 'content-security-policy': STRICT_CSP, 'strict-transport-security': hsts },
    '/nope': { status: 404, ...FIXED, 'content-security-policy': STRICT_CSP, 'strict-transport-security': hsts },
    '/sign-in%zz': { status: 400, ...FIXED, 'content-security-policy': STRICT_CSP, 'strict-transport-security': hsts },
    '/account/%zz': { status: 400, ...FIXED, 'content-security-policy': PAGE_CSP, 'strict-transport-security': hsts },
  });

  it('under TLS every answer carries Strict-Transport-Security: max-age=31536000', async () => {
    const tls = ensureLocalTls(tempDataDir(), [], new Date());
    const t = await makeApp({ deps: { https: { key: tls.key, cert: tls.cert } } });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = t.app.server.address() as AddressInfo;
    const get = caFetch(tls.caPem!);
    expect(await answers((path) => get(`https://localhost:${port}${path}`))).toEqual(expected('max-age=31536000'));
  });

  it('over plain http no answer carries it', async () => {
    const t = await makeApp();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = t.app.server.address() as AddressInfo;
    expect(await answers((path) => fetch(`http://127.0.0.1:${port}${path}`))).toEqual(expected(undefined));
  });
});

describe('e-mail addresses outside the JSON schema (issue 22 review)', () => {
  // Each has one @ and no space, so the old check took it; a mailer reads a display name or a
  // list in it and sends to someone else than the account names (x<victim@other.example>).
  const MISLEADING = ['x<victim@other.example>', 'a,b@example.com', 'a"b@example.com', 'a;b@example.com', 'a(b)@example.com'];

  it('the hosted sign-up form refuses them like the JSON endpoint, creating nothing', async () => {
    const t = await makeApp({ config: { env: { GATEHOUSE_SIGN_UP_RATE_LIMIT: '100' } } });
    await createApplication(t, { authPolicy: { signup_policy: 'open' } });
    for (const email of MISLEADING) {
      expectProblem(await signUp(t, { email, applicationId: 'notes' }), 400, 'validation_failed');
      const page = await openPage(t, '/sign-up?client_id=notes');
      const res = await postForm(t, '/sign-up', { csrf_token: csrfFrom(page.res), client_id: 'notes', email, password: PASSWORD }, page.cookie);
      expect({ email, status: res.statusCode }).toEqual({ email, status: 400 });
      expect(res.body).toContain('E-mail: must be an e-mail address');
    }
    expect((await signUp(t, { email: 'Ada.Lovelace+notes@Example.com', applicationId: 'notes' })).statusCode).toBe(201);
  });

  it('invitations name each such address', async () => {
    const t = await notesApp();
    const res = await t.admin('POST', '/api/admin/applications/notes/invitations', { emails: ['ok@example.com', ...MISLEADING] });
    const body = expectProblem(res, 400, 'validation_failed');
    expect(body.errors!.map((e) => e.path)).toEqual(MISLEADING.map((_, i) => `body.emails.${i + 1}`));
  });
});
