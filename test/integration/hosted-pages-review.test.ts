/**
 * The hosted-pages half of issue 25 over the wire (buildApp + inject): branding per application
 * (accent colour checked for contrast, logo upload and its safe serving), explicit consent
 * (asked once per scope set, `prompt=consent`, `prompt=none`, withdrawn on the account page),
 * the reader's language (Accept-Language, the switch's cookie, `<html lang>`), the OAuth error
 * page in the hosted layout, and the HTML 404 for browsers.
 */
import { describe, expect, it } from 'vitest';
import { makeApp, type TestApp } from '../helpers/app.js';
import { createApplication, signIn, signUp, sessionCookieOf } from '../helpers/accounts.js';
import { authorize, location, SPA_REDIRECT, spaParams } from '../helpers/oauth-inject.js';
import { csrfFrom, openPage, postForm } from '../helpers/pages.js';
import { consents } from '../../server/db/schema.js';
import { many } from '../../server/db/store.js';

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da6364f8ffbf1e0005fe02fea7d6a4e70000000049454e44ae426082', 'hex');
const SVG = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><rect width="10" height="10" fill="#1d4ed8"/></svg>';

async function withApp(extra: Record<string, unknown> = {}) {
  const t = await makeApp();
  await createApplication(t, {
    id: 'notes', name: 'Notes', audience: 'https://notes.example.com/api', clientType: 'spa', redirectUris: [SPA_REDIRECT],
    authPolicy: { signup_policy: 'open' }, ...extra,
  });
  const res = await signUp(t, { email: 'ada@example.com', name: 'Ada', applicationId: 'notes' });
  expect(res.statusCode).toBe(201);
  return { t, cookie: `gatehouse_session=${sessionCookieOf(res)}` };
}

const upload = (t: TestApp, type: string, body: Buffer | string, id = 'notes') =>
  t.admin('PUT', `/api/admin/applications/${id}/logo`, body, { 'content-type': type });

