/**
 * `response_mode=form_post` (OAuth 2.0 Form Post Response Mode; spec claims-and-groups.md) over the
 * wire: the page's exact headers and form, the code it carries exchanged, errors that redirect in
 * that mode (authorize's own, the refused page's way back, a denied consent), and the modes that
 * are refused. The browser side (the form really posting) is test/e2e/form-post-browser.test.ts.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { makeApp } from '../helpers/app.js';
import { createApplication, signUp, sessionCookieOf } from '../helpers/accounts.js';
import { authorize, location, setUpClients, SPA_REDIRECT, spaParams, token } from '../helpers/oauth-inject.js';
import { csrfFrom, openPage, postForm } from '../helpers/pages.js';
import { memberships } from '../../server/db/schema.js';
import { exec } from '../../server/db/store.js';

const SCRIPT_HASH = `'sha256-${createHash('sha256').update('document.forms[0].submit();').digest('base64')}'`;
const CSP = `default-src 'none'; script-src ${SCRIPT_HASH}; form-action http://127.0.0.1:5173; frame-ancestors 'none'; base-uri 'none'`;

/** The fields of the form-post page, after checking its headers, action and shape exactly. */
function formPost(res: Awaited<ReturnType<typeof authorize>>, action = SPA_REDIRECT, csp = CSP): Record<string, string> {
  expect(res.statusCode, res.body).toBe(200);
  expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.headers['content-security-policy']).toBe(csp);
  expect(res.headers.location).toBeUndefined();
  expect(res.body).toContain(`<form method="post" action="${action}">`);
  expect(res.body).toContain('<button type="submit">Continue</button>');
  expect(res.body).toContain('<script>document.forms[0].submit();</script>');
  // Nothing else may load or run: one script, no stylesheet, no image, no other form.
  expect(res.body.match(/<script/g)).toHaveLength(1);
  expect(res.body).not.toMatch(/<link|<img|<style|<iframe/);
  expect(res.body.match(/<form/g)).toHaveLength(1);
  const fields: Record<string, string> = {};
  for (const [, name, value] of res.body.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    fields[name!] = value!.replaceAll('&amp;', '&').replaceAll('&quot;', '"').replaceAll('&#39;', "'").replaceAll('&lt;', '<').replaceAll('&gt;', '>');
  }
  return fields;
}

async function setUp() {
  const t = await makeApp();
  return { t, ...(await setUpClients(t)) };
}

