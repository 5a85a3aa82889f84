/**
 * `response_mode=form_post` in a real browser (OAuth 2.0 Form Post Response Mode): headless
 * Chromium, signed in to Gatehouse (127.0.0.1), opens an authorization request of an application on
 * another site (localhost); Gatehouse's page posts code, state and iss to the application's
 * callback by itself, within its CSP (no violation reported), and the code exchanges. Without
 * script, the person presses the page's button and the same post arrives.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext } from 'playwright-core';
import { createClient, signUpCookie, startOAuthServer, type OAuthServer } from '../helpers/oauth-server.js';
import { launchChromium, shot } from '../helpers/panel-browser.js';

let server: OAuthServer;
let browser: Browser;
let rp: Server;
let callback: string;
let cookie: string;
/** What the application's callback received, in order. */
const received: { method: string; contentType: string | undefined; form: Record<string, string> }[] = [];

beforeAll(async () => {
  server = await startOAuthServer();
  rp = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      if (req.url === '/callback') {
        received.push({ method: req.method!, contentType: req.headers['content-type'], form: Object.fromEntries(new URLSearchParams(body)) });
      }
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>Notes</title><p id="done">Signed in to Notes</p>');
    });
  });
  await new Promise<void>((resolve) => rp.listen(0, '127.0.0.1', resolve));
  // Another site than Gatehouse's 127.0.0.1: the post crosses sites, as in a deployment.
  callback = `http://localhost:${(rp.address() as AddressInfo).port}/callback`;
  await createClient(server, { id: 'notes', name: 'Notes', audience: 'https://notes.example.com/api', clientType: 'spa', redirectUris: [callback] });
  cookie = await signUpCookie(server, 'ada@example.com', 'notes');
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => rp?.close(resolve));
  await server?.stop();
});

function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** A browser context signed in to Gatehouse, recording CSP violations. */
async function signedIn(javaScriptEnabled: boolean): Promise<{ context: BrowserContext; cspErrors: string[] }> {
  const context = await browser.newContext({ javaScriptEnabled });
  const [name, value] = cookie.split('=') as [string, string];
  await context.addCookies([{ name, value, url: server.url }]);
  return { context, cspErrors: [] };
}

function authorizeUrl(challenge: string, state: string) {
  const params = new URLSearchParams({
    response_type: 'code', response_mode: 'form_post', client_id: 'notes', redirect_uri: callback, scope: 'openid profile',
    state, code_challenge: challenge, code_challenge_method: 'S256',
  });
  return `${server.url}/api/auth/oauth2/authorize?${params}`;
}

async function exchange(code: string, verifier: string) {
  const res = await fetch(`${server.url}/api/auth/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: callback, client_id: 'notes', code_verifier: verifier }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('form_post in Chromium', () => {
  it('the page posts code, state and iss to the application by itself, within its CSP; the code exchanges', async () => {
    const { context, cspErrors } = await signedIn(true);
    const page = await context.newPage();
    page.on('console', (msg) => {
      if (/Content Security Policy/i.test(msg.text())) cspErrors.push(msg.text());
    });
    const { verifier, challenge } = pkce();
    received.length = 0;
    await page.goto(authorizeUrl(challenge, 'state-1'));
    await page.waitForURL(callback);
    await page.locator('#done').waitFor();
    expect(received).toHaveLength(1);
    expect(received[0]!.method).toBe('POST');
    expect(received[0]!.contentType).toBe('application/x-www-form-urlencoded');
    expect(Object.keys(received[0]!.form)).toEqual(['code', 'state', 'iss']);
    expect(received[0]!.form.state).toBe('state-1');
    expect(received[0]!.form.iss).toBe(server.url);
    expect(cspErrors).toEqual([]);
    const tokens = await exchange(received[0]!.form.code!, verifier);
    expect(tokens.status).toBe(200);
    expect(typeof tokens.body.id_token).toBe('string');
    await context.close();
  });

  it('without script the person presses Continue and the same post arrives', async () => {
    const { context } = await signedIn(false);
    const page = await context.newPage();
    const { verifier, challenge } = pkce();
    received.length = 0;
    await page.goto(authorizeUrl(challenge, 'state-2'));
    // Nothing posted yet: the page waits for the button.
    expect(received).toHaveLength(0);
    await page.getByText('If the application does not open by itself, press Continue.').waitFor();
    await shot(page, 'form-post-no-script');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL(callback);
    expect(received).toHaveLength(1);
    expect(received[0]!.method).toBe('POST');
    expect(received[0]!.form.state).toBe('state-2');
    expect((await exchange(received[0]!.form.code!, verifier)).status).toBe(200);
    await context.close();
  });
});
