/**
 * SAML single logout through `inject`, on SQLite and PostgreSQL (issue 42, spec saml.md "Single
 * logout"): an SP's LogoutRequest ends the Gatehouse session (its OIDC back-channel logouts queued
 * as for any sign-out), the other SPs of the session are told one after another through the
 * browser, and the initiator gets a signed LogoutResponse; the account page's sign-out and an OIDC
 * end-session tell the SAML SPs the same way; the round is bounded to 10 s; unsigned or foreign
 * logout messages are refused.
 */
import { inflateRawSync } from 'node:zlib';
import { createPublicKey, verify as cryptoVerify } from 'node:crypto';
import { DOMParser } from '@xmldom/xmldom';
import { beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { makeApp, type TestApp } from '../helpers/app.js';
import { cookieValue, signIn, signUp, sessionCookieOf } from '../helpers/accounts.js';
import { idpCertificates, el, postedForm, redirectUrl, requestId, responseOf, samlSettings, spKey, statusOf, verifySigned, authnRequestXml, type SpKey } from '../helpers/saml-sp.js';
import { auditLog, backchannelLogouts } from '../../server/db/schema.js';
import { many } from '../../server/db/store.js';

let t: TestApp;
let certs: string[];
let key: SpKey;

beforeAll(async () => {
  t = await makeApp({ perFile: true, clock: new Date('2026-11-29T12:00:00Z'), config: { env: { GATEHOUSE_SIGN_UP_RATE_LIMIT: '200', GATEHOUSE_SIGN_IN_RATE_LIMIT: '200' } } });
  certs = await idpCertificates(t);
  key = await spKey();
});

const get = (url: string, cookie = '') => t.app.inject({ method: 'GET', url, headers: cookie ? { cookie } : {} });

let n = 0;
interface Sp { id: string; entityId: string; acs: string; slo: string }
async function sp(extra: Record<string, unknown> = {}, binding = 'HTTP-Redirect'): Promise<Sp> {
  const id = `slo${++n}`;
  const host = `${id}.example.com`;
  const saml = samlSettings({ entityId: `https://${host}/md`, acs: [{ url: `https://${host}/acs`, binding: 'HTTP-POST', index: 0 }], slo: { url: `https://${host}/slo`, binding }, ...extra });
  const res = await t.admin('POST', '/api/admin/applications', {
    id, name: `App ${n}`, audience: `https://${host}/api`, redirectUris: [`https://${host}/cb`], authPolicy: { signup_policy: 'open' }, saml,
  });
  expect(res.statusCode, res.body).toBe(201);
  return { id, entityId: `https://${host}/md`, acs: `https://${host}/acs`, slo: `https://${host}/slo` };
}

/** A person signed in to every SP (each realm marked, each SSO answered): their cookie and each SP's NameID and SessionIndex. */
async function signedInEverywhere(sps: Sp[]) {
  const email = `lo${++n}@example.com`;
  const up = await signUp(t, { email, applicationId: sps[0]!.id });
  const cookie = `gatehouse_session=${sessionCookieOf(up)}`;
  const sessions: Record<string, { nameId: string; sessionIndex: string }> = {};
  for (const s of sps) {
    expect((await signIn(t, { email, applicationId: s.id }, { cookie })).statusCode).toBe(200);
    const { doc } = responseOf(await get(redirectUrl('/saml/sso', authnRequestXml(t, { issuer: s.entityId, acsUrl: s.acs })), cookie));
    sessions[s.id] = { nameId: el(doc, 'NameID').textContent!, sessionIndex: el(doc, 'AuthnStatement').getAttribute('SessionIndex')! };
  }
  return { email, personId: up.json().user.id as string, cookie, sessions };
}

const logoutRequestXml = (s: Sp, nameId: string, sessionIndex: string | undefined, id = requestId()) =>
  `<samlp:LogoutRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${id}" Version="2.0" IssueInstant="${t.clock.now().toISOString()}" Destination="${t.config.issuer}/saml/slo"><saml:Issuer>${s.entityId}</saml:Issuer><saml:NameID>${nameId}</saml:NameID>${sessionIndex ? `<samlp:SessionIndex>${sessionIndex}</samlp:SessionIndex>` : ''}</samlp:LogoutRequest>`;

const logoutResponseXml = (s: Sp, inResponseTo: string, status = 'urn:oasis:names:tc:SAML:2.0:status:Success') =>
  `<samlp:LogoutResponse xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${requestId()}" Version="2.0" IssueInstant="${t.clock.now().toISOString()}" Destination="${t.config.issuer}/saml/slo" InResponseTo="${inResponseTo}"><saml:Issuer>${s.entityId}</saml:Issuer><samlp:Status><samlp:StatusCode Value="${status}"/></samlp:Status></samlp:LogoutResponse>`;

/** Our HTTP-Redirect message at an SP's endpoint: the XML, with its query signature verified against the IdP's certificate. */
function redirectedMessage(location: string, to: string, param: string) {
  const url = new URL(location);
  expect(`${url.origin}${url.pathname}`).toBe(to);
  const raw = url.search.slice(1).split('&');
  const signedPart = raw.filter((p) => !p.startsWith('Signature=')).join('&');
  const signature = Buffer.from(decodeURIComponent(raw.find((p) => p.startsWith('Signature='))!.slice('Signature='.length)), 'base64');
  expect(url.searchParams.get('SigAlg')).toBe('http://www.w3.org/2001/04/xmldsig-more#rsa-sha256');
  expect(certs.some((c) => cryptoVerify('sha256', Buffer.from(signedPart), createPublicKey(c), signature))).toBe(true);
  const xml = inflateRawSync(Buffer.from(url.searchParams.get(param)!, 'base64')).toString();
  return { xml, doc: new DOMParser().parseFromString(xml, 'text/xml') as unknown as Document, relayState: url.searchParams.get('RelayState') ?? undefined };
}

const meStatus = async (cookie: string) => (await get('/api/me/memberships', cookie)).statusCode;

describe('SP-initiated single logout', () => {
  it('ends the Gatehouse session, tells the other SPs one after another, answers the initiator; OIDC back-channel logout runs too', async () => {
    const a = await sp();
    const b = await sp();
    const c = await sp({}, 'HTTP-POST');
    const quiet = await sp({ slo: null });
    // An OIDC application of the same session with a back-channel logout endpoint.
    const rpId = `oidc${n}`;
    const oidc = await t.admin('POST', '/api/admin/applications', {
      id: rpId, name: 'OIDC', audience: `https://${rpId}.example.com/api`, redirectUris: [`https://${rpId}.example.com/cb`],
      backchannelLogoutUri: `https://${rpId}.example.com/logout`, authPolicy: { signup_policy: 'open' },
    });
    expect(oidc.statusCode, oidc.body).toBe(201);
    const who = await signedInEverywhere([a, b, c, quiet]);
    // The OIDC application got tokens in this session (so it hears the back-channel logout).
    const { authorize, location, token } = await import('../helpers/oauth-inject.js');
    const { pkcePair } = await import('../helpers/oauth-server.js');
    const pkce = pkcePair();
    expect((await signIn(t, { email: who.email, applicationId: rpId }, { cookie: who.cookie })).statusCode).toBe(200);
    const code = location(await authorize(t, {
      client_id: rpId, redirect_uri: `https://${rpId}.example.com/cb`, response_type: 'code', scope: 'openid', state: 's', code_challenge: pkce.challenge, code_challenge_method: 'S256',
    }, who.cookie)).searchParams.get('code')!;
    const tokens = await token(t, {
      grant_type: 'authorization_code', code, redirect_uri: `https://${rpId}.example.com/cb`, client_id: rpId, client_secret: oidc.json().clientSecret, code_verifier: pkce.verifier,
    });
    expect(tokens.statusCode, tokens.body).toBe(200);

    const id = requestId();
    const started = await get(redirectUrl('/saml/slo', logoutRequestXml(a, who.sessions[a.id]!.nameId, who.sessions[a.id]!.sessionIndex, id), { relayState: 'from-a' }), who.cookie);
    // The session is over at once, the cookie cleared; the back-channel logout is queued.
    expect(await meStatus(who.cookie)).toBe(401);
    expect(started.cookies.find((ck) => ck.name === 'gatehouse_session')?.value).toBe('');
    const queued = await many(t.db.select().from(backchannelLogouts).where(eq(backchannelLogouts.applicationId, rpId)));
    expect(queued).toHaveLength(1);

    // B first (HTTP-Redirect, signed in the query).
    expect(started.statusCode).toBe(302);
    const toB = redirectedMessage(started.headers.location!, b.slo, 'SAMLRequest');
    expect(el(toB.doc, 'LogoutRequest').getAttribute('Destination')).toBe(b.slo);
    expect(el(toB.doc, 'NameID').textContent).toBe(who.sessions[b.id]!.nameId);
    expect(el(toB.doc, 'SessionIndex').textContent).toBe(who.sessions[b.id]!.sessionIndex);
    const bDone = await get(redirectUrl('/saml/slo', logoutResponseXml(b, el(toB.doc, 'LogoutRequest').getAttribute('ID')!), { param: 'SAMLResponse' }));
    // Then C (HTTP-POST, enveloped signature), by the auto-posting form.
    const toC = postedForm(bDone);
    expect(toC.action).toBe(c.slo);
    const cXml = Buffer.from(toC.fields.SAMLRequest!, 'base64').toString();
    const cDoc = new DOMParser().parseFromString(cXml, 'text/xml') as unknown as Document;
    expect(verifySigned(cXml, el(cDoc, 'LogoutRequest').getAttribute('ID')!, certs)).toBe(true);
    const cDone = await t.app.inject({
      method: 'POST', url: '/saml/slo', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ SAMLResponse: Buffer.from(logoutResponseXml(c, el(cDoc, 'LogoutRequest').getAttribute('ID')!)).toString('base64') }).toString(),
    });
    // Last, A's LogoutResponse, with its RelayState; the SP without an endpoint was not asked.
    expect(cDone.statusCode).toBe(302);
    const toA = redirectedMessage(cDone.headers.location!, a.slo, 'SAMLResponse');
    expect(toA.relayState).toBe('from-a');
    expect(el(toA.doc, 'LogoutResponse').getAttribute('InResponseTo')).toBe(id);
    expect(statusOf(toA.doc)).toEqual(['urn:oasis:names:tc:SAML:2.0:status:Success']);
    const audits = await many(t.db.select().from(auditLog).where(eq(auditLog.action, 'saml.logout')));
    expect(audits.some((e) => e.applicationId === a.id && (e.details as { initiator: string }).initiator === 'sp')).toBe(true);
    // A second answer to the same request moves nothing.
    const late = await get(redirectUrl('/saml/slo', logoutResponseXml(b, el(toB.doc, 'LogoutRequest').getAttribute('ID')!), { param: 'SAMLResponse' }));
    expect(late.statusCode).toBe(400);
    expect(late.body).toContain('<code>unknown_request</code>');
  });

  it('is bounded: an SP answering after 10 s ends the round, the rest skipped, the initiator told PartialLogout', async () => {
    const [a, b, c] = [await sp(), await sp(), await sp()];
    const who = await signedInEverywhere([a, b, c]);
    const started = await get(redirectUrl('/saml/slo', logoutRequestXml(a, who.sessions[a.id]!.nameId, undefined)), who.cookie);
    const toB = redirectedMessage(started.headers.location!, b.slo, 'SAMLRequest');
    t.clock.advance(10_001);
    const late = await get(redirectUrl('/saml/slo', logoutResponseXml(b, el(toB.doc, 'LogoutRequest').getAttribute('ID')!), { param: 'SAMLResponse' }));
    const toA = redirectedMessage(late.headers.location!, a.slo, 'SAMLResponse');
    expect(statusOf(toA.doc)).toEqual(['urn:oasis:names:tc:SAML:2.0:status:Success', 'urn:oasis:names:tc:SAML:2.0:status:PartialLogout']);
  });

  it('with certificates, the SP must sign: unsigned and foreign-signed requests are refused, signed ones accepted', async () => {
    const a = await sp({ spCertificates: [key.certificatePem] });
    const who = await signedInEverywhere([a]);
    const xml = () => logoutRequestXml(a, who.sessions[a.id]!.nameId, who.sessions[a.id]!.sessionIndex);
    const unsigned = await get(redirectUrl('/saml/slo', xml()), who.cookie);
    expect(unsigned.statusCode).toBe(400);
    expect(unsigned.body).toContain('<code>unsigned</code>');
    const foreign = await get(redirectUrl('/saml/slo', xml(), { key: await spKey('evil.example') }), who.cookie);
    expect(foreign.body).toContain('<code>bad_signature</code>');
    expect(await meStatus(who.cookie)).toBe(200);
    const signed = await get(redirectUrl('/saml/slo', xml(), { key }), who.cookie);
    expect(signed.statusCode).toBe(302);
    expect(await meStatus(who.cookie)).toBe(401);
    expect(statusOf(redirectedMessage(signed.headers.location!, a.slo, 'SAMLResponse').doc)).toEqual(['urn:oasis:names:tc:SAML:2.0:status:Success']);
  });
});