describe('response_mode=form_post', () => {
  it('answers 200 with a self-submitting form posting code, state and iss to the redirect URI; the code exchanges', async () => {
    const { t, cookie } = await setUp();
    const { params, pkce } = spaParams({ response_mode: 'form_post', state: 'a"b<c>&d' });
    const res = await authorize(t, params, cookie);
    const fields = formPost(res);
    expect(Object.keys(fields)).toEqual(['code', 'state', 'iss']);
    expect(fields.state).toBe('a"b<c>&d');
    expect(res.body).toContain('value="a&quot;b&lt;c&gt;&amp;d"');
    expect(fields.iss).toBe(t.config.issuer);
    const exchanged = await token(t, { grant_type: 'authorization_code', code: fields.code, redirect_uri: SPA_REDIRECT, client_id: 'notes', code_verifier: pkce.verifier });
    expect(exchanged.statusCode, exchanged.body).toBe(200);
    expect(exchanged.json().scope).toBe('openid offline_access');
  });

  it('POST to authorize with response_mode=form_post answers the same page', async () => {
    const { t, cookie } = await setUp();
    const { params } = spaParams({ response_mode: 'form_post' });
    const res = await t.app.inject({
      method: 'POST', url: '/api/auth/oauth2/authorize', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams(params as Record<string, string>).toString(),
    });
    expect(Object.keys(formPost(res))).toEqual(['code', 'state', 'iss']);
  });

  it('sends authorization errors in the form too, once the mode is read', async () => {
    const { t, cookie } = await setUp();
    for (const [extra, error, signedIn] of [
      [{ scope: 'openid admin' }, 'invalid_scope', cookie],
      [{ response_type: 'token' }, 'unsupported_response_type', cookie],
      [{ prompt: 'none' }, 'login_required', undefined],
    ] as const) {
      const fields = formPost(await authorize(t, spaParams({ response_mode: 'form_post', ...extra }).params, signedIn));
      expect(Object.keys(fields), error).toEqual(['error', 'error_description', 'state', 'iss']);
      expect(fields.error).toBe(error);
      expect(fields.state).toBe('xyz');
    }
  });

  it('refuses fragment and unknown modes with invalid_request in the query', async () => {
    const { t, cookie } = await setUp();
    for (const [mode, description] of [
      ['fragment', 'response_mode=fragment is not allowed with response_type=code; use query or form_post.'],
      ['web_message', 'response_mode must be query or form_post.'],
    ]) {
      const answer = location(await authorize(t, spaParams({ response_mode: mode }).params, cookie));
      expect(answer.origin + answer.pathname).toBe(SPA_REDIRECT);
      expect(Object.fromEntries(answer.searchParams)).toEqual({ error: 'invalid_request', error_description: description, state: 'xyz', iss: t.config.issuer });
    }
    // query is the default, and may be named.
    expect(location(await authorize(t, spaParams({ response_mode: 'query' }).params, cookie)).searchParams.get('code')).toBeTruthy();
  });

  it('refuses form_post to a custom-scheme redirect URI (a browser cannot post there)', async () => {
    const t = await makeApp();
    await createApplication(t, {
      id: 'desk', name: 'Desk', audience: 'https://desk.example.com', clientType: 'native', redirectUris: ['com.example.desk:/cb'], authPolicy: { signup_policy: 'open' },
    });
    const cookie = `gatehouse_session=${sessionCookieOf(await signUp(t, { email: 'ada@example.com', name: 'Ada', applicationId: 'desk' }))}`;
    const res = await authorize(t, spaParams({ client_id: 'desk', redirect_uri: 'com.example.desk:/cb', response_mode: 'form_post' }).params, cookie);
    expect(res.statusCode).toBe(302);
    const answer = new URL(String(res.headers.location));
    expect(answer.searchParams.get('error')).toBe('invalid_request');
    expect(answer.searchParams.get('error_description')).toBe('response_mode=form_post needs an http(s) redirect_uri.');
  });

  it("the refused page's way back posts access_denied in a form its CSP lets reach that origin", async () => {
    const { t, cookie } = await setUp();
    await exec(t.db.update(memberships).set({ status: 'suspended' }));
    const res = await authorize(t, spaParams({ response_mode: 'form_post' }).params, cookie);
    expect(res.statusCode).toBe(403);
    expect(res.body).toContain('data-reason="suspended"');
    expect(res.headers['content-security-policy']).toContain("form-action 'self' http://127.0.0.1:5173;");
    const form = /<form method="post" action="([^"]+)" data-back>(.*?)<\/form>/.exec(res.body);
    expect(form?.[1]).toBe(SPA_REDIRECT);
    const fields = Object.fromEntries([...form![2]!.matchAll(/name="([^"]+)" value="([^"]*)"/g)].map(([, n, v]) => [n, v]));
    expect(fields).toEqual({ error: 'access_denied', error_description: 'Your access to Notes is suspended.', state: 'xyz', iss: t.config.issuer });
    expect(res.body).not.toContain('<a class="button secondary"');
  });

  it('a denied consent goes back in the form', async () => {
    const t = await makeApp();
    await createApplication(t, {
      id: 'notes', name: 'Notes', audience: 'https://notes.example.com/api', clientType: 'spa', redirectUris: [SPA_REDIRECT],
      authPolicy: { signup_policy: 'open' }, consent: 'explicit',
    });
    const cookie = `gatehouse_session=${sessionCookieOf(await signUp(t, { email: 'ada@example.com', name: 'Ada', applicationId: 'notes' }))}`;
    const ask = location(await authorize(t, spaParams({ response_mode: 'form_post' }).params, cookie));
    expect(ask.pathname).toBe('/consent');
    const page = await openPage(t, ask.pathname + ask.search, cookie);
    const denied = await postForm(t, '/consent', { csrf_token: csrfFrom(page.res), return_to: ask.searchParams.get('return_to')!, decision: 'deny' }, page.cookie);
    expect(formPost(denied)).toEqual({ error: 'access_denied', error_description: 'The person did not allow access.', state: 'xyz', iss: t.config.issuer });
  });

  it('discovery lists query and form_post', async () => {
    const { t } = await setUp();
    const res = await t.app.inject({ method: 'GET', url: '/.well-known/openid-configuration' });
    expect(res.json().response_modes_supported).toEqual(['query', 'form_post']);
  });
});

