/**
 * SAML single sign-on through `inject`, on SQLite and PostgreSQL (issue 42, spec saml.md "Single
 * sign-on"): the Response and Assertion as the contract lists them, both signatures, the ACS rules,
 * replay, ForceAuthn, IsPassive, RelayState, signed requests, NameID formats, attributes from the
 * claim sources, admission as for OIDC (sign-up policy, MFA step-up, consent, shared sign-in),
 * IdP-initiated sign-on, hostile input answered by the hosted page and audited, and the metric.
 * One app for the file; each test uses SPs and people of its own. The real SPs (mod_auth_mellon,
 * pysaml2) are test/interop/saml-*.test.ts.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { deflateRawSync } from 'node:zlib';
import { makeApp, type TestApp } from '../helpers/app.js';
import { PASSWORD, cookieValue, postJson, signIn, signUp, sessionCookieOf } from '../helpers/accounts.js';
import { totpCode, nextStep } from '../helpers/admins.js';
import { me } from '../helpers/self-service.js';
import {
  RSA_SHA1, SP_ACS, SP_ENTITY, attributeValues, authnRequestXml, el, idpCertificates, postBody, postedForm, redirectUrl, requestId, responseOf,
  samlSettings, signedBySp, spKey, statusOf, verifySigned, type AuthnOptions, type SpKey,
} from '../helpers/saml-sp.js';
import { auditLog } from '../../server/db/schema.js';
import { many } from '../../server/db/store.js';
import { counterValue } from '../helpers/metrics.js';
import { desc, eq } from 'drizzle-orm';

let t: TestApp;
let certs: string[];
let spCert: SpKey;
const START = new Date('2026-11-29T10:00:00Z');

beforeAll(async () => {
  t = await makeApp({ perFile: true, clock: START, config: { env: { GATEHOUSE_SIGN_UP_RATE_LIMIT: '200', GATEHOUSE_SIGN_IN_RATE_LIMIT: '200' } } });
  certs = await idpCertificates(t);
  spCert = await spKey();
});

let spCount = 0;
/** A SAML application of its own (entity ID, ACS on its own host), open sign-up unless said. */
async function samlApp(saml: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
  const n = ++spCount;
  const id = `sp${n}`;
  const host = `sp${n}.example.com`;
  const settings = samlSettings({
    entityId: `https://${host}/saml/metadata`,
    acs: [{ url: `https://${host}/saml/acs`, binding: 'HTTP-POST', index: 0 }, { url: `https://${host}/saml/acs2`, binding: 'HTTP-POST', index: 7 }],
    slo: { url: `https://${host}/saml/slo`, binding: 'HTTP-Redirect' },
    ...saml,
  });
  const res = await t.admin('POST', '/api/admin/applications', {
    id, name: `SP ${n}`, audience: `https://${host}/api`, redirectUris: [`https://${host}/`], authPolicy: { signup_policy: 'open' }, ...extra, saml: settings,
  });
  expect(res.statusCode, res.body).toBe(201);
  return { id, entityId: settings.entityId as string, acs: `https://${host}/saml/acs`, acs2: `https://${host}/saml/acs2` };
}

let people = 0;
/** A person signed up to `appId` (marking its realm): their id and session cookie header. */
async function person(appId: string, extra: Record<string, unknown> = {}) {
  const email = `p${++people}@example.com`;
  const res = await signUp(t, { email, name: `Person ${people}`, applicationId: appId, ...extra });
  expect(res.statusCode, res.body).toBe(201);
  return { id: res.json().user.id as string, email, cookie: `gatehouse_session=${sessionCookieOf(res)}` };
}

const get = (url: string, cookie = '') => t.app.inject({ method: 'GET', url, headers: cookie ? { cookie } : {} });
const sso = (sp: { entityId: string; acs: string }, cookie: string, o: AuthnOptions = {}, relayState?: string) =>
  get(redirectUrl('/saml/sso', authnRequestXml(t, { issuer: sp.entityId, acsUrl: sp.acs, ...o }), { relayState }), cookie);

/** The refusal page: 400, the reason as its code, no redirect, and a `saml.refused` audit entry with the reason. */
async function expectRefused(res: Awaited<ReturnType<typeof get>>, reason: string, appId?: string) {
  expect(res.statusCode, res.body.slice(0, 300)).toBe(400);
  expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
  expect(res.headers.location).toBeUndefined();
  expect(res.body).toContain(`<code>${reason}</code>`);
  expect(res.body).not.toContain('<form method="post" action="https://');
  const [entry] = await many(t.db.select().from(auditLog).where(eq(auditLog.action, 'saml.refused')).orderBy(desc(auditLog.at), desc(auditLog.id)).limit(1));
  expect(entry).toMatchObject({ action: 'saml.refused', applicationId: appId ?? null });
  expect((entry!.details as { reason: string }).reason).toBe(reason);
  expect(JSON.stringify(entry!.details)).not.toContain('<');
}

