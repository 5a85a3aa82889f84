/**
 * The built server (`node dist/gatehouse.mjs serve`, with the launch settings) as its own process on a data directory, and
 * the HTTP calls the fault and race tests make against it with Node's fetch: admin requests,
 * JSON sign-up, an authorization code for a signed-in browser, and token-endpoint posts.
 * Every call resolves with what reached the client: status and parsed body.
 */
import { expect } from 'vitest';
import { pkcePair } from '../helpers/oauth-server.js';
import { CLI, cleanEnv, startServer, type ServerProcess } from '../helpers/server-process.js';

export const ADMIN_TOKEN = 'resilience-admin-token-0123456789';
export const PASSWORD = 'correct horse battery';
export const SPA_REDIRECT = 'http://127.0.0.1:5173/callback';
export const TOKEN_PATH = '/api/auth/oauth2/token';

export interface Answer {
  status: number;
  headers: Headers;
  body: any;
}

/** Starts `gatehouse serve` on a free port over `dataDir` (limits raised by the caller's `env`). */
export function startGatehouse(dataDir: string, env: Record<string, string> = {}): Promise<ServerProcess> {
  return startServer(process.execPath, [CLI, 'serve', '--port', '0', '--data-dir', dataDir], cleanEnv({ ADMIN_TOKEN, ...env }), 60_000);
}

/** SIGKILLs the server's process group and resolves once the process is gone. */
export async function sigkill(server: ServerProcess): Promise<void> {
  const { child } = server;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  process.kill(-child.pid!, 'SIGKILL');
  await gone;
}

async function answer(res: Response): Promise<Answer> {
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}

export async function adminCall(url: string, method: string, path: string, body?: unknown): Promise<Answer> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return answer(res);
}

export async function postJson(url: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return answer(res);
}

/** A form post to the token endpoint. */
export async function tokenCall(url: string, form: Record<string, string>): Promise<Answer> {
  const res = await fetch(`${url}${TOKEN_PATH}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
  return answer(res);
}

/** An open-sign-up public (spa) client redirecting to SPA_REDIRECT. */
export function spaApplication(id: string, audience = `https://${id}.example.com/api`) {
  return { id, name: id, audience, clientType: 'spa', redirectUris: [SPA_REDIRECT], authPolicy: { signup_policy: 'open' } };
}

export function sessionCookie(res: Answer): string {
  const cookie = res.headers.getSetCookie().find((c) => c.startsWith('gatehouse_session='));
  expect(cookie, 'session cookie').toBeTruthy();
  return cookie!.split(';')[0]!;
}

/** Signs up for `applicationId`; resolves with the answer (201 expected by the caller). */
export function signUp(url: string, email: string, applicationId: string): Promise<Answer> {
  return postJson(url, '/api/auth/sign-up/email', { email, password: PASSWORD, name: 'Ada Lovelace', applicationId });
}

/** Authorizes `clientId` silently with the session cookie; resolves with a fresh code and its verifier. */
export async function authorizationCode(url: string, cookie: string, clientId: string, scope = 'openid offline_access') {
  const { verifier, challenge } = pkcePair();
  const query = new URLSearchParams({
    response_type: 'code', client_id: clientId, redirect_uri: SPA_REDIRECT, scope, state: 's',
    code_challenge: challenge, code_challenge_method: 'S256',
  });
  const res = await fetch(`${url}/api/auth/oauth2/authorize?${query}`, { redirect: 'manual', headers: { cookie } });
  await res.arrayBuffer();
  expect(res.status).toBe(302);
  const code = new URL(res.headers.get('location')!).searchParams.get('code');
  expect(code, res.headers.get('location')!).toBeTruthy();
  return { code: code!, verifier };
}

/** The token-endpoint form that exchanges `code` for the spa client. */
export function codeExchange(clientId: string, code: { code: string; verifier: string }): Record<string, string> {
  return { grant_type: 'authorization_code', client_id: clientId, code: code.code, redirect_uri: SPA_REDIRECT, code_verifier: code.verifier };
}

export function refreshGrant(clientId: string, refreshToken: string): Record<string, string> {
  return { grant_type: 'refresh_token', client_id: clientId, refresh_token: refreshToken };
}
