/**
 * Exact-wire regressions for what the endpoint fuzzer (fuzz-endpoints.test.ts) found, one case
 * per fix, so each stays fixed whatever seed a run draws.
 */
import { describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { makeApp } from '../helpers/app.js';
import { expectProblem } from '../helpers/problem.js';
import { createApplication } from '../helpers/accounts.js';
import { token } from '../helpers/oauth-inject.js';
import { OAuthError } from '../../server/oauth/errors.js';

function expectErrorPage(res: LightMyRequestResponse, status: number) {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
  expect(res.body.trimStart().toLowerCase()).toMatch(/^<!doctype html>/);
}

describe('hostile input regressions', () => {
  it('answers a malformed or unknown URL under a hosted page with the HTML error page', async () => {
    const t = await makeApp();
    for (const url of ['/invite/%E0%A4%A', '/invite/%/accept', '/account/%zz', '/api/auth/callback/%C0%AF']) {
      expectErrorPage(await t.app.inject({ method: 'GET', url }), 400);
    }
    expectErrorPage(await t.app.inject({ method: 'GET', url: '/api/auth/sign-in/%E0%A4%A' }), 400);
    expectErrorPage(await t.app.inject({ method: 'GET', url: '/account/no-such-page' }), 404);
    expectErrorPage(await t.app.inject({ method: 'POST', url: '/sign-in/extra' }), 404);
    // Machine-read paths keep problem details.
    expectProblem(await t.app.inject({ method: 'GET', url: '/nope' }), 404, 'route_not_found');
    expectProblem(await t.app.inject({ method: 'POST', url: '/api/auth/sign-in/%zz' }), 400, 'bad_request');
    expectProblem(await t.admin('GET', '/api/admin/applications/%E0%A4%A'), 400, 'bad_request');
  });

  it('answers bodies end-session cannot read with the HTML error page, not RFC 6749 JSON', async () => {
    const t = await makeApp();
    const post = (contentType: string, payload: string) =>
      t.app.inject({ method: 'POST', url: '/api/auth/oauth2/end-session', headers: { 'content-type': contentType }, payload });
    expectErrorPage(await post('text/plain', 'client_id=notes'), 415);
    expectErrorPage(await post('application/x-www-form-urlencoded', `state=${'x'.repeat(20_000)}`), 413);
    expect((await post('application/json', '{')).headers['content-type']).toBe('text/html; charset=utf-8');
  });

  it('keeps error_description within the RFC 6749 character set, whatever the client sent', async () => {
    const t = await makeApp();
    await createApplication(t, { id: 'notes', clientType: 'spa', redirectUris: ['http://127.0.0.1:5173/callback'] });
    const res = await token(t, { grant_type: 'javascript:"alert"(\u00e9\u0000)', client_id: 'notes' });
    expect(res.statusCode).toBe(400);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.json()).toEqual({
      error: 'unsupported_grant_type',
      error_description: 'grant_type must be one of authorization_code, refresh_token, client_credentials, urn:ietf:params:oauth:grant-type:device_code.',
    });
    // Descriptions that quote names or input are made conformant in one place.
    expect(new OAuthError('invalid_request', 'Caf\u00e9 "x" \\ y\u0000\u202e').description).toBe("Caf? 'x' / y??");
  });
});