const metric = (result: string) => counterValue(t, 'gatehouse_saml_responses_total', { result });

describe('the Response to an AuthnRequest with a session present', () => {
  it('carries everything the contract lists, signed twice, with RelayState unchanged', async () => {
    const sp = await samlApp();
    const p = await person(sp.id);
    const before = await metric('success');
    const id = requestId();
    const relay = 'https://sp1.example.com/wiki/page?x=1&y=é';
    const res = await sso(sp, p.cookie, { id }, relay);
    const { xml, doc, relayState, action } = responseOf(res);
    expect(action).toBe(sp.acs);
    expect(relayState).toBe(relay);
    expect(res.headers['cache-control']).toBe('no-store');

    const response = el(doc, 'Response');
    expect(response.getAttribute('Destination')).toBe(sp.acs);
    expect(response.getAttribute('InResponseTo')).toBe(id);
    expect(el(response, 'Issuer').textContent).toBe(`${t.config.issuer}/saml`);
    expect(statusOf(doc)).toEqual(['urn:oasis:names:tc:SAML:2.0:status:Success']);
    const assertion = el(doc, 'Assertion');
    expect(verifySigned(xml, response.getAttribute('ID')!, certs)).toBe(true);
    expect(verifySigned(xml, assertion.getAttribute('ID')!, certs)).toBe(true);

    const nameId = el(assertion, 'NameID');
    expect(nameId.getAttribute('Format')).toBe('urn:oasis:names:tc:SAML:2.0:nameid-format:persistent');
    expect(nameId.getAttribute('SPNameQualifier')).toBe(sp.entityId);
    expect(nameId.textContent).not.toContain(p.id);
    expect(nameId.textContent).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const confirmation = el(assertion, 'SubjectConfirmation');
    expect(confirmation.getAttribute('Method')).toBe('urn:oasis:names:tc:SAML:2.0:cm:bearer');
    const data = el(confirmation, 'SubjectConfirmationData');
    expect(data.getAttribute('Recipient')).toBe(sp.acs);
    expect(data.getAttribute('InResponseTo')).toBe(id);
    const now = t.clock.now().getTime();
    expect(new Date(data.getAttribute('NotOnOrAfter')!).getTime() - Math.floor(now / 1000) * 1000).toBe(300_000);
    const conditions = el(assertion, 'Conditions');
    expect(new Date(conditions.getAttribute('NotBefore')!).getTime()).toBeLessThanOrEqual(now);
    expect(conditions.getAttribute('NotOnOrAfter')).toBe(data.getAttribute('NotOnOrAfter'));
    expect(el(conditions, 'Audience').textContent).toBe(sp.entityId);
    const statement = el(assertion, 'AuthnStatement');
    expect(statement.getAttribute('AuthnInstant')).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(statement.getAttribute('SessionIndex')).toMatch(/^_[A-Za-z0-9_-]{32}$/);
    expect(el(statement, 'AuthnContextClassRef').textContent).toBe('urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport');
    // The default attributes: email, username, name (no given or family name, no groups: none set).
    expect(attributeValues(doc, 'email')).toEqual([p.email]);
    expect(attributeValues(doc, 'username')).toEqual([p.email.split('@')[0]]);
    expect(attributeValues(doc, 'name')).toEqual([`Person ${people}`]);
    expect(attributeValues(doc, 'groups')).toEqual([]);
    expect(await metric('success')).toBe(before + 1);

    // The persistent NameID is the same next time; the sign-in is audited.
    const again = responseOf(await sso(sp, p.cookie));
    expect(el(again.doc, 'NameID').textContent).toBe(nameId.textContent);
    const audits = await many(t.db.select().from(auditLog).where(eq(auditLog.action, 'saml.sign_in')));
    expect(audits.filter((a) => a.applicationId === sp.id && a.actor === `person:${p.id}`)).toHaveLength(2);
  });

  it('answers the POST binding the same way, and an ACS named by index or left to the default', async () => {
    const sp = await samlApp();
    const p = await person(sp.id);
    const posted = await t.app.inject({
      method: 'POST', url: '/saml/sso', headers: { cookie: p.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: postBody(authnRequestXml(t, { issuer: sp.entityId, acsUrl: sp.acs2 }), 'rs'),
    });
    expect(responseOf(posted)).toMatchObject({ action: sp.acs2, relayState: 'rs' });
    expect(responseOf(await sso(sp, p.cookie, { acsIndex: 7, acsUrl: null })).action).toBe(sp.acs2);
    expect(responseOf(await sso(sp, p.cookie, { acsUrl: null })).action).toBe(sp.acs);
  });
});

describe('what is refused on our own page, never sent anywhere', () => {
  it('an ACS URL or index the SP has not registered, an unknown SP, a response binding we do not speak', async () => {
    const sp = await samlApp();
    const p = await person(sp.id);
    await expectRefused(await sso(sp, p.cookie, { acsUrl: 'https://attacker.example/acs' }), 'bad_acs', sp.id);
    await expectRefused(await sso(sp, p.cookie, { acsUrl: `${sp.acs}/` }), 'bad_acs', sp.id);
    await expectRefused(await sso(sp, p.cookie, { acsIndex: 3, acsUrl: null }), 'bad_acs', sp.id);
    await expectRefused(await sso(sp, p.cookie, { protocolBinding: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Artifact' }), 'bad_acs', sp.id);
    await expectRefused(await sso({ entityId: 'https://unknown.example/sp', acs: sp.acs }, p.cookie), 'unknown_sp');
  });

  it('a replayed request ID, an old or future one, another IdP as Destination, a RelayState over 80 bytes', async () => {
    const sp = await samlApp();
    const p = await person(sp.id);
    const xml = authnRequestXml(t, { issuer: sp.entityId, acsUrl: sp.acs });
    responseOf(await get(redirectUrl('/saml/sso', xml), p.cookie));
    await expectRefused(await get(redirectUrl('/saml/sso', xml), p.cookie), 'replay', sp.id);
    // The same ID from another SP is another request.
    const other = await samlApp();
    responseOf(await get(redirectUrl('/saml/sso', xml.replace(sp.entityId, other.entityId).replace(sp.acs, other.acs)), (await person(other.id)).cookie));
    await expectRefused(await sso(sp, p.cookie, { issueInstant: new Date(t.clock.now().getTime() - 11 * 60_000) }), 'expired');
    await expectRefused(await sso(sp, p.cookie, { issueInstant: new Date(t.clock.now().getTime() + 4 * 60_000) }), 'expired');
    await expectRefused(await sso(sp, p.cookie, { destination: 'https://other-idp.example/sso' }), 'bad_destination', sp.id);
    await expectRefused(await sso(sp, p.cookie, {}, 'x'.repeat(81)), 'relay_state_too_long');
  });

  it('hostile XML and bindings: a DTD, a DEFLATE bomb, not base64, two messages, an oversized body: a page, never a 500', async () => {
    const sp = await samlApp();
    const enc = (xml: string) => encodeURIComponent(deflateRawSync(Buffer.from(xml)).toString('base64'));
    const dtd = `<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>${authnRequestXml(t, { issuer: sp.entityId })}`;
    await expectRefused(await get(`/saml/sso?SAMLRequest=${enc(dtd)}`), 'dtd_forbidden');
    await expectRefused(await get(`/saml/sso?SAMLRequest=${enc(`<r>${' '.repeat(70_000)}</r>`)}`), 'inflate_too_large');
    await expectRefused(await get('/saml/sso?SAMLRequest=***'), 'bad_encoding');
    await expectRefused(await get('/saml/sso?SAMLRequest=a&SAMLRequest=b'), 'bad_binding');
    await expectRefused(await get('/saml/sso'), 'bad_binding');
    await expectRefused(await get(`/saml/sso?SAMLRequest=${enc('<samlp:LogoutRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol"/>')}`), 'unexpected_message');
    const big = await t.app.inject({ method: 'POST', url: '/saml/sso', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: `SAMLRequest=${'A'.repeat(1024 * 1024 + 10)}` });
    await expectRefused(big, 'too_large');
    const json = await t.app.inject({ method: 'POST', url: '/saml/sso', headers: { 'content-type': 'application/json' }, payload: '{}' });
    await expectRefused(json, 'bad_binding');
  });
});

describe('signed requests', () => {
  it('with wantAuthnRequestsSigned: unsigned refused; signed in the query or enveloped accepted; SHA-1, a foreign key, no Destination refused', async () => {
    const sp = await samlApp({ wantAuthnRequestsSigned: true, spCertificates: [spCert.certificatePem] });
    const p = await person(sp.id);
    const xml = (o: AuthnOptions = {}) => authnRequestXml(t, { issuer: sp.entityId, acsUrl: sp.acs, ...o });
    await expectRefused(await get(redirectUrl('/saml/sso', xml()), p.cookie), 'unsigned', sp.id);
    responseOf(await get(redirectUrl('/saml/sso', xml(), { key: spCert, relayState: 'signed' }), p.cookie));
    const enveloped = await signedBySp(xml(), spCert);
    const posted = await t.app.inject({ method: 'POST', url: '/saml/sso', headers: { cookie: p.cookie, 'content-type': 'application/x-www-form-urlencoded' }, payload: postBody(enveloped) });
    responseOf(posted);
    await expectRefused(await get(redirectUrl('/saml/sso', xml(), { key: spCert, sigAlg: RSA_SHA1 }), p.cookie), 'sha1_refused', sp.id);
    const foreign = await spKey('attacker.example');
    await expectRefused(await get(redirectUrl('/saml/sso', xml(), { key: foreign }), p.cookie), 'bad_signature', sp.id);
    const tampered = redirectUrl('/saml/sso', xml(), { key: spCert, relayState: 'a' }).replace('RelayState=a', 'RelayState=b');
    await expectRefused(await get(tampered, p.cookie), 'bad_signature', sp.id);
    await expectRefused(await get(redirectUrl('/saml/sso', xml({ destination: null }), { key: spCert }), p.cookie), 'bad_destination', sp.id);
    // A signed POST whose signed ACS was swapped for another afterwards.
    const swapped = enveloped.replace(sp.acs, `${sp.acs}2`);
    await expectRefused(await t.app.inject({ method: 'POST', url: '/saml/sso', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: postBody(swapped) }), 'bad_signature', sp.id);
    // A Signature xml-crypto cannot read (its Reference without a DigestValue): the refusal page, not a 500.
    const unreadable = enveloped.replace(/<ds:DigestValue>[^<]*<\/ds:DigestValue>/, '');
    await expectRefused(await t.app.inject({ method: 'POST', url: '/saml/sso', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: postBody(unreadable) }), 'bad_signature', sp.id);
  });

  it('without certificates, a signed request is signed with a key the SP does not have: refused', async () => {
    const sp = await samlApp();
    const p = await person(sp.id);
    await expectRefused(await get(redirectUrl('/saml/sso', authnRequestXml(t, { issuer: sp.entityId, acsUrl: sp.acs }), { key: spCert }), p.cookie), 'bad_signature', sp.id);
  });
});

describe('the sign-in the request needs', () => {
  it('without a session: the hosted sign-in, then back to the request, which is answered once', async () => {
    const sp = await samlApp();
    const p = await person(sp.id);
    const id = requestId();
    const first = await sso(sp, '', { id }, 'kept');
    expect(first.statusCode).toBe(302);
    const signInUrl = new URL(first.headers.location!, 'http://x');
    expect(signInUrl.pathname).toBe('/sign-in');
    expect(signInUrl.searchParams.get('client_id')).toBe(sp.id);
    const resume = signInUrl.searchParams.get('return_to')!;
    expect(resume).toMatch(/^\/saml\/sso\/continue\?r=[A-Za-z0-9_-]{43}$/);
    // The hosted sign-in page resumes it.
    const page = await get(first.headers.location!);
    expect(page.statusCode).toBe(200);
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.body)![1]!;
    const csrfCookie = cookieValue(page, 'gatehouse_csrf')!;
    const signedIn = await t.app.inject({
      method: 'POST', url: '/sign-in', headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `gatehouse_csrf=${csrfCookie}` },
      payload: new URLSearchParams({ csrf_token: csrf, email: p.email, password: PASSWORD, client_id: sp.id, return_to: resume }).toString(),
    });
    expect(signedIn.statusCode, signedIn.body.slice(0, 300)).toBe(303);
    expect(signedIn.headers.location).toBe(resume);
    const cookie = `gatehouse_session=${cookieValue(signedIn, 'gatehouse_session')}`;
    const answered = responseOf(await get(resume, cookie));
    expect(el(answered.doc, 'Response').getAttribute('InResponseTo')).toBe(id);
    expect(answered.relayState).toBe('kept');
    await expectRefused(await get(resume, cookie), 'unknown_request', undefined);
  });

  it('IsPassive without a session answers NoPassive at the ACS; with ForceAuthn a session signs in again', async () => {
    const sp = await samlApp();
    const p = await person(sp.id);
    const before = await metric('no_passive');
    const passive = responseOf(await sso(sp, '', { isPassive: true }, 'rp'));
    expect(statusOf(passive.doc)).toEqual(['urn:oasis:names:tc:SAML:2.0:status:Responder', 'urn:oasis:names:tc:SAML:2.0:status:NoPassive']);
    expect(passive.doc.getElementsByTagNameNS('*', 'Assertion').length).toBe(0);
    expect(passive.relayState).toBe('rp');
    expect(verifySigned(passive.xml, el(passive.doc, 'Response').getAttribute('ID')!, certs)).toBe(true);
    expect(await metric('no_passive')).toBe(before + 1);
    // With the session, IsPassive is answered silently.
    responseOf(await sso(sp, p.cookie, { isPassive: true }));

    t.clock.advance(60_000);
    const forced = await sso(sp, p.cookie, { forceAuthn: true });
    expect(forced.statusCode).toBe(302);
    const resume = new URL(forced.headers.location!, 'http://x').searchParams.get('return_to')!;
    // Going back without signing in again does not pass.
    expect((await get(resume, p.cookie)).statusCode).toBe(302);
    t.clock.advance(1000);
    const again = await signIn(t, { email: p.email, applicationId: sp.id }, { cookie: p.cookie });
    expect(again.statusCode).toBe(200);
    const answered = responseOf(await get(resume, p.cookie));
    expect(new Date(el(answered.doc, 'AuthnStatement').getAttribute('AuthnInstant')!).getTime()).toBe(Math.floor(t.clock.now().getTime() / 1000) * 1000);
  });

  it('the sign-up policy decides: a person an invite-only application does not admit sees the refusal, whose way back posts RequestDenied', async () => {
    const sp = await samlApp({}, { authPolicy: { signup_policy: 'invite_only' } });
    const lobby = await samlApp();
    const p = await person(lobby.id);
    expect((await signIn(t, { email: p.email, applicationId: sp.id }, { cookie: p.cookie })).statusCode).toBe(200);
    const cookie = p.cookie;
    const refused = await sso(sp, cookie, {}, 'back');
    expect(refused.statusCode).toBe(403);
    expect(refused.body).toContain('data-reason="invite_only"');
    const form = /<form method="post" action="([^"]+)" data-back>([\s\S]*?)<\/form>/.exec(refused.body)!;
    expect(form[1]).toBe(sp.acs);
    const saml = /name="SAMLResponse" value="([^"]+)"/.exec(form[2]!)![1]!;
    const xml = Buffer.from(saml, 'base64').toString();
    expect(xml).toContain('urn:oasis:names:tc:SAML:2.0:status:RequestDenied');
    expect(form[2]).toContain('name="RelayState" value="back"');
    expect(String(refused.headers['content-security-policy'])).toContain(new URL(sp.acs).origin);
    // Passive: the RequestDenied Response straight to the ACS.
    const passive = responseOf(await sso(sp, cookie, { isPassive: true }));
    expect(statusOf(passive.doc)[1]).toBe('urn:oasis:names:tc:SAML:2.0:status:RequestDenied');
  });

  it('the group rule decides too: a member outside the allowedGroups sees the refusal naming it, RequestDenied; put in the group, the assertion', async () => {
    expect((await t.admin('POST', '/api/admin/groups', { id: 'saml-staff', name: 'SAML staff' })).statusCode).toBe(201);
    const sp = await samlApp();
    const p = await person(sp.id);
    expect((await t.admin('PATCH', `/api/admin/applications/${sp.id}`, { allowedGroups: ['saml-staff'] })).statusCode).toBe(200);
    const refused = await sso(sp, p.cookie, {}, 'back');
    expect([refused.statusCode, /data-reason="([a-z_]+)"/.exec(refused.body)?.[1]]).toEqual([403, 'group_missing']);
    expect(refused.body).toContain('is open only to members of certain groups (its group rule)');
    const passive = responseOf(await sso(sp, p.cookie, { isPassive: true }));
    expect(statusOf(passive.doc)[1]).toBe('urn:oasis:names:tc:SAML:2.0:status:RequestDenied');
    expect((await t.admin('PUT', `/api/admin/groups/saml-staff/members/${p.id}`)).statusCode).toBe(204);
    expect(statusOf(responseOf(await sso(sp, p.cookie)).doc)[0]).toBe('urn:oasis:names:tc:SAML:2.0:status:Success');
  });

  it('an application that requires MFA steps a password session up through its second factor, then says so', async () => {
    const sp = await samlApp({}, { authPolicy: { signup_policy: 'open', mfa: 'required' } });
    const lobby = await samlApp();
    const p = await person(lobby.id);
    const started = await me(t, 'POST', '/api/me/totp', p.cookie);
    const { secret } = started.json() as { secret: string };
    expect((await me(t, 'POST', '/api/me/totp/confirm', p.cookie, { code: totpCode(secret, t.clock.now()) })).statusCode).toBe(200);
    nextStep(t);
    const signedIn = await t.app.inject({ method: 'POST', url: '/api/auth/sign-in/email', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ email: p.email, password: PASSWORD, applicationId: lobby.id }) });
    expect(signedIn.json().secondFactor).toBeTruthy();
    const mfaCookie = `gatehouse_mfa=${cookieValue(signedIn, 'gatehouse_mfa')}`;
    const done = await postJson(t, '/api/auth/second-factor/totp', { code: totpCode(secret, t.clock.now()) }, { cookie: mfaCookie });
    expect(done.statusCode, done.body).toBe(200);
    nextStep(t);
    // A password-only session of someone without a second factor, signed in for the MFA application: enrolment first.
    const other = await person(lobby.id);
    const enrolFirst = await signIn(t, { email: other.email, applicationId: sp.id }, { cookie: other.cookie });
    expect(enrolFirst.json().secondFactor).toEqual({ methods: [] });
    const toSignIn = await sso(sp, other.cookie, {});
    expect(toSignIn.statusCode).toBe(302);
    expect(toSignIn.headers.location).toMatch(/^\/sign-in\?client_id=/);
    // The person with TOTP signs in for it: password, then the code, then the assertion says a second factor was used.
    const multi = `gatehouse_session=${sessionCookieOf(done)}`;
    const asked = await sso(sp, multi, {});
    expect(asked.statusCode).toBe(302);
    const resume = new URL(asked.headers.location!, 'http://x').searchParams.get('return_to')!;
    const mark = await signIn(t, { email: p.email, applicationId: sp.id }, { cookie: multi });
    const stepCookie = `gatehouse_mfa=${cookieValue(mark, 'gatehouse_mfa')}`;
    const second = await postJson(t, '/api/auth/second-factor/totp', { code: totpCode(secret, t.clock.now()) }, { cookie: `${multi}; ${stepCookie}` });
    expect(second.statusCode, second.body).toBe(200);
    const stepped = `gatehouse_session=${cookieValue(second, 'gatehouse_session') ?? sessionCookieOf(done)}`;
    const answered = responseOf(await get(resume, stepped));
    expect(el(answered.doc, 'AuthnContextClassRef').textContent).toBe('urn:oasis:names:tc:SAML:2.0:ac:classes:MobileTwoFactorContract');
    // An SP asking for REFEDS MFA gets the class it named from a multi-factor session, and a password-only one is stepped up.
    const refeds = await sso(sp, stepped, { requestedContext: { classes: ['https://refeds.org/profile/mfa'] } });
    expect(el(responseOf(refeds).doc, 'AuthnContextClassRef').textContent).toBe('https://refeds.org/profile/mfa');
    const pwdOnly = other.cookie;
    const stepUp = await sso(lobby, pwdOnly, { requestedContext: { classes: ['https://refeds.org/profile/mfa'] } });
    expect(stepUp.statusCode).toBe(303);
    expect(stepUp.headers.location).toBe('/sign-in/enrol');
    // A class nothing here satisfies: NoAuthnContext.
    const kerberos = responseOf(await sso(lobby, pwdOnly, { requestedContext: { classes: ['urn:oasis:names:tc:SAML:2.0:ac:classes:Kerberos'] } }));
    expect(statusOf(kerberos.doc)[1]).toBe('urn:oasis:names:tc:SAML:2.0:status:NoAuthnContext');
  });

  it('explicit consent asks once what the attributes tell; shared sign-in carries the realm to another SP', async () => {
    const sp = await samlApp({}, { consent: 'explicit' });
    const p = await person(sp.id);
    const asked = await sso(sp, p.cookie, {});
    expect(asked.statusCode).toBe(302);
    const consentUrl = new URL(asked.headers.location!, 'http://x');
    expect(consentUrl.pathname).toBe('/consent');
    const page = await get(asked.headers.location!, p.cookie);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`SP ${spCount}`);
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.body)![1]!;
    const csrfCookie = cookieValue(page, 'gatehouse_csrf');
    const approved = await t.app.inject({
      method: 'POST', url: '/consent', headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `${p.cookie}; gatehouse_csrf=${csrfCookie}` },
      payload: new URLSearchParams({ csrf_token: csrf, return_to: consentUrl.searchParams.get('return_to')!, decision: 'approve' }).toString(),
    });
    expect(approved.statusCode, approved.body.slice(0, 300)).toBe(303);
    responseOf(await get(approved.headers.location!, p.cookie));
    // Approved once: the next request is answered at once.
    responseOf(await sso(sp, p.cookie, {}));

    // Two SPs in one shared sign-in: signing in to one opens the other.
    const a = await samlApp();
    const b = await samlApp();
    const group = `grp${spCount}`;
    expect((await t.admin('POST', '/api/admin/sso-groups', { id: group, name: 'Shared' })).statusCode).toBe(201);
    for (const app of [a, b]) expect((await t.admin('POST', `/api/admin/sso-groups/${group}/apps`, { appId: app.id })).statusCode).toBeLessThan(300);
    const q = await person(a.id);
    responseOf(await sso(b, q.cookie, {}));
    const c = await samlApp();
    expect((await sso(c, q.cookie, {})).statusCode).toBe(302);
  });
});