describe('branding per application', () => {
  it('takes an accent colour that passes AA against the buttons\' white text, and refuses one that fails with the ratio', async () => {
    const { t } = await withApp();
    const ok = await t.admin('PATCH', '/api/admin/applications/notes', { branding: { accentColor: '#1D4ED8' } });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().branding).toEqual({ accentColor: '#1D4ED8', logoUrl: null });

    const pale = await t.admin('PATCH', '/api/admin/applications/notes', { branding: { accentColor: '#ffcc00' } });
    expect(pale.statusCode).toBe(400);
    expect(pale.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(pale.json()).toMatchObject({
      code: 'validation_failed',
      errors: [{ path: 'body.branding.accentColor', message: "has a contrast of 1.51:1 with the buttons' white text; WCAG AA needs at least 4.5:1, so choose a darker colour" }],
    });
    const notHex = await t.admin('PATCH', '/api/admin/applications/notes', { branding: { accentColor: 'blue' } });
    expect(notHex.statusCode).toBe(400);
    expect(notHex.json().code).toBe('validation_failed');
    // Nothing half-written: the good colour stays.
    expect((await t.admin('GET', '/api/admin/applications/notes')).json().branding.accentColor).toBe('#1D4ED8');
    // Also refused at creation.
    const created = await t.admin('POST', '/api/admin/applications', {
      id: 'wiki', name: 'Wiki', audience: 'https://wiki.example.com/api', redirectUris: ['https://wiki.example.com/cb'], branding: { accentColor: '#eeeeee' },
    });
    expect(created.statusCode).toBe(400);
    expect((await t.admin('GET', '/api/admin/applications/wiki')).statusCode).toBe(404);

    // The pages of the application load its accent stylesheet.
    const page = await t.app.inject({ method: 'GET', url: '/sign-in?client_id=notes' });
    expect(page.body).toContain('<link rel="stylesheet" href="/branding/notes/theme.css?v=1d4ed8">');
    const css = await t.app.inject({ method: 'GET', url: '/branding/notes/theme.css?v=1d4ed8' });
    expect(css.statusCode).toBe(200);
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(css.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(css.body).toBe(':root{--button-bg:#1d4ed8;--button-fg:#ffffff}\n');
  });

  it('stores an uploaded PNG or SVG logo and serves it from our origin as an image only', async () => {
    const { t } = await withApp();
    const png = await upload(t, 'image/png', PNG);
    expect(png.statusCode, png.body).toBe(200);
    const logoUrl = png.json().branding.logoUrl as string;
    expect(logoUrl).toMatch(new RegExp(`^${t.config.issuer}/branding/notes/logo\\?v=[0-9a-f]{16}$`));
    const served = await t.app.inject({ method: 'GET', url: logoUrl.slice(t.config.issuer.length) });
    expect(served.statusCode).toBe(200);
    expect(served.headers['content-type']).toBe('image/png');
    expect(served.rawPayload.equals(PNG)).toBe(true);

    const svg = await upload(t, 'image/svg+xml', SVG);
    expect(svg.statusCode).toBe(200);
    const svgServed = await t.app.inject({ method: 'GET', url: (svg.json().branding.logoUrl as string).slice(t.config.issuer.length) });
    expect(svgServed.headers['content-type']).toBe('image/svg+xml');
    expect(svgServed.headers['content-security-policy']).toBe("default-src 'none'; style-src 'unsafe-inline'; sandbox");
    expect(svgServed.headers['x-content-type-options']).toBe('nosniff');
    expect(svgServed.headers['content-disposition']).toBe('attachment; filename="logo.svg"');
    expect(svgServed.body).toBe(SVG);
    // Shown through <img> on the application's pages, never inlined.
    const page = await t.app.inject({ method: 'GET', url: '/sign-in?client_id=notes' });
    expect(page.body).toMatch(/<img src="\/branding\/notes\/logo\?v=[0-9a-f]{16}" alt="" width="48" height="48">/);
    expect(page.body).not.toContain('<svg');
  });

  it('is described in the OpenAPI document: branding and consent on the record, the logo upload\'s body types', async () => {
    const { t } = await withApp();
    const doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
    const record = doc.paths['/api/admin/applications/{id}'].get.responses['200'].content['application/json'].schema;
    expect(Object.keys(record.properties.branding.properties)).toEqual(['accentColor', 'logoUrl']);
    expect(JSON.stringify(record.properties.consent)).toMatch(/"implicit".*"explicit"/);
    const put = doc.paths['/api/admin/applications/{id}/logo'].put;
    expect(Object.keys(put.requestBody.content)).toEqual(['image/png', 'image/svg+xml']);
    expect(Object.keys(put.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '404', '413', '415']));
    expect(Object.keys(doc.paths['/api/admin/applications/{id}/logo'].delete.responses)).toEqual(expect.arrayContaining(['204', '404']));
  });

  it('refuses scripts in an SVG, a fake PNG, other types, and more than 100 KB; removes a logo', async () => {
    const { t } = await withApp();
    const script = await upload(t, 'image/svg+xml', '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
    expect(script.statusCode).toBe(400);
    expect(script.json()).toMatchObject({ code: 'logo_invalid', detail: 'An SVG logo must not contain scripts, event handlers, links, animation or foreign content: it has a <script> element.' });
    const handler = await upload(t, 'image/svg+xml', '<svg xmlns="http://www.w3.org/2000/svg" onload="x()"></svg>');
    expect(handler.json().code).toBe('logo_invalid');
    const fake = await upload(t, 'image/png', 'GIF89a not a png');
    expect(fake.json()).toMatchObject({ status: 400, code: 'logo_invalid', detail: 'This is not a PNG image.' });
    const gif = await upload(t, 'image/gif', Buffer.from('GIF89a'));
    expect(gif.statusCode).toBe(415);
    // A JSON body (the fuzzer's `1e999`) is a value, not an image: 415 naming the image types, never a 500.
    const json = await upload(t, 'application/json', '1e999');
    expect([json.statusCode, json.json().code, json.json().detail]).toEqual([415, 'unsupported_media_type', 'This endpoint accepts image/png or image/svg+xml bodies.']);
    const big = await upload(t, 'image/png', Buffer.concat([PNG, Buffer.alloc(100 * 1024)]));
    expect(big.statusCode).toBe(413);
    expect((await t.admin('GET', '/api/admin/applications/notes')).json().branding.logoUrl).toBeNull();

    expect((await upload(t, 'image/png', PNG)).statusCode).toBe(200);
    const removed = await t.admin('DELETE', '/api/admin/applications/notes/logo');
    expect(removed.statusCode).toBe(204);
    expect((await t.admin('GET', '/api/admin/applications/notes')).json().branding.logoUrl).toBeNull();
    const gone = await t.app.inject({ method: 'GET', url: '/branding/notes/logo' });
    expect(gone.statusCode).toBe(404);
    expect(gone.json().code).toBe('logo_not_found');
    expect((await upload(t, 'image/png', PNG, 'nope')).statusCode).toBe(404);
  });
});

describe('SVG logos are read as XML, by namespace', () => {
  const NS = 'xmlns="http://www.w3.org/2000/svg"';
  const REFUSED = 'An SVG logo must not contain scripts, event handlers, links, animation or foreign content';
  it('refuses scripts and foreign content behind a namespace prefix, and javascript: links written with character references', async () => {
    const { t } = await withApp();
    const refused: [string, string][] = [
      [`<svg ${NS} xmlns:s="http://www.w3.org/2000/svg"><s:script>alert(1)</s:script></svg>`, `${REFUSED}: it has a <script> element.`],
      [`<svg ${NS} xmlns:s="http://www.w3.org/2000/svg"><s:foreignObject><div xmlns="http://www.w3.org/1999/xhtml">x</div></s:foreignObject></svg>`, `${REFUSED}: it has a <foreignObject> element.`],
      [`<svg ${NS}><use href="&#106;avascript:alert(1)"/></svg>`, `${REFUSED}: an href points outside the logo (javascript:alert(1)).`],
      [`<svg ${NS} xmlns:x="http://www.w3.org/1999/xlink"><image x:href="&#x6A;&#x61;vascript:alert(1)"/></svg>`, `${REFUSED}: an href points outside the logo (javascript:alert(1)).`],
      [`<svg ${NS}><set attributeName="href" to="javascript:alert(1)"/></svg>`, `${REFUSED}: it has a <set> element.`],
      [`<svg ${NS}><a href="https://example.com/"><rect width="1" height="1"/></a></svg>`, `${REFUSED}: it has an <a> element.`],
      [`<svg ${NS} xmlns:s="http://www.w3.org/2000/svg" s:onload="alert(1)"/>`, `${REFUSED}: it has an onload attribute.`],
      [`<svg ${NS}><rect ONCLICK="alert(1)"/></svg>`, `${REFUSED}: it has an ONCLICK attribute.`],
      [`<svg ${NS}><image href="https://tracker.example/p.png"/></svg>`, `${REFUSED}: an href points outside the logo (https://tracker.example/p.png).`],
      [`<svg ${NS}><h:script xmlns:h="http://www.w3.org/1999/xhtml">alert(1)</h:script></svg>`, `${REFUSED}: it has a <script> element outside the SVG namespace.`],
      [`<?xml-stylesheet href="https://example.com/x.xsl"?><svg ${NS}/>`, 'An SVG logo must not contain processing instructions (<?xml-stylesheet?>).'],
      [`<!DOCTYPE svg [<!ENTITY x "javascript:">]><svg ${NS}/>`, 'An SVG logo must not declare a DOCTYPE or entities.'],
      [`<svg ${NS}><rect></svg>`, 'This SVG is not well-formed XML: 1:52: unexpected close tag.'],
      ['<svg><rect/></svg>', 'This is not an SVG image (its root must be an <svg> element in the SVG namespace).'],
      [`<html xmlns="http://www.w3.org/1999/xhtml"><svg ${NS}/></html>`, 'This is not an SVG image (its root must be an <svg> element in the SVG namespace).'],
    ];
    for (const [svg, detail] of refused) {
      const res = await upload(t, 'image/svg+xml', svg);
      expect([res.statusCode, res.json().code, res.json().detail], svg).toEqual([400, 'logo_invalid', detail]);
    }
    expect((await t.admin('GET', '/api/admin/applications/notes')).json().branding.logoUrl).toBeNull();
  });

  it('takes what drawing programs write: a prefixed root, gradients linked by fragment, an embedded PNG, styles, titles', async () => {
    const { t } = await withApp();
    const accepted = [
      '<s:svg xmlns:s="http://www.w3.org/2000/svg" viewBox="0 0 4 4"><s:rect width="4" height="4"/></s:svg>',
      `<?xml version="1.0" encoding="UTF-8"?>\n<!-- made by hand -->\n<svg ${NS} xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 4 4"><title>Notes</title>` +
        '<defs><linearGradient id="g"><stop offset="0" stop-color="#123"/></linearGradient><style>.a{fill:url(#g)}</style></defs>' +
        '<rect class="a" width="4" height="4" style="fill: url(#g)"/><use xlink:href="#g"/>' +
        '<image width="1" height="1" href="data:image/png;base64,iVBORw0KGgo="/><text x="0" y="2">N &amp; co</text></svg>',
    ];
    for (const svg of accepted) expect((await upload(t, 'image/svg+xml', svg)).statusCode, svg).toBe(200);
  });
});

describe('explicit consent', () => {
  it('asks once per scope set, again for prompt=consent, answers consent_required to prompt=none, and is withdrawn on the account page', async () => {
    const { t, cookie } = await withApp({ consent: 'explicit' });
    // prompt=none cannot ask.
    const silent = location(await authorize(t, spaParams({ prompt: 'none' }).params, cookie));
    expect(silent.searchParams.get('error')).toBe('consent_required');
    expect(silent.searchParams.get('state')).toBe('xyz');

    const first = location(await authorize(t, spaParams().params, cookie));
    expect(first.pathname).toBe('/consent');
    const page = await openPage(t, first.pathname + first.search, cookie);
    expect(page.res.statusCode).toBe(200);
    expect(page.res.body).toContain('<title>Allow Notes? · Gatehouse</title>');
    expect(page.res.body).toContain('<li>Know who you are</li>');
    expect(page.res.body).toContain('<li>Stay signed in until you sign it out</li>');
    const returnTo = first.searchParams.get('return_to')!;
    const approved = await postForm(t, '/consent', { csrf_token: csrfFrom(page.res), return_to: returnTo, decision: 'approve' }, page.cookie);
    expect(approved.statusCode).toBe(303);
    expect(approved.headers.location).toBe(returnTo);
    expect(location(await t.app.inject({ method: 'GET', url: returnTo, headers: { cookie } })).searchParams.get('code')).toBeTruthy();
    expect((await many(t.db.select().from(consents))).map((c) => c.scope)).toEqual(['openid offline_access']);

    // Approved: no question for the same scopes; asked again for a new one, and for prompt=consent.
    expect(location(await authorize(t, spaParams().params, cookie)).searchParams.get('code')).toBeTruthy();
    expect(location(await authorize(t, spaParams({ scope: 'openid email' }).params, cookie)).pathname).toBe('/consent');
    const demanded = location(await authorize(t, spaParams({ prompt: 'consent' }).params, cookie));
    expect(demanded.pathname).toBe('/consent');
    // The consent page takes `consent` out of the request it resumes.
    expect(new URLSearchParams(demanded.searchParams.get('return_to')!.split('?')[1]).get('prompt')).toBeNull();

    // Denying sends access_denied to the application.
    const denied = await postForm(t, '/consent', { csrf_token: csrfFrom(page.res), return_to: demanded.searchParams.get('return_to')!, decision: 'deny' }, page.cookie);
    expect(denied.statusCode).toBe(303);
    const back = new URL(String(denied.headers.location));
    expect(back.origin + back.pathname).toBe(SPA_REDIRECT);
    expect(Object.fromEntries(back.searchParams)).toEqual({ error: 'access_denied', error_description: 'The person did not allow access.', state: 'xyz', iss: t.config.issuer });

    // The account page shows it, and withdraws it.
    const account = await openPage(t, '/account', cookie);
    expect(account.res.body).toContain('data-consent="notes"');
    expect(account.res.body).toContain('Withdraw access for Notes');
    const withdrawn = await postForm(t, '/account/consents/notes/withdraw', { csrf_token: csrfFrom(account.res) }, account.cookie);
    expect(withdrawn.statusCode).toBe(303);
    expect(withdrawn.headers.location).toBe('/account?notice=consent_withdrawn#app-notes');
    expect(await many(t.db.select().from(consents))).toEqual([]);
    expect(location(await authorize(t, spaParams().params, cookie)).pathname).toBe('/consent');
  });

  it('is not asked under the default implicit policy, and the consent page refuses what is not an authorization request', async () => {
    const { t, cookie } = await withApp();
    expect((await t.admin('GET', '/api/admin/applications/notes')).json().consent).toBe('implicit');
    expect(location(await authorize(t, spaParams().params, cookie)).searchParams.get('code')).toBeTruthy();
    const bogus = await t.app.inject({ method: 'GET', url: '/consent?return_to=/account', headers: { cookie } });
    expect(bogus.statusCode).toBe(400);
    expect(bogus.body).toContain('The request cannot be processed.');
    const badPolicy = await t.admin('PATCH', '/api/admin/applications/notes', { consent: 'sometimes' });
    expect(badPolicy.statusCode).toBe(400);
    expect(badPolicy.json().code).toBe('validation_failed');
  });
});

describe('the reader\'s language', () => {
  it('follows Accept-Language, then the switch\'s cookie, and says so in <html lang> and Content-Language', async () => {
    const { t } = await withApp();
    const german = await t.app.inject({ method: 'GET', url: '/sign-in?client_id=notes', headers: { 'accept-language': 'de-DE,de;q=0.9,en;q=0.5' } });
    expect(german.body).toContain('<html lang="de">');
    expect(german.headers['content-language']).toBe('de');
    expect(german.body).toContain('<h1>Bei Notes anmelden</h1>');
    expect(german.body).toContain('<a href="/language/fr?next=%2Fsign-in%3Fclient_id%3Dnotes%26return_to%3D%252Faccount" lang="fr" hreflang="fr">Français</a>');

    const chosen = await t.app.inject({ method: 'GET', url: '/language/fr?next=%2Fsign-in%3Fclient_id%3Dnotes', headers: { 'accept-language': 'de' } });
    expect(chosen.statusCode).toBe(303);
    expect(chosen.headers.location).toBe('/sign-in?client_id=notes');
    expect(String(chosen.headers['set-cookie'])).toBe('gatehouse_lang=fr; Max-Age=31536000; Path=/; HttpOnly; SameSite=Lax');
    const french = await t.app.inject({ method: 'GET', url: '/sign-in?client_id=notes', headers: { 'accept-language': 'de', cookie: 'gatehouse_lang=fr' } });
    expect(french.body).toContain('<html lang="fr">');
    expect(french.body).toContain('<h1>Se connecter à Notes</h1>');

    // Never another site; an unknown language is a 404 page.
    const away = await t.app.inject({ method: 'GET', url: '/language/es?next=//evil.example/' });
    expect(away.headers.location).toBe('/account');
    expect((await t.app.inject({ method: 'GET', url: '/language/xx' })).statusCode).toBe(404);
    // Unsupported languages get the installation's (English here).
    expect((await t.app.inject({ method: 'GET', url: '/sign-in', headers: { 'accept-language': 'ja' } })).body).toContain('<html lang="en">');
  });
});

describe('errors as pages', () => {
  it('shows the OAuth error page in the hosted layout, translated, with the code to quote', async () => {
    const { t } = await withApp();
    const res = await authorize(t, { ...spaParams().params, client_id: 'nope' });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['content-security-policy']).toContain("default-src 'none'");
    expect(res.body).toContain('<link rel="stylesheet" href="/assets/gatehouse.css">');
    expect(res.body).toContain('<h1>This sign-in request cannot continue</h1>');
    expect(res.body).toContain('<code>invalid_client</code>');
    const german = await t.app.inject({ method: 'GET', url: `/api/auth/oauth2/authorize?client_id=notes&redirect_uri=${encodeURIComponent('https://evil.example/cb')}`, headers: { 'accept-language': 'de' } });
    expect(german.statusCode).toBe(400);
    expect(german.body).toContain('Die Rücksprungadresse, die Notes gesendet hat, fehlt oder ist für diese Anwendung nicht eingetragen.');
    expect(german.body).toContain('<div class="brand"><span>Notes</span></div>');
  });

  it('answers a browser\'s unknown address with the HTML 404 page, and programs with problem+json', async () => {
    const { t } = await withApp();
    const page = await t.app.inject({ method: 'GET', url: '/no/such/page', headers: { accept: 'text/html,application/xhtml+xml' } });
    expect(page.statusCode).toBe(404);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.body).toContain('<h1>Page not found</h1>');
    const api = await t.app.inject({ method: 'GET', url: '/api/nothing', headers: { accept: 'text/html' } });
    expect(api.statusCode).toBe(404);
    expect(api.json().code).toBe('route_not_found');
    const program = await t.app.inject({ method: 'GET', url: '/no/such/page' });
    expect(program.json().code).toBe('route_not_found');
  });

  it('names the reason on the sign-in page of an invite-only application up front', async () => {
    const { t } = await withApp();
    expect((await t.admin('PATCH', '/api/admin/applications/notes/auth-policy', { signup_policy: 'invite_only' })).statusCode).toBe(200);
    const res = await t.app.inject({ method: 'GET', url: '/sign-in?client_id=notes' });
    expect(res.body).toContain('<p class="notice" data-policy-note>Notes is open to invited people only. Sign in with the address your invitation was sent to, or ask its administrator for an invitation.</p>');
    // A member already in signs in as before.
    expect((await signIn(t, { email: 'ada@example.com', applicationId: 'notes' })).statusCode).toBe(200);
  });

  it('counts the lock-out down in words, warns on the attempt before it, focuses the password, and always offers help', async () => {
    const { t } = await withApp();
    const page = await openPage(t, '/sign-in?client_id=notes');
    const attempt = () => postForm(t, '/sign-in', { csrf_token: csrfFrom(page.res), client_id: 'notes', return_to: '/account', email: 'ada@example.com', password: 'wrong guess' }, page.cookie);
    for (let i = 0; i < 3; i++) expect((await attempt()).statusCode).toBe(401);
    const fourth = await attempt();
    expect(fourth.body).toContain('<p class="notice" role="status" data-lock-warning>One more wrong password and sign-in with this address pauses for 30 seconds.</p>');
    expect(fourth.body).toMatch(/<input type="password" name="password" autocomplete="current-password" required maxlength="256" autofocus aria-describedby="sign-in-error">/);
    const fifth = await attempt();
    // The wrong password that sets the lock is a 401; tries while locked are 429 with Retry-After.
    expect(fifth.statusCode).toBe(401);
    expect(fifth.body).toContain('data-countdown="30" data-one="Too many wrong passwords. Try again in # second." data-other="Too many wrong passwords. Try again in # seconds." data-done="You can try again now.">Too many wrong passwords. Try again in 30 seconds.</p>');
    expect(fifth.body).not.toContain('The e-mail address or password is not correct.');
    expect(fifth.body).toContain('<script type="module" src="/assets/js/pages.js"></script>');
    // No mail configured here: who to ask instead of the reset link.
    expect(fifth.body).toContain('Forgot your password? Ask your administrator to reset it.');
    t.clock.advance(12_000);
    const later = await attempt();
    expect(later.statusCode).toBe(429);
    expect(later.headers['retry-after']).toBe('18');
    expect(later.body).toContain('>Too many wrong passwords. Try again in 18 seconds.</p>');
    // In German too.
    const german = await t.app.inject({
      method: 'POST', url: '/sign-in',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: page.cookie, 'accept-language': 'de' },
      payload: new URLSearchParams({ csrf_token: csrfFrom(page.res), client_id: 'notes', return_to: '/account', email: 'ada@example.com', password: 'x' }).toString(),
    });
    expect(german.body).toContain('>Zu viele falsche Passwörter. Versuchen Sie es in 18 Sekunden erneut.</p>');
  });
});

