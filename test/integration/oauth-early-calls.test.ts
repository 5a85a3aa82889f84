/**
 * The token endpoint's form posts and userinfo's GET are answered before Fastify (issue 27,
 * http/early-answers.ts) by the same function as their Fastify routes. Over real HTTP the early
 * path answers; `inject` only ever reaches the routes. Every case is asked both ways and the
 * answers must be the same: status, headers (but the connection's own: date, keep-alive) and body;
 * requests the early path does not take (another content type, an oversized body, a query string,
 * other methods) reach the routes and answer as before.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createClient, follow, pkcePair, signUpCookie, startOAuthServer, type OAuthServer,
} from '../helpers/oauth-server.js';
import { answerHeaders, headerRecord } from '../helpers/header-record.js';
import type { TokenResponse } from '../../server/oauth/token/response.js';

const SPA_REDIRECT = 'http://127.0.0.1:5173/callback';
const TOKEN = '/api/auth/oauth2/token';
const USERINFO = '/api/auth/oauth2/userinfo';
const FORM = 'application/x-www-form-urlencoded';
const SECURITY = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  'access-control-allow-origin': '*',
};

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

let server: OAuthServer;
let cookie: string;
let webSecret: string;

/** The same request over HTTP (the early path) and through `inject` (the Fastify route). */
async function both(method: string, path: string, headers: Record<string, string>, body?: string): Promise<[Answer, Answer]> {
  const res = await fetch(`${server.url}${path}`, { method, headers, ...(body === undefined ? {} : { body }) });
  const early = { status: res.status, headers: answerHeaders(headerRecord(res.headers)), body: await res.text() };
  const injected = await server.running.app.inject({ method: method as 'GET', url: path, headers, ...(body === undefined ? {} : { payload: body }) });
  return [early, { status: injected.statusCode, headers: answerHeaders(injected.headers), body: injected.body }];
}

