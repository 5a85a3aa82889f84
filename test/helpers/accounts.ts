/**
 * Test helpers for sign-in flows: applications with a given policy, JSON sign-up/sign-in calls,
 * cookie extraction, and a pending invitation written straight into the store.
 */
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { invitations } from '../../server/db/schema.js';
import { randomToken, sha256 } from '../../server/util/crypto.js';
import { newId } from '../../server/util/ids.js';
import { appBody, type TestApp } from './app.js';
import { exec } from '../../server/db/store.js';

export const PASSWORD = 'correct horse battery';

export async function createApplication(t: TestApp, overrides: Record<string, unknown> = {}) {
  const res = await t.admin('POST', '/api/admin/applications', appBody(overrides));
  expect(res.statusCode).toBe(201);
  return res.json();
}

export function postJson(t: TestApp, url: string, body: unknown, headers: Record<string, string> = {}) {
  return t.app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json', ...headers },
    payload: body === undefined ? '' : JSON.stringify(body),
  } as InjectOptions);
}

/** The value of a Set-Cookie'd cookie in a response, or undefined. */
export function cookieValue(res: LightMyRequestResponse, name: string): string | undefined {
  return res.cookies.find((c) => c.name === name)?.value;
}

export function sessionCookieOf(res: LightMyRequestResponse): string {
  const value = cookieValue(res, 'gatehouse_session');
  expect(value).toBeTruthy();
  return value!;
}

export async function signUp(t: TestApp, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return postJson(t, '/api/auth/sign-up/email', { password: PASSWORD, ...body }, headers);
}

export async function signIn(t: TestApp, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return postJson(t, '/api/auth/sign-in/email', { password: PASSWORD, ...body }, headers);
}

/** A pending invitation of `email` to `applicationId` (as if e-mailed, with `emailSent`); returns its raw token. */
export async function insertInvitation(
  t: TestApp, applicationId: string, email: string, role: 'member' | 'admin' = 'member', options: { emailSent?: boolean; groups?: string[] } = {},
): Promise<string> {
  const token = randomToken();
  const now = t.clock.now();
  await exec(t.db.insert(invitations)
    .values({
      id: newId('inv'),
      applicationId,
      email,
      role,
      tokenHash: sha256(token),
      invitedBy: 'admin',
      emailSent: options.emailSent ?? false,
      groups: options.groups ?? [],
      createdAt: now,
      expiresAt: new Date(now.getTime() + 7 * 24 * 3600 * 1000),
    }));
  return token;
}
