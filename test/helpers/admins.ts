/**
 * Named administrators for tests (spec administrators-and-people.md): a person signed up through
 * the real sign-up, with a TOTP authenticator enrolled through /api/me/totp, given a role through
 * the admin API; and panel tokens got the way the panel gets them: password, TOTP code, then the
 * built-in client's code + PKCE flow and the token exchange.
 */
import { expect } from 'vitest';
import { Secret, TOTP } from 'otpauth';
import { PANEL_AUDIENCE, PANEL_CALLBACK_PATH, PANEL_CLIENT_ID } from '../../server/administrators/panel-client.js';
import { pkcePair } from './oauth-server.js';
import type { TestApp } from './app.js';
import { cookieValue, PASSWORD, postJson, signUp, sessionCookieOf } from './accounts.js';
import { authorize, location, token } from './oauth-inject.js';
import { me } from './self-service.js';

export type Role = 'owner' | 'people_manager' | 'app_manager';

export interface TestAdministrator {
  personId: string;
  email: string;
  secret: string;
}

export function totpCode(secret: string, at: Date): string {
  return new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({ timestamp: at.getTime() });
}

/** Moves the test clock to the next 30-second TOTP step (a code is good once per step). */
export function nextStep(t: TestApp): void {
  t.clock.advance(30_000);
}

/** An open application people can sign up to (created once per app). */
export async function lobby(t: TestApp): Promise<string> {
  const res = await t.admin('GET', '/api/admin/applications/lobby');
  if (res.statusCode === 200) return 'lobby';
  const created = await t.admin('POST', '/api/admin/applications', {
    id: 'lobby', name: 'Lobby', audience: 'https://lobby.example.com/api', redirectUris: ['https://lobby.example.com/cb'], clientType: 'spa',
    authPolicy: { signup_policy: 'open' },
  });
  expect(created.statusCode, created.body).toBe(201);
  return 'lobby';
}

/** A person with a password and a confirmed TOTP authenticator (no role yet). */
export async function personWithTotp(t: TestApp, email: string): Promise<TestAdministrator> {
  const res = await signUp(t, { email, name: email.split('@')[0], applicationId: await lobby(t) });
  expect(res.statusCode, res.body).toBe(201);
  const cookie = `gatehouse_session=${sessionCookieOf(res)}`;
  const started = await me(t, 'POST', '/api/me/totp', cookie);
  expect(started.statusCode, started.body).toBe(200);
  const { secret } = started.json() as { secret: string };
  const confirmed = await me(t, 'POST', '/api/me/totp/confirm', cookie, { code: totpCode(secret, t.clock.now()) });
  expect(confirmed.statusCode, confirmed.body).toBe(200);
  nextStep(t);
  return { personId: res.json().user.id as string, email, secret };
}

/** A person holding `role` (granted with the admin token). */
export async function administrator(t: TestApp, email: string, role: Role, applications?: string[]): Promise<TestAdministrator> {
  const person = await personWithTotp(t, email);
  const put = await t.admin('PUT', `/api/admin/administrators/${person.personId}`, { role, ...(applications ? { applications } : {}) });
  expect(put.statusCode, put.body).toBe(200);
  return person;
}

/** Signs in with password and TOTP (for the panel, unless told otherwise); returns the session's Cookie header. */
export async function multiFactorSession(t: TestApp, who: TestAdministrator, applicationId: string = PANEL_CLIENT_ID): Promise<string> {
  const first = await postJson(t, '/api/auth/sign-in/email', { email: who.email, password: PASSWORD, applicationId });
  expect(first.statusCode, first.body).toBe(200);
  expect(first.json().secondFactor).toBeDefined();
  const mfa = `gatehouse_mfa=${cookieValue(first, 'gatehouse_mfa')}`;
  const second = await postJson(t, '/api/auth/second-factor/totp', { code: totpCode(who.secret, t.clock.now()) }, { cookie: mfa });
  expect(second.statusCode, second.body).toBe(200);
  nextStep(t);
  return `gatehouse_session=${sessionCookieOf(second)}`;
}

export const panelRedirect = (t: TestApp) => `${t.config.issuer}${PANEL_CALLBACK_PATH}`;

export interface PanelTokens {
  access_token: string;
  refresh_token: string;
  expires_in: number;
  scope: string;
}

/** The panel's sign-in: authorize through the built-in client from `cookie`'s session, then the code exchange. */
export async function panelTokensFrom(t: TestApp, cookie: string): Promise<PanelTokens> {
  const pkce = pkcePair();
  const redirect = panelRedirect(t);
  const res = await authorize(t, {
    response_type: 'code', client_id: PANEL_CLIENT_ID, redirect_uri: redirect, scope: 'openid offline_access',
    state: 'panel-state', code_challenge: pkce.challenge, code_challenge_method: 'S256', resource: PANEL_AUDIENCE,
  }, cookie);
  expect(res.statusCode, res.body).toBe(302);
  const back = location(res);
  expect(`${back.origin}${back.pathname}`).toBe(redirect);
  const code = back.searchParams.get('code');
  expect(code, back.toString()).toBeTruthy();
  const exchanged = await token(t, { grant_type: 'authorization_code', code: code!, redirect_uri: redirect, client_id: PANEL_CLIENT_ID, code_verifier: pkce.verifier, resource: PANEL_AUDIENCE });
  expect(exchanged.statusCode, exchanged.body).toBe(200);
  return exchanged.json() as PanelTokens;
}

/** Signs in (password + TOTP) and gets panel tokens; returns them with the session cookie. */
export async function panelSignIn(t: TestApp, who: TestAdministrator): Promise<PanelTokens & { cookie: string }> {
  const cookie = await multiFactorSession(t, who);
  return { ...(await panelTokensFrom(t, cookie)), cookie };
}

/** An admin API call with a bearer token. */
export function asBearer(t: TestApp, bearer: string, method: string, url: string, body?: unknown) {
  return t.admin(method as never, url, body, { authorization: `Bearer ${bearer}` });
}
