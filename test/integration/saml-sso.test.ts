/**
 * The SAML identity provider through `inject` (issue 42, spec saml.md): smoke.
 */
import { describe, expect, it } from 'vitest';
import { makeApp } from '../helpers/app.js';
import { createApplication, signIn, signUp, sessionCookieOf } from '../helpers/accounts.js';
import { authnRequestXml, redirectUrl, responseOf, samlSettings, idpCertificates, verifySigned, el } from '../helpers/saml-sp.js';

describe('smoke', () => {
  it('signs in', async () => {
    const t = await makeApp();
    const r = await t.admin('POST', '/api/admin/applications', { id: 'wiki', name: 'Wiki', audience: 'https://wiki', redirectUris: ['https://sp.example.com/'], saml: samlSettings(), authPolicy: { signup_policy: 'open' } }); console.log(r.body); const app = r.json();
    expect(app.saml.entityId).toBe('https://sp.example.com/saml/metadata');
    const up = await signUp(t, { email: 'ann@example.com', applicationId: 'wiki' });
    expect(up.statusCode).toBe(201);
    const cookie = `gatehouse_session=${sessionCookieOf(up)}`;
    const res = await t.app.inject({ method: 'GET', url: redirectUrl('/saml/sso', authnRequestXml(t), { relayState: 'r1' }), headers: { cookie } });
    const { xml, doc, relayState } = responseOf(res);
    expect(relayState).toBe('r1');
    const certs = await idpCertificates(t);
    expect(verifySigned(xml, el(doc, 'Response').getAttribute('ID')!, certs)).toBe(true);
    expect(verifySigned(xml, el(doc, 'Assertion').getAttribute('ID')!, certs)).toBe(true);
    console.log(xml.slice(0, 3000));
  });
});
