/**
 * Hosted-page helpers for inject tests: open a page keeping its CSRF cookie, read the form token
 * from the HTML, and post a form the way a browser does.
 */
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { TestApp } from './app.js';
import { cookieValue } from './accounts.js';

export function csrfFrom(res: LightMyRequestResponse): string {
  const match = /name="csrf_token" value="([^"]+)"/.exec(res.body);
  expect(match, 'a form with a CSRF token').not.toBeNull();
  return match![1]!;
}

/** GETs `url` with `cookie`; the returned cookie header adds the CSRF cookie the page set. */
export async function openPage(t: TestApp, url: string, cookie = '') {
  const res = await t.app.inject({ method: 'GET', url, headers: cookie ? { cookie } : {} });
  const csrfCookie = cookieValue(res, 'gatehouse_csrf');
  return { res, cookie: [cookie, csrfCookie ? `gatehouse_csrf=${csrfCookie}` : ''].filter(Boolean).join('; ') };
}

export function postForm(t: TestApp, url: string, fields: Record<string, string> | [string, string][], cookie: string) {
  return t.app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
    payload: new URLSearchParams(fields).toString(),
  });
}
