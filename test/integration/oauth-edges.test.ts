/**
 * Protocol edges found by real relying parties (issue 22, item 11): a wrong method is 405 with
 * `Allow`; userinfo's challenges follow RFC 6750 §3.1; end-session without a hint from this
 * session asks before it signs anyone out.
 */
import { describe, expect, it } from 'vitest';
import { makeApp } from '../helpers/app.js';
import { authorize, location, setUpClients, spaParams, spaTokens } from '../helpers/oauth-inject.js';

describe('a method an OAuth endpoint does not take', () => {
  it('answers 405 with Allow: RFC 6749 JSON on back-channel endpoints, the error page on front-channel ones', async () => {
    const t = await makeApp();
    const json: [string, string, string[]][] = [
      ['/.well-known/openid-configuration', 'GET, HEAD, OPTIONS', ['POST', 'PUT', 'DELETE', 'PATCH']],
      ['/.well-known/oauth-authorization-server', 'GET, HEAD, OPTIONS', ['POST', 'DELETE']],
      ['/api/auth/jwks', 'GET, HEAD, OPTIONS', ['POST', 'PUT', 'DELETE', 'PATCH']],
      ['/api/auth/oauth2/token', 'POST, OPTIONS', ['GET', 'HEAD', 'PUT', 'DELETE', 'PATCH']],
      ['/api/auth/oauth2/revoke', 'POST, OPTIONS', ['GET', 'PUT', 'DELETE']],
      ['/api/auth/oauth2/userinfo', 'GET, HEAD, POST, OPTIONS', ['PUT', 'DELETE', 'PATCH']],
    ];
    for (const [url, allow, wrong] of json) {
      for (const method of wrong) {
        const res = await t.app.inject({ method: method as 'GET', url });
        expect({ url, method, status: res.statusCode, allow: res.headers.allow }).toEqual({ url, method, status: 405, allow });
        expect(res.headers['cache-control']).toBe('no-store');
        if (method !== 'HEAD') expect(res.json()).toEqual({ error: 'invalid_request', error_description: `This endpoint takes ${allow}.` });
      }
    }
    for (const url of ['/api/auth/oauth2/authorize', '/api/auth/oauth2/end-session']) {
      for (const method of ['PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
        const res = await t.app.inject({ method: method as 'GET', url });
        expect({ url, method, status: res.statusCode, allow: res.headers.allow }).toEqual({ url, method, status: 405, allow: 'GET, HEAD, POST' });
        expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
        expect(res.body).toContain('<code>invalid_request</code>');
      }
      // A body Fastify cannot take (here empty JSON) gets the page as well, not RFC 6749 JSON.
      const withBody = await t.app.inject({ method: 'PUT', url, headers: { 'content-type': 'application/json' }, payload: '' });
      expect([withBody.statusCode, withBody.headers['content-type']]).toEqual([400, 'text/html; charset=utf-8']);
    }
    // The endpoints themselves still answer their own methods.
    expect((await t.app.inject({ method: 'GET', url: '/api/auth/jwks' })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'OPTIONS', url: '/api/auth/oauth2/token' })).statusCode).toBe(204);
  });
});

describe('userinfo challenges (RFC 6750 §3.1)', () => {
  it('without a token: a realm and no error; with a token problem: error=', async () => {
    const t = await makeApp();
    const { cookie } = await setUpClients(t);
    for (const headers of [{}, { authorization: 'Basic YTpi' }, { authorization: 'Bearer ' }]) {
      const none = await t.app.inject({ method: 'GET', url: '/api/auth/oauth2/userinfo', headers });
      expect(none.statusCode).toBe(401);
      expect(none.headers['www-authenticate']).toBe('Bearer realm="gatehouse"');
    }
    const head = await t.app.inject({ method: 'HEAD', url: '/api/auth/oauth2/userinfo' });
    expect([head.statusCode, head.headers['www-authenticate']]).toEqual([401, 'Bearer realm="gatehouse"']);
    const bad = await t.app.inject({ method: 'GET', url: '/api/auth/oauth2/userinfo', headers: { authorization: 'Bearer not-a-jwt' } });
    expect(bad.statusCode).toBe(401);
    expect(bad.headers['www-authenticate']).toBe('Bearer realm="gatehouse", error="invalid_token", error_description="The access token is invalid or expired."');
    const good = await spaTokens(t, cookie, { scope: 'openid' });
    expect((await t.app.inject({ method: 'GET', url: '/api/auth/oauth2/userinfo', headers: { authorization: `bearer ${good.access_token}` } })).statusCode).toBe(200);
  });
});

describe('end-session without id_token_hint', () => {
  it('asks before signing out, so a cross-site <img> (a plain GET with the cookie) ends nothing', async () => {
    const t = await makeApp();
    const { cookie } = await setUpClients(t);
    for (const url of ['/api/auth/oauth2/end-session', '/api/auth/oauth2/end-session?client_id=notes']) {
      const img = await t.app.inject({ method: 'GET', url, headers: { cookie, 'sec-fetch-dest': 'image', 'sec-fetch-site': 'cross-site' } });
      expect(img.statusCode).toBe(200);
      expect(img.body).toContain('<h1>Sign out?</h1>');
      expect(img.cookies.find((c) => c.name === 'gatehouse_session')).toBeUndefined();
    }
    expect(location(await authorize(t, spaParams().params, cookie)).searchParams.get('code')).toBeTruthy();
  });
});
