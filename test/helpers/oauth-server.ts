/**
 * A real Gatehouse on 127.0.0.1 (free port, temp data dir) for relying-party libraries, plus the
 * calls an OAuth test needs: admin requests, sign-up/sign-in for a session cookie, and following
 * an authorization request one hop with that cookie (redirect: 'manual').
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { loadConfig } from '../../server/config.js';
import { start, type Running } from '../../server/main.js';
import { useTestHashCost } from './hash-cost.js';

export const OAUTH_ADMIN_TOKEN = 'oauth-test-admin-token-0123456789';
export const PASSWORD = 'correct horse battery';

export interface OAuthServer {
  running: Running;
  url: string;
  admin(method: string, path: string, body?: unknown): Promise<Response>;
  stop(): Promise<void>;
}

/** Admin API calls on `url` with the test admin token; JSON bodies. */
export function adminFetch(url: string): OAuthServer['admin'] {
  return (method, path, body) =>
    fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${OAUTH_ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
}

/** An admin call that must succeed (2xx); its JSON answer, or undefined for a 204. */
export async function adminJsonOf<T>(server: Pick<OAuthServer, 'admin'>, method: string, path: string, body?: unknown): Promise<T> {
  const res = await server.admin(method, path, body);
  if (!res.ok) throw new Error(`${method} ${path} → ${res.status}: ${await res.text()}`);
  return (res.status === 204 ? undefined : await res.json()) as T;
}

export async function startOAuthServer(env: Record<string, string> = {}): Promise<OAuthServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-oauth-'));
  const config = loadConfig({ LOG_LEVEL: 'silent', ...env }, { dataDir, port: '0', host: '127.0.0.1', adminToken: OAUTH_ADMIN_TOKEN });
  // In this process: hashing at the test cost, like makeApp's apps (test/helpers/hash-cost.ts).
  useTestHashCost();
  const running = await start(config);
  return {
    running,
    url: running.url,
    admin: adminFetch(running.url),
    async stop() {
      await running.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Creates an application (open sign-up by default) and returns its record (with clientSecret for web). */
export async function createClient(server: OAuthServer, body: Record<string, unknown>) {
  const res = await server.admin('POST', '/api/admin/applications', {
    authPolicy: { signup_policy: 'open' },
    ...body,
  });
  expect(res.status).toBe(201);
  return (await res.json()) as { id: string; audience: string; clientSecret?: string; redirectUris: string[] };
}

function sessionCookie(res: Response): string {
  const cookie = res.headers.getSetCookie().find((c) => c.startsWith('gatehouse_session='));
  expect(cookie, 'session cookie').toBeTruthy();
  return cookie!.split(';')[0]!;
}

/** Signs up (creating the person and membership) and returns the `Cookie` header value. */
export async function signUpCookie(server: OAuthServer, email: string, applicationId: string): Promise<string> {
  const res = await fetch(`${server.url}/api/auth/sign-up/email`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: PASSWORD, name: 'Ada Lovelace', applicationId }),
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return sessionCookie(res);
}

/** Signs in for an application (marking its realm) and returns the `Cookie` header value. */
export async function signInCookie(server: OAuthServer, email: string, applicationId: string): Promise<string> {
  const res = await fetch(`${server.url}/api/auth/sign-in/email`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: PASSWORD, applicationId }),
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return sessionCookie(res);
}

/** Requests `url` with the cookie and returns the 302 Location (absolute). */
export async function follow(url: string | URL, cookie?: string): Promise<{ status: number; location: URL | undefined; body: string }> {
  const res = await fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {} });
  const location = res.headers.get('location');
  return { status: res.status, location: location ? new URL(location, url) : undefined, body: await res.text() };
}

export function pkcePair() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}