describe("the operator's passkey hint (issue 44, m3)", () => {
  it('is on the control panel\'s own sign-in page only: an application\'s sign-in page and the account page do not tell people how to run the server', async () => {
    // This issuer is an IP address over plain http: passkeys cannot be offered.
    const { t, cookie } = await withApp();
    expect((await t.admin('POST', '/api/admin/setup/owner', { email: 'olive@example.com', name: 'Olive', password: 'violet-harbour-teapot-glacier-91' })).statusCode).toBe(201);
    const hint = "Passkeys need a host name, but this server's address (127.0.0.1:8787) is an IP address: run Gatehouse in LAN mode";

    const app = (await openPage(t, '/sign-in?client_id=notes')).res.body;
    expect(app).not.toContain('data-passkeys-unavailable');
    expect(app).not.toContain('LAN mode');

    const panel = (await openPage(t, '/sign-in?client_id=_gatehouse-panel')).res.body;
    expect(panel).toContain(`<p class="muted" data-passkeys-unavailable>Passkeys are not offered here. ${hint}`);

    const account = (await openPage(t, '/account', cookie)).res.body;
    expect(account).toContain('<p class="muted" data-passkeys-unavailable>Passkeys cannot be added here.</p>');
    expect(account).not.toContain('LAN mode');
  });
});