describe('NameID formats and attributes', () => {
  it('emailAddress, unspecified (the username), transient (new each time), and what the request asks among them', async () => {
    const email = await samlApp({ nameId: { format: 'emailAddress' } });
    const p = await person(email.id);
    const nameOf = (res: Awaited<ReturnType<typeof get>>) => {
      const n = el(responseOf(res).doc, 'NameID');
      return [n.getAttribute('Format'), n.textContent];
    };
    expect(nameOf(await sso(email, p.cookie))).toEqual(['urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress', p.email]);
    const user = await samlApp({ nameId: { format: 'unspecified' } });
    expect((await signIn(t, { email: p.email, applicationId: user.id }, { cookie: p.cookie })).statusCode).toBe(200);
    const cookie = p.cookie;
    expect(nameOf(await sso(user, cookie))).toEqual(['urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified', p.email.split('@')[0]]);
    const transient = await samlApp({ nameId: { format: 'transient' } });
    const q = await person(transient.id);
    const [format, first] = nameOf(await sso(transient, q.cookie));
    expect(format).toBe('urn:oasis:names:tc:SAML:2.0:nameid-format:transient');
    expect(nameOf(await sso(transient, q.cookie))[1]).not.toBe(first);
    // The request's NameIDPolicy picks among ours; one we do not have is InvalidNameIDPolicy.
    expect(nameOf(await sso(transient, q.cookie, { nameIdFormat: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress' }))).toEqual([
      'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress', q.email,
    ]);
    const x509 = responseOf(await sso(transient, q.cookie, { nameIdFormat: 'urn:oasis:names:tc:SAML:1.1:nameid-format:X509SubjectName' }));
    expect(statusOf(x509.doc)).toEqual(['urn:oasis:names:tc:SAML:2.0:status:Requester', 'urn:oasis:names:tc:SAML:2.0:status:InvalidNameIDPolicy']);
  });

  it('every claim source: person fields, groups kept to groupsFilter, role, profile field, inGroup, groupMap, constant; URI names and friendly names', async () => {
    for (const id of ['eng', 'ops', 'hidden']) expect((await t.admin('POST', '/api/admin/groups', { id, name: id })).statusCode).toBe(201);
    const sp = await samlApp({
      attributes: [
        { name: 'urn:oid:0.9.2342.19200300.100.1.3', nameFormat: 'uri', friendlyName: 'mail', source: { type: 'personField', field: 'email' } },
        { name: 'memberOf', source: { type: 'groups' } },
        { name: 'role', source: { type: 'role' } },
        { name: 'team', source: { type: 'profileField', key: 'team' } },
        { name: 'isEng', source: { type: 'inGroup', group: 'eng' } },
        { name: 'level', source: { type: 'groupMap', map: [{ group: 'ops', value: 'operator' }, { group: 'eng', value: 'engineer' }], default: 'guest' } },
        { name: 'tags', source: { type: 'constant', value: ['a', 'b'] } },
        { name: 'verified', source: { type: 'personField', field: 'emailVerified' } },
      ],
    }, { groupsFilter: ['eng', 'ops'], authPolicy: { signup_policy: 'open', profile_fields: [{ key: 'team', label: 'Team', type: 'string', required: false, user_editable: true }] } });
    const p = await person(sp.id);
    for (const g of ['eng', 'hidden']) expect((await t.admin('PUT', `/api/admin/groups/${g}/members/${p.id}`)).statusCode).toBe(204);
    const member = (await t.admin('GET', `/api/admin/applications/${sp.id}/users?q=${p.email}`)).json().users[0];
    expect((await t.admin('PATCH', `/api/admin/applications/${sp.id}/users/${member.id}`, { role: 'admin', profile: { team: 'Platform' } })).statusCode).toBe(200);
    const { doc } = responseOf(await sso(sp, p.cookie));
    const mail = Array.from(doc.getElementsByTagNameNS('*', 'Attribute')).find((a) => a.getAttribute('FriendlyName') === 'mail')!;
    expect(mail.getAttribute('Name')).toBe('urn:oid:0.9.2342.19200300.100.1.3');
    expect(mail.getAttribute('NameFormat')).toBe('urn:oasis:names:tc:SAML:2.0:attrname-format:uri');
    expect(attributeValues(doc, 'urn:oid:0.9.2342.19200300.100.1.3')).toEqual([p.email]);
    expect(attributeValues(doc, 'memberOf')).toEqual(['eng']);
    expect(attributeValues(doc, 'role')).toEqual(['admin']);
    expect(attributeValues(doc, 'team')).toEqual(['Platform']);
    expect(attributeValues(doc, 'isEng')).toEqual(['true']);
    expect(attributeValues(doc, 'level')).toEqual(['engineer']);
    expect(attributeValues(doc, 'tags')).toEqual(['a', 'b']);
    expect(attributeValues(doc, 'verified')).toEqual(['false']);
    expect(el(doc, 'Attribute').getAttribute('NameFormat')).toBe('urn:oasis:names:tc:SAML:2.0:attrname-format:uri');
  });
});

describe('IdP-initiated sign-on', () => {
  it('is off unless allowed; allowed, it posts an unsolicited Response to the default ACS and the account page offers it', async () => {
    const off = await samlApp();
    const p = await person(off.id);
    await expectRefused(await get(`/saml/sso/init?app=${off.id}`, p.cookie), 'idp_initiated_off', off.id);
    await expectRefused(await get('/saml/sso/init?app=nope', p.cookie), 'unknown_sp');
    const on = await samlApp({ idpInitiated: true });
    expect((await signIn(t, { email: p.email, applicationId: on.id }, { cookie: p.cookie })).statusCode).toBe(200);
    const cookie = p.cookie;
    const { doc, action, relayState } = responseOf(await get(`/saml/sso/init?app=${on.id}&RelayState=%2Fhome`, cookie));
    expect(action).toBe(on.acs);
    expect(relayState).toBe('/home');
    expect(el(doc, 'Response').hasAttribute('InResponseTo')).toBe(false);
    expect(el(doc, 'SubjectConfirmationData').hasAttribute('InResponseTo')).toBe(false);
    // Now a member of both: the account page offers the one that allows it.
    responseOf(await sso(off, cookie));
    const account = await get('/account', cookie);
    expect(account.body).toContain(`href="/saml/sso/init?app=${on.id}"`);
    expect(account.body).not.toContain(`href="/saml/sso/init?app=${off.id}"`);
    // Without a session: the sign-in first.
    expect((await get(`/saml/sso/init?app=${on.id}`)).headers.location).toMatch(/^\/sign-in\?client_id=/);
  });
});

describe('the metadata', () => {
  it('publishes the entity ID, the signing certificate, both bindings of SSO and SLO, the NameID formats', async () => {
    const res = await get('/saml/metadata');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/samlmetadata+xml');
    expect(res.body).toContain(`entityID="${t.config.issuer}/saml"`);
    expect(res.body).toContain('WantAuthnRequestsSigned="false"');
    for (const binding of ['HTTP-Redirect', 'HTTP-POST']) {
      expect(res.body).toContain(`<md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:${binding}" Location="${t.config.issuer}/saml/sso"></md:SingleSignOnService>`);
      expect(res.body).toContain(`<md:SingleLogoutService Binding="urn:oasis:names:tc:SAML:2.0:bindings:${binding}" Location="${t.config.issuer}/saml/slo"></md:SingleLogoutService>`);
    }
    for (const f of ['2.0:nameid-format:persistent', '1.1:nameid-format:emailAddress', '1.1:nameid-format:unspecified', '2.0:nameid-format:transient']) {
      expect(res.body).toContain(`<md:NameIDFormat>urn:oasis:names:tc:SAML:${f}</md:NameIDFormat>`);
    }
    const signed = await samlApp({ wantAuthnRequestsSigned: true, spCertificates: [spCert.certificatePem] });
    expect((await get(`/saml/metadata?app=${signed.id}`)).body).toContain('WantAuthnRequestsSigned="true"');
    const missing = await get('/saml/metadata?app=nope');
    expect(missing.statusCode).toBe(404);
    expect(missing.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(missing.json().code).toBe('application_not_found');
  });
});

export { SP_ACS, SP_ENTITY };
