/**
 * Step-up and per-application MFA policy, checked by openid-client as the relying party against a
 * real server (spec second-factor.md, "Tokens"): discovery lists `acr_values_supported` and the
 * `acr`/`amr` claims; `acr_values=urn:gatehouse:acr:mfa` takes a password-only session through
 * its second factor without the password, and the ID token then says `acr` mfa with `amr`
 * pwd+otp+mfa; an application whose policy is `required` has a person without a factor enrol a
 * TOTP at sign-in before any code is issued; refresh keeps the family's `acr`, and an application
 * that comes to require MFA refuses a password-only family. The hosted pages are walked with a
 * cookie jar, and the TOTP codes computed with otpauth.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as client from 'openid-client';
import { Secret, TOTP } from 'otpauth';
import { PASSWORD, createClient, signUpCookie, startOAuthServer, type OAuthServer } from '../helpers/oauth-server.js';
import { Browser, inputValue, linkHref } from '../helpers/browser-jar.js';

let server: OAuthServer;
let host: string;
const REDIRECT = 'http://127.0.0.1:5173/callback';

beforeAll(async () => {
  server = await startOAuthServer();
  host = new URL(server.url).host;
  await createClient(server, { id: 'wiki', name: 'Wiki', audience: 'https://wiki.example/api', clientType: 'spa', redirectUris: [REDIRECT] });
  await createClient(server, {
    id: 'finance', name: 'Finance', audience: 'https://finance.example/api', clientType: 'spa', redirectUris: [REDIRECT],
    authPolicy: { signup_policy: 'open', mfa: 'required' },
  });
});

afterAll(async () => {
  await server?.stop();
});

const code = (secret: string, at = Date.now()) =>
  new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({ timestamp: at });

async function rp(clientId: string) {
  return client.discovery(new URL(server.url), clientId, undefined, client.None(), { execute: [client.allowInsecureRequests] });
}

/** A code flow with PKCE; `walk` gets the authorize URL and returns the final redirect to the app. */
async function codeFlow(clientId: string, walk: (url: URL) => Promise<URL>, extra: Record<string, string> = {}) {
  const config = await rp(clientId);
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT, scope: 'openid email offline_access', state,
    code_challenge: await client.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', ...extra,
  });
  const back = await walk(url);
  const tokens = await client.authorizationCodeGrant(config, back, { pkceCodeVerifier: verifier, expectedState: state, idTokenExpected: true });
  return { config, tokens, claims: tokens.claims()! };
}

/** A browser with this session cookie, following hops on our server until the app's redirect URI. */
function browserWith(cookie: string) {
  const browser = new Browser([host]);
  const [name, value] = cookie.split('=');
  browser.setCookie('127.0.0.1', name!, value!);
  return browser;
}

const appRedirect = (result: { res: Response; location: string | undefined }) => {
  expect(result.res.status).toBe(302);
  expect(result.location!.startsWith(REDIRECT)).toBe(true);
  return new URL(result.location!);
};

describe('discovery', () => {
  it('lists acr_values_supported and the acr and amr claims', async () => {
    const meta = (await rp('wiki')).serverMetadata();
    expect(meta.acr_values_supported).toEqual(['urn:gatehouse:acr:mfa', 'urn:gatehouse:acr:pwd']);
    expect(meta.claims_supported).toEqual(expect.arrayContaining(['acr', 'amr', 'auth_time']));
  });
});

