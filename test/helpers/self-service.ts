/**
 * Helpers for the self-service tests: `/api/me` calls with a session cookie (writes send JSON,
 * as the CSRF rule wants), and a signed-up person's cookie header.
 */
import type { InjectOptions } from 'fastify';
import { expect } from 'vitest';
import type { TestApp } from './app.js';
import { sessionCookieOf, signIn, signUp } from './accounts.js';

/** A request to `/api/me…` with `cookie`; bodies (and bodyless writes) go as application/json. */
export function me(t: TestApp, method: InjectOptions['method'], url: string, cookie: string | undefined, body?: unknown, headers: Record<string, string> = {}) {
  const write = method !== 'GET' && method !== 'HEAD';
  return t.app.inject({
    method,
    url,
    headers: { ...(cookie ? { cookie } : {}), ...(write ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(write ? { payload: body === undefined ? '' : JSON.stringify(body) } : {}),
  } as InjectOptions);
}

/** Signs up `email` (joining `applicationId`) and returns the `Cookie` header of that session. */
export async function signedUpCookie(t: TestApp, email: string, applicationId: string, headers: Record<string, string> = {}) {
  const res = await signUp(t, { email, name: email.split('@')[0], applicationId }, headers);
  expect(res.statusCode, res.body).toBe(201);
  return `gatehouse_session=${sessionCookieOf(res)}`;
}

/** Signs in again from another "device" (no cookie) and returns the new session's `Cookie` header. */
export async function secondDeviceCookie(t: TestApp, email: string, applicationId?: string, userAgent?: string) {
  const res = await signIn(t, { email, ...(applicationId ? { applicationId } : {}) }, userAgent ? { 'user-agent': userAgent } : {});
  expect(res.statusCode, res.body).toBe(200);
  return `gatehouse_session=${sessionCookieOf(res)}`;
}
