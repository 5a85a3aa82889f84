/**
 * A real relying party: an Express app with Auth0's express-openid-connect 3.4 (npm), driven by
 * headless Chromium against a real Gatehouse (spec claims-and-groups.md). Its configuration is
 * the one its README gives for the code flow (issuer, base URL, client id and secret, cookie
 * secret, `response_type: 'code'`), nothing Gatehouse-specific:
 * - with its default response mode for the code flow (query), the person lands signed in and
 *   `req.oidc.user` holds the claims apps read: `preferred_username`, `given_name`,
 *   `family_name`, `email`, `groups`;
 * - with `response_mode: 'form_post'` (the mode the middleware uses by default for its other
 *   response types), Gatehouse's page posts the response to the app's callback, which takes it.
 * The middleware's very default, `response_type: 'id_token'`, is the implicit flow, which OAuth
 * 2.1 and Gatehouse do not offer (docs/claims-and-scopes.md).
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import express from 'express';
import { auth, type ConfigParams } from 'express-openid-connect';
import type { Browser } from 'playwright-core';
import { eq } from 'drizzle-orm';
import { people } from '../../server/db/schema.js';
import { one } from '../../server/db/store.js';
import { createClient, signUpCookie, startOAuthServer, type OAuthServer } from '../helpers/oauth-server.js';
import { launchChromium } from '../helpers/panel-browser.js';
import { freePort } from '../helpers/free-port.js';

let gatehouse: OAuthServer;
let browser: Browser;
let secret: string;
let cookie: string;
const apps: Server[] = [];
/** The two apps' ports, registered as redirect URIs before they listen. */
let ports: number[] = [];
/** Methods the apps' callbacks were reached with, in order. */
const callbacks: string[] = [];

/** An Express app on localhost (another site than Gatehouse's 127.0.0.1) with the middleware; its base URL. */
async function relyingParty(port: number, extra: Partial<ConfigParams['authorizationParams']> = {}): Promise<string> {
  const baseURL = `http://localhost:${port}`;
  const app = express();
  app.use((req, _res, next) => {
    if (req.path === '/callback') callbacks.push(req.method);
    next();
  });
  app.use(auth({
    issuerBaseURL: gatehouse.url,
    baseURL,
    clientID: 'notes',
    clientSecret: secret,
    secret: 'a long random string that encrypts the session cookie',
    authRequired: false,
    authorizationParams: { response_type: 'code', scope: 'openid profile email groups', ...extra },
  }));
  app.get('/me', (req, res) => {
    res.json(req.oidc.isAuthenticated() ? req.oidc.user : { signedIn: false });
  });
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  apps.push(server);
  return baseURL;
}

/** Signs in through the app's /login in a fresh browser context (signed in to Gatehouse), then reads /me. */
async function signInThrough(baseURL: string): Promise<Record<string, unknown>> {
  const context = await browser.newContext();
  try {
    const [name, value] = cookie.split('=') as [string, string];
    await context.addCookies([{ name, value, url: gatehouse.url }]);
    const page = await context.newPage();
    await page.goto(`${baseURL}/login`);
    await page.waitForURL(`${baseURL}/`);
    await page.goto(`${baseURL}/me`);
    return JSON.parse((await page.locator('body').textContent()) ?? '{}') as Record<string, unknown>;
  } finally {
    await context.close();
  }
}

beforeAll(async () => {
  gatehouse = await startOAuthServer();
  ports = [await freePort(), await freePort()];
  const created = await createClient(gatehouse, {
    id: 'notes', name: 'Notes', audience: 'https://notes.example.com', clientType: 'web',
    redirectUris: ports.map((port) => `http://localhost:${port}/callback`),
  });
  secret = created.clientSecret!;
  cookie = await signUpCookie(gatehouse, 'ada@example.com', 'notes');
  const db = gatehouse.running.db;
  const ada = (await one(db.select().from(people).where(eq(people.email, 'ada@example.com'))))!;
  const patched = await gatehouse.admin('PATCH', `/api/admin/people/${ada.id}`, { givenName: 'Ada', familyName: 'Lovelace' });
  expect(patched.status).toBe(200);
  for (const id of ['staff', 'admins']) {
    expect((await gatehouse.admin('POST', '/api/admin/groups', { id, name: id })).status).toBe(201);
    expect((await gatehouse.admin('PUT', `/api/admin/groups/${id}/members/${ada.id}`)).status).toBe(204);
  }
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  for (const app of apps) await new Promise((resolve) => app.close(resolve));
  await gatehouse?.stop();
});

describe('express-openid-connect 3.4 against Gatehouse', () => {
  it('with its default response mode for the code flow, req.oidc.user carries the claims apps read', async () => {
    const baseURL = await relyingParty(ports[0]!);
    callbacks.length = 0;
    const user = await signInThrough(baseURL);
    expect(callbacks).toEqual(['GET']);
    expect(user).toMatchObject({
      name: 'Ada Lovelace', given_name: 'Ada', family_name: 'Lovelace', preferred_username: 'ada',
      email: 'ada@example.com', email_verified: false, groups: ['admins', 'staff'],
    });
    expect(user.sub).toMatch(/^usr_/);
  });

  it('with response_mode form_post, Gatehouse posts the response to its callback and the person is signed in', async () => {
    const baseURL = await relyingParty(ports[1]!, { response_mode: 'form_post' });
    callbacks.length = 0;
    const user = await signInThrough(baseURL);
    expect(callbacks).toEqual(['POST']);
    expect(user).toMatchObject({ preferred_username: 'ada', groups: ['admins', 'staff'] });
  });
});