describe('step-up with acr_values', () => {
  it('asks a password-only session for its second factor (not the password), then issues acr mfa', async () => {
    const cookie = await signUpCookie(server, 'ada@example.com', 'wiki');
    const started = await fetch(`${server.url}/api/me/totp`, { method: 'POST', headers: { cookie, 'content-type': 'application/json' }, body: '{}' });
    const { secret } = (await started.json()) as { secret: string };
    const confirmAt = Date.now() - 30_000; // a step before now, so the sign-in's code is a fresh one
    const confirmed = await fetch(`${server.url}/api/me/totp/confirm`, {
      method: 'POST', headers: { cookie, 'content-type': 'application/json' }, body: JSON.stringify({ code: code(secret, confirmAt) }),
    });
    expect(confirmed.status).toBe(200);
    const browser = browserWith(cookie);

    // Without acr_values this session's sign-in is what it was: a password.
    const plain = await codeFlow('wiki', async (url) => appRedirect(await browser.follow(url.href)));
    expect(plain.claims).toMatchObject({ acr: 'urn:gatehouse:acr:pwd', amr: ['pwd'] });

    // prompt=none cannot step up.
    const silent = await codeFlow('wiki', async (url) => {
      const back = appRedirect(await browser.follow(url.href));
      expect(back.searchParams.get('error')).toBe('interaction_required');
      throw Object.assign(new Error('stop'), { back });
    }, { acr_values: 'urn:gatehouse:acr:mfa', prompt: 'none' }).then(() => undefined, (e: { back?: URL }) => e.back);
    expect(silent?.searchParams.get('error')).toBe('interaction_required');

    const stepped = await codeFlow('wiki', async (url) => {
      const toStep = await browser.follow(url.href);
      expect(toStep.url).toBe(`${server.url}/sign-in/second-factor`);
      const page = await toStep.res.text();
      expect(page).toContain('Wiki asks for a second factor.');
      expect(page).not.toContain('name="password"');
      return appRedirect(
        await browser.follow(`${server.url}/sign-in/second-factor/totp`, { form: { csrf_token: inputValue(page, 'csrf_token'), code: code(secret) } }),
      );
    }, { acr_values: 'urn:gatehouse:acr:mfa' });
    expect(stepped.claims.acr).toBe('urn:gatehouse:acr:mfa');
    expect(stepped.claims.amr).toEqual(['pwd', 'otp', 'mfa']);
    expect(stepped.claims.sid).toBe(plain.claims.sid); // the same session, raised

    // The session is multi-factor now: another acr_values request is silent.
    const again = await codeFlow('wiki', async (url) => appRedirect(await browser.follow(url.href)), { acr_values: 'urn:gatehouse:acr:mfa', prompt: 'none' });
    expect(again.claims.acr).toBe('urn:gatehouse:acr:mfa');

    // Refresh keeps each family's acr; when Wiki comes to require MFA, the password-only family stops.
    await client.refreshTokenGrant(stepped.config, stepped.tokens.refresh_token!);
    const policy = await server.admin('PATCH', '/api/admin/applications/wiki/auth-policy', { mfa: 'required' });
    expect(((await policy.json()) as { mfa: string }).mfa).toBe('required');
    await expect(client.refreshTokenGrant(plain.config, plain.tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    const kept = await client.refreshTokenGrant(again.config, again.tokens.refresh_token!);
    expect(kept.access_token).toBeTruthy();
    await server.admin('PATCH', '/api/admin/applications/wiki/auth-policy', { mfa: 'optional' });
  });
});

describe('an application that requires MFA', () => {
  it('has a person without a second factor enrol one at sign-in before any code is issued', async () => {
    const browser = new Browser([host]);
    const config = await rp('finance');
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT, scope: 'openid email', state,
      code_challenge: await client.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    });
    // Not signed in: the sign-in page, where Grace creates her account (open sign-up).
    const signInPage = await browser.follow(url.href);
    expect(signInPage.url.startsWith(`${server.url}/sign-in?`)).toBe(true);
    const signUpHref = linkHref(await signInPage.res.text(), 'Create an account');
    const signUpPage = await browser.follow(new URL(signUpHref, server.url).href);
    const form = await signUpPage.res.text();
    const created = await browser.follow(`${server.url}/sign-up`, {
      form: {
        csrf_token: inputValue(form, 'csrf_token'), client_id: 'finance', return_to: inputValue(form, 'return_to'),
        name: 'Grace Hopper', email: 'grace@example.com', password: PASSWORD,
      },
    });
    // The password-only session is taken to enrolment, not to the application.
    expect(created.url).toBe(`${server.url}/sign-in/enrol`);
    const enrol = await created.res.text();
    expect(enrol).toContain('Finance requires a second factor.');
    expect(enrol).toMatch(/<img class="qr" src="data:image\/svg\+xml;base64,/);
    const secret = /data-totp-key>([A-Z2-7]+)</.exec(enrol)![1]!;

    const wrong = await browser.follow(`${server.url}/sign-in/enrol/totp`, { form: { csrf_token: inputValue(enrol, 'csrf_token'), code: '000000' === code(secret) ? '111111' : '000000' } });
    expect(wrong.res.status).toBe(401);
    const done = await browser.follow(`${server.url}/sign-in/enrol/totp`, { form: { csrf_token: inputValue(enrol, 'csrf_token'), code: code(secret) } });
    expect(done.res.status).toBe(200);
    const codesPage = await done.res.text();
    expect(codesPage.match(/<li><code>/g)).toHaveLength(10);
    const back = appRedirect(await browser.follow(new URL(linkHref(codesPage, 'Continue'), server.url).href));
    const tokens = await client.authorizationCodeGrant(config, back, { pkceCodeVerifier: verifier, expectedState: state, idTokenExpected: true });
    expect(tokens.claims()).toMatchObject({ acr: 'urn:gatehouse:acr:mfa', amr: ['pwd', 'otp', 'mfa'], email: 'grace@example.com' });

    // A JSON sign-in for Finance asks for the second factor too.
    const json = await fetch(`${server.url}/api/auth/sign-in/email`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'grace@example.com', password: PASSWORD, applicationId: 'finance' }),
    });
    expect(await json.json()).toEqual({ secondFactor: { methods: ['totp', 'recovery_code'] } });
    expect(json.headers.getSetCookie().some((c) => c.startsWith('gatehouse_session='))).toBe(false);
  });
});