/** One code flow with `scope` for the SPA client; returns the token response. */
async function tokens(scope: string): Promise<TokenResponse> {
  const { verifier, challenge } = pkcePair();
  const query = new URLSearchParams({
    response_type: 'code', client_id: 'notes', redirect_uri: SPA_REDIRECT, scope, state: 's', code_challenge: challenge, code_challenge_method: 'S256',
  });
  const { location } = await follow(`${server.url}/api/auth/oauth2/authorize?${query}`, cookie);
  const code = location!.searchParams.get('code')!;
  const res = await fetch(`${server.url}${TOKEN}`, {
    method: 'POST',
    headers: { 'content-type': FORM },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: SPA_REDIRECT, client_id: 'notes', code_verifier: verifier }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as TokenResponse;
}

describe('token and userinfo answered before Fastify', () => {
  beforeAll(async () => {
    // A low failure limit, so the 429 answer is reached in a few requests.
    server = await startOAuthServer({ GATEHOUSE_TOKEN_FAILURE_LIMIT: '4' });
    await createClient(server, { id: 'notes', name: 'Notes', audience: 'https://notes.example.com/api', clientType: 'spa', redirectUris: [SPA_REDIRECT] });
    const web = await createClient(server, {
      id: 'billing', name: 'Billing', audience: 'https://billing.example.com/api', clientType: 'web',
      redirectUris: ['https://billing.example.com/callback'], grantTypes: ['authorization_code', 'refresh_token', 'client_credentials'],
    });
    webSecret = web.clientSecret!;
    cookie = await signUpCookie(server, 'ada@example.com', 'notes');
  });
  afterAll(() => server?.stop());

  it('answers refresh grants with the same status, headers and fields both ways', async () => {
    const first = await tokens('openid offline_access');
    const early = await fetch(`${server.url}${TOKEN}`, {
      method: 'POST',
      headers: { 'content-type': `${FORM}; charset=UTF-8` },
      body: `grant_type=refresh_token&client_id=notes&refresh_token=${first.refresh_token}`,
    });
    expect(early.status).toBe(200);
    const earlyBody = (await early.json()) as Record<string, unknown>;
    const injected = await server.running.app.inject({
      method: 'POST', url: TOKEN, headers: { 'content-type': FORM },
      payload: `grant_type=refresh_token&client_id=notes&refresh_token=${earlyBody.refresh_token as string}`,
    });
    expect(injected.statusCode).toBe(200);
    const expected = { ...SECURITY, 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', pragma: 'no-cache' };
    const { 'content-length': earlyLength, ...earlyHeaders } = answerHeaders(headerRecord(early.headers));
    const { 'content-length': injectedLength, ...injectedHeaders } = answerHeaders(injected.headers);
    expect(earlyHeaders).toEqual(expected);
    expect(injectedHeaders).toEqual(expected);
    expect(Number(earlyLength)).toBeGreaterThan(0);
    expect(Number(injectedLength)).toBe(Buffer.byteLength(injected.body));
    expect(Object.keys(earlyBody)).toEqual(['access_token', 'token_type', 'expires_in', 'scope', 'refresh_token']);
    expect(Object.keys(injected.json())).toEqual(Object.keys(earlyBody));
    expect(earlyBody).toMatchObject({ token_type: 'Bearer', expires_in: 900, scope: 'openid offline_access' });
  });

  it('answers a client-credentials grant with Basic authentication both ways', async () => {
    const basic = `Basic ${Buffer.from(`billing:${webSecret}`).toString('base64')}`;
    const [early, route] = await both('POST', TOKEN, { 'content-type': FORM, authorization: basic }, 'grant_type=client_credentials');
    expect(early.status).toBe(200);
    expect(route.status).toBe(200);
    expect(early.headers).toEqual(route.headers); // same token length: same content-length
    expect(Object.keys(JSON.parse(early.body))).toEqual(['access_token', 'token_type', 'expires_in']);
  });

  it('answers every refusal identically: grant, client, parameters, content', async () => {
    const basicWrong = `Basic ${Buffer.from('billing:wrong-secret').toString('base64')}`;
    const cases: [Record<string, string>, string, number, string][] = [
      [{ 'content-type': FORM }, 'grant_type=refresh_token&client_id=notes&refresh_token=ghr_unknown', 400, 'invalid_grant'],
      [{ 'content-type': FORM }, 'client_id=notes', 400, 'invalid_request'],
      [{ 'content-type': FORM }, 'grant_type=password&client_id=notes', 400, 'unsupported_grant_type'],
      [{ 'content-type': FORM }, 'grant_type=refresh_token&grant_type=refresh_token&client_id=notes', 400, 'invalid_request'],
      [{ 'content-type': FORM }, 'grant_type=client_credentials&client_id=notes', 400, 'unauthorized_client'],
      [{ 'content-type': FORM }, '', 400, 'invalid_request'],
      // Another content type, and a form over the 16 KiB limit, are the routes' to refuse.
      [{ 'content-type': 'application/json' }, '{"grant_type":"refresh_token"}', 400, 'invalid_request'],
      [{ 'content-type': 'text/plain' }, 'grant_type=refresh_token', 400, 'invalid_request'],
      [{ 'content-type': FORM }, `grant_type=refresh_token&client_id=notes&pad=${'x'.repeat(17 * 1024)}`, 400, 'invalid_request'],
    ];
    for (const [headers, body, status, error] of cases) {
      const [early, route] = await both('POST', TOKEN, headers, body);
      expect(early, body.slice(0, 60)).toEqual(route);
      expect(early.status).toBe(status);
      expect(JSON.parse(early.body).error).toBe(error);
      expect(early.headers['cache-control']).toBe('no-store');
      expect(early.headers['access-control-allow-origin']).toBe('*');
    }
    // Client authentication failures: 401 (counted by the failure limit), with a Basic challenge
    // only for a client that used Basic (issue 33).
    for (const [headers, body, challenge] of [
      [{ 'content-type': FORM }, 'grant_type=refresh_token&client_id=nobody&refresh_token=x', undefined],
      [{ 'content-type': FORM, authorization: basicWrong }, 'grant_type=client_credentials', 'Basic realm="gatehouse"'],
    ] as const) {
      const [early, route] = await both('POST', TOKEN, headers, body);
      expect(early).toEqual(route);
      expect(early.status).toBe(401);
      expect(early.headers['www-authenticate']).toBe(challenge);
    }
  });

  it('shares the failure limit: after 4 failed grants both ways answer 429 with Retry-After', async () => {
    await createClient(server, { id: 'limited', name: 'Limited', audience: 'https://limited.example.com/api', clientType: 'spa', redirectUris: [SPA_REDIRECT] });
    const failing = 'grant_type=refresh_token&client_id=limited&refresh_token=ghr_unknown';
    for (let i = 0; i < 2; i++) {
      const [early, route] = await both('POST', TOKEN, { 'content-type': FORM }, failing);
      expect([early.status, route.status]).toEqual([400, 400]);
    }
    const [early, route] = await both('POST', TOKEN, { 'content-type': FORM }, failing);
    expect(early.status).toBe(429);
    expect(early).toEqual(route);
    expect(JSON.parse(early.body).error).toBe('temporarily_unavailable');
    expect(Number(early.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('reaches the route for a query string and answers other methods 405 as before', async () => {
    const [early, route] = await both('POST', `${TOKEN}?x=1`, { 'content-type': FORM }, 'client_id=notes');
    expect(early).toEqual(route);
    expect(JSON.parse(early.body).error).toBe('invalid_request');
    const [get, getRoute] = await both('GET', TOKEN, {});
    expect(get).toEqual(getRoute);
    expect(get.status).toBe(405);
    expect(get.headers.allow).toBe('POST, OPTIONS');
  });

  it('answers userinfo the same both ways: claims, no token, a bad token, a token without openid', async () => {
    const { access_token: accessToken } = await tokens('openid profile email');
    const [ok, okRoute] = await both('GET', USERINFO, { authorization: `Bearer ${accessToken}` });
    expect(ok).toEqual(okRoute);
    expect(ok.status).toBe(200);
    expect(ok.headers).toEqual({ ...SECURITY, 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'content-length': String(Buffer.byteLength(ok.body)) });
    const info = JSON.parse(ok.body);
    expect(info).toEqual({
      sub: expect.stringMatching(/^usr_/), name: 'Ada Lovelace', preferred_username: 'ada', updated_at: info.updated_at,
      email: 'ada@example.com', email_verified: false,
    });
    expect(Number.isInteger(info.updated_at) && Math.abs(info.updated_at - Date.now() / 1000) < 300).toBe(true);

    const [none, noneRoute] = await both('GET', USERINFO, {});
    expect(none).toEqual(noneRoute);
    expect(none.status).toBe(401);
    expect(none.headers['www-authenticate']).toBe('Bearer realm="gatehouse"');

    const [bad, badRoute] = await both('GET', USERINFO, { authorization: `Bearer ${accessToken.slice(0, -4)}AAAA` });
    expect(bad).toEqual(badRoute);
    expect(bad.status).toBe(401);
    expect(JSON.parse(bad.body).error).toBe('invalid_token');

    const { access_token: noOpenid } = await tokens('offline_access');
    const [scope, scopeRoute] = await both('GET', USERINFO, { authorization: `Bearer ${noOpenid}` });
    expect(scope).toEqual(scopeRoute);
    expect(scope.status).toBe(403);
    expect(JSON.parse(scope.body).error).toBe('insufficient_scope');

    // POST and HEAD are the routes' (not taken early), and answer as they did.
    const [post, postRoute] = await both('POST', USERINFO, { authorization: `Bearer ${accessToken}` });
    expect(post).toEqual(postRoute);
    expect(post.body).toBe(ok.body);
    const head = await fetch(`${server.url}${USERINFO}`, { method: 'HEAD', headers: { authorization: `Bearer ${accessToken}` } });
    expect(head.status).toBe(200);
  });
});