describe('sign-outs that start at Gatehouse', () => {
  it('the account page: the SAML SPs are told, then back to the account page', async () => {
    const [a, b] = [await sp(), await sp()];
    const who = await signedInEverywhere([a, b]);
    const page = await get('/account', who.cookie);
    const csrf = /action="\/account\/sign-out">\s*<input type="hidden" name="csrf_token" value="([^"]+)"/.exec(page.body)![1]!;
    const out = await t.app.inject({
      method: 'POST', url: '/account/sign-out',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `${who.cookie}; gatehouse_csrf=${cookieValue(page, 'gatehouse_csrf')}` },
      payload: new URLSearchParams({ csrf_token: csrf }).toString(),
    });
    expect(await meStatus(who.cookie)).toBe(401);
    const first = redirectedMessage(out.headers.location!, a.slo, 'SAMLRequest');
    const second = await get(redirectUrl('/saml/slo', logoutResponseXml(a, el(first.doc, 'LogoutRequest').getAttribute('ID')!), { param: 'SAMLResponse' }));
    const toB = redirectedMessage(second.headers.location!, b.slo, 'SAMLRequest');
    const done = await get(redirectUrl('/saml/slo', logoutResponseXml(b, el(toB.doc, 'LogoutRequest').getAttribute('ID')!), { param: 'SAMLResponse' }));
    expect(done.statusCode).toBe(303);
    expect(done.headers.location).toBe('/account?notice=signed_out');
  });

  it('an OIDC end-session: the SAML SPs are told, then the post-logout redirect with its state', async () => {
    const a = await sp();
    const rp = `rp${++n}`;
    expect((await t.admin('POST', '/api/admin/applications', {
      id: rp, name: 'RP', audience: `https://${rp}.example.com/api`, redirectUris: [`https://${rp}.example.com/cb`], postLogoutRedirectUris: [`https://${rp}.example.com/bye`],
      authPolicy: { signup_policy: 'open' },
    })).statusCode).toBe(201);
    const who = await signedInEverywhere([a]);
    const page = await get(`/api/auth/oauth2/end-session?client_id=${rp}&post_logout_redirect_uri=${encodeURIComponent(`https://${rp}.example.com/bye`)}&state=st`, who.cookie);
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.body)![1]!;
    const out = await t.app.inject({
      method: 'POST', url: '/api/auth/oauth2/end-session',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `${who.cookie}; gatehouse_csrf=${cookieValue(page, 'gatehouse_csrf')}` },
      payload: new URLSearchParams({ csrf_token: csrf, client_id: rp, post_logout_redirect_uri: `https://${rp}.example.com/bye`, state: 'st' }).toString(),
    });
    expect(await meStatus(who.cookie)).toBe(401);
    const toA = redirectedMessage(out.headers.location!, a.slo, 'SAMLRequest');
    const done = await get(redirectUrl('/saml/slo', logoutResponseXml(a, el(toA.doc, 'LogoutRequest').getAttribute('ID')!), { param: 'SAMLResponse' }));
    expect(done.statusCode).toBe(303);
    expect(done.headers.location).toBe(`https://${rp}.example.com/bye?state=st`);
    // Without SAML SPs in the session, end-session answers as before.
    const plain = await signUp(t, { email: `plain${n}@example.com`, applicationId: rp });
    const out2 = await get(`/api/auth/oauth2/end-session?client_id=${rp}`, `gatehouse_session=${sessionCookieOf(plain)}`);
    expect(out2.statusCode).toBe(200);
  });
});
