/**
 * The SAML identity provider in the admin API, on SQLite and PostgreSQL (issue 42, spec saml.md
 * "Per application", "The identity provider"): the `saml` application field's rules (every mistake
 * named in one 400), one entity ID per application (409), what an API key may not do, the SP
 * metadata import (XML or a URL fetched once with the webhook address rules), and the signing
 * keys: published in the metadata before they sign, sealed at rest on PostgreSQL.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { makeApp, type TestApp } from '../helpers/app.js';
import { signUp, sessionCookieOf } from '../helpers/accounts.js';
import { expectProblem, expectValidation } from '../helpers/problem.js';
import { authnRequestXml, el, idpCertificates, redirectUrl, responseOf, samlSettings, spKey, spMetadataXml, verifySigned, SP_ACS, SP_ENTITY, SP_SLO, type SpKey } from '../helpers/saml-sp.js';
import { auditLog, samlSigningKeys } from '../../server/db/schema.js';
import { certificatePem } from '../../server/saml/settings.js';
import { engineOf, many } from '../../server/db/store.js';

let t: TestApp;
let key: SpKey;
let metadataServer: Server;
let metadataUrl: string;
let served = '';

beforeAll(async () => {
  t = await makeApp({ perFile: true, clock: new Date('2026-11-29T14:00:00Z'), config: { webhookAllowLoopback: true } });
  key = await spKey();
  metadataServer = createServer((req, res) => {
    if (req.url === '/moved') res.writeHead(302, { location: '/metadata' }).end();
    else if (req.url === '/metadata') res.writeHead(200, { 'content-type': 'application/samlmetadata+xml' }).end(served);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => metadataServer.listen(0, '127.0.0.1', resolve));
  metadataUrl = `http://127.0.0.1:${(metadataServer.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => metadataServer?.close(resolve));
});

let n = 0;
const create = (saml: unknown, extra: Record<string, unknown> = {}) => {
  const id = `adm${++n}`;
  return t.admin('POST', '/api/admin/applications', { id, name: `Adm ${n}`, audience: `https://${id}.example.com/api`, redirectUris: [`https://${id}.example.com/cb`], ...extra, saml });
};

describe('the saml application field', () => {
  it('is null on other applications, shows the defaults it was given, and is removed with null', async () => {
    const plain = await create(undefined);
    expect(plain.statusCode).toBe(201);
    expect(plain.json().saml).toBeNull();
    const made = await create({ entityId: 'urn:example:sp', acs: [{ url: 'https://sp.lan/acs' }] });
    expect(made.statusCode, made.body).toBe(201);
    expect(made.json().saml).toEqual({
      entityId: 'urn:example:sp', acs: [{ url: 'https://sp.lan/acs', binding: 'HTTP-POST', index: 0 }], slo: null,
      nameId: { format: 'persistent', source: 'id' }, attributes: null, signResponse: true, signAssertion: true,
      wantAuthnRequestsSigned: false, spCertificates: [], idpInitiated: false,
    });
    const id = made.json().id as string;
    expect((await t.admin('GET', `/api/admin/applications/${id}`)).json().saml.entityId).toBe('urn:example:sp');
    const removed = await t.admin('PATCH', `/api/admin/applications/${id}`, { saml: null });
    expect(removed.json().saml).toBeNull();
    // The entity ID is free again.
    expect((await create({ entityId: 'urn:example:sp', acs: [{ url: 'https://sp.lan/acs' }] })).statusCode).toBe(201);
  });

  it('names every mistake in one 400', async () => {
    const res = await create({
      entityId: 'not a uri',
      acs: [{ url: 'http://public.example.com/acs' }, { url: 'https://ok.example.com/acs', index: 0 }, { url: 'javascript:alert(1)' }],
      slo: { url: 'ftp://x.example.com/slo', binding: 'HTTP-POST' },
      nameId: { format: 'emailAddress', source: 'username' },
      attributes: [
        { name: 'a', source: { type: 'personField' } },
        { name: 'a', source: { type: 'groups', field: 'email' } },
        { name: 'b', source: { type: 'profileField', key: 'nope' } },
        { name: 'c', source: { type: 'inGroup', group: 'no-such-group' } },
        { name: 'd', source: { type: 'constant' } },
      ],
      signResponse: false, signAssertion: false,
      wantAuthnRequestsSigned: true,
      spCertificates: ['-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----'],
    });
    expectValidation(res, [
      'body.saml.entityId', 'body.saml.acs.0.url', 'body.saml.acs.1.index', 'body.saml.acs.2.url', 'body.saml.slo.url', 'body.saml.nameId.source',
      'body.saml.attributes.0.source.field', 'body.saml.attributes.1.name', 'body.saml.attributes.1.source.field', 'body.saml.attributes.2.source.key',
      'body.saml.attributes.3.source.group', 'body.saml.attributes.4.source.value', 'body.saml.signAssertion', 'body.saml.spCertificates.0',
    ]);
    // Unknown fields and bindings are the schema's.
    expectProblem(await create({ entityId: 'urn:x', acs: [{ url: 'https://x.lan/acs', binding: 'HTTP-Artifact' }] }), 400, 'validation_failed');
    expectProblem(await create({ entityId: 'urn:x', acs: [{ url: 'https://x.lan/acs' }], extra: 1 }), 400, 'validation_failed');
  });

  it('gives an entity ID to one application (409 entity_id_in_use), on create and update, and keeps it from API keys', async () => {
    const first = await create({ entityId: 'https://taken.example/md', acs: [{ url: 'https://taken.example/acs' }] });
    expect(first.statusCode).toBe(201);
    const body = expectProblem(await create({ entityId: 'https://taken.example/md', acs: [{ url: 'https://other.example/acs' }] }), 409, 'entity_id_in_use');
    expect(body.detail).toBe('The entity ID https://taken.example/md is already another application\'s.');
    const second = await create(undefined);
    const id = second.json().id as string;
    expectProblem(await t.admin('PATCH', `/api/admin/applications/${id}`, { saml: { entityId: 'https://taken.example/md', acs: [{ url: 'https://o.example/acs' }] } }), 409, 'entity_id_in_use');
    expect((await t.admin('GET', `/api/admin/applications/${id}`)).json().saml).toBeNull();
    // An API key with application:write may not change it, nor import metadata.
    const apiKey = (await t.admin('POST', `/api/admin/applications/${id}/api-keys`, { name: 'k', scopes: ['application:read', 'application:write'] })).json().key as string;
    const asKey = { authorization: `Bearer ${apiKey}` };
    expectProblem(await t.admin('PATCH', `/api/admin/applications/${id}`, { saml: { entityId: 'urn:k', acs: [{ url: 'https://k.example/acs' }] } }, asKey), 403, 'insufficient_scope');
    expectProblem(await t.admin('POST', `/api/admin/applications/${id}/saml/metadata`, { xml: spMetadataXml({ entityId: 'urn:k2' }) }, asKey), 403, 'insufficient_scope');
    expect((await t.admin('PATCH', `/api/admin/applications/${id}`, { name: 'Renamed' }, asKey)).statusCode).toBe(200);
  });
});

describe('importing an SP\'s metadata', () => {
  it('fills entityId, the HTTP-POST ACSs (the default first), the Redirect SLO and the signing certificate, keeping the rest', async () => {
    const made = await create({ entityId: 'urn:before', acs: [{ url: 'https://b.example/acs' }], nameId: { format: 'transient' }, idpInitiated: true });
    const id = made.json().id as string;
    const res = await t.admin('POST', `/api/admin/applications/${id}/saml/metadata`, {
      xml: spMetadataXml({ acs: [SP_ACS, `${SP_ACS}-default`], certificate: key.certificatePem }),
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().saml).toEqual({
      entityId: SP_ENTITY,
      acs: [{ url: `${SP_ACS}-default`, binding: 'HTTP-POST', index: 2 }, { url: SP_ACS, binding: 'HTTP-POST', index: 1 }],
      slo: { url: SP_SLO, binding: 'HTTP-Redirect' },
      nameId: { format: 'transient', source: null }, attributes: null, signResponse: true, signAssertion: true, wantAuthnRequestsSigned: false,
      spCertificates: [certificatePem(key.certificatePem)], idpInitiated: true,
    });
    const audit = await many(t.db.select().from(auditLog).where(eq(auditLog.action, 'application.updated')));
    expect(audit.some((e) => e.applicationId === id && (e.details as { fields: string[] }).fields.includes('saml'))).toBe(true);
    // A second application may not take the same entity ID.
    const other = (await create(undefined)).json().id as string;
    expectProblem(await t.admin('POST', `/api/admin/applications/${other}/saml/metadata`, { xml: spMetadataXml() }), 409, 'entity_id_in_use');
  });

  it('refuses what is not usable metadata, saying what, on body.xml', async () => {
    const id = (await create(undefined)).json().id as string;
    const refuse = async (xml: string, message: RegExp) => {
      const body = expectValidation(await t.admin('POST', `/api/admin/applications/${id}/saml/metadata`, { xml }), ['body.xml']);
      expect(body.errors![0]!.message).toMatch(message);
    };
    await refuse('<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;</x>', /document type or entity declaration/);
    await refuse('<x/>', /not SAML 2\.0 metadata/);
    await refuse(spMetadataXml().replace(/<md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"[^>]*>/g, ''), /no AssertionConsumerService with the HTTP-POST binding/);
    await refuse(spMetadataXml({ acs: ['http://public.example.com/acs'] }), /^AssertionConsumerService Location http:\/\/public\.example\.com\/acs http is allowed only for loopback or private-network hosts; use https$/);
    await refuse(spMetadataXml().replace('<md:NameIDFormat>', '<md:KeyDescriptor><ds:KeyInfo><ds:X509Data><ds:X509Certificate>bm90IGEgY2VydA==</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor><md:NameIDFormat>'), /not a readable certificate/);
    expectProblem(await t.admin('POST', `/api/admin/applications/${id}/saml/metadata`, { xml: 'a', url: 'https://x' }), 400, 'validation_failed');
    expectProblem(await t.admin('POST', '/api/admin/applications/nope/saml/metadata', { xml: spMetadataXml() }), 404, 'application_not_found');
  });

  it('from a URL, fetched once: a redirect is not followed, an answer that is not metadata is said', async () => {
    const id = (await create(undefined)).json().id as string;
    served = spMetadataXml({ entityId: 'https://fetched.example/md' });
    const res = await t.admin('POST', `/api/admin/applications/${id}/saml/metadata`, { url: `${metadataUrl}/metadata` });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().saml.entityId).toBe('https://fetched.example/md');
    const moved = expectValidation(await t.admin('POST', `/api/admin/applications/${id}/saml/metadata`, { url: `${metadataUrl}/moved` }), ['body.url']);
    expect(moved.errors![0]!.message).toBe('answered HTTP 302 (redirects are not followed)');
    const missing = expectValidation(await t.admin('POST', `/api/admin/applications/${id}/saml/metadata`, { url: `${metadataUrl}/none` }), ['body.url']);
    expect(missing.errors![0]!.message).toBe('answered HTTP 404');
    const metadataService = expectValidation(await t.admin('POST', `/api/admin/applications/${id}/saml/metadata`, { url: 'http://169.254.169.254/latest' }), ['body.url']);
    expect(metadataService.errors![0]!.message).toBe('169.254.169.254 is an address webhooks may not reach');
  });
});

describe('the signing keys', () => {
  it('are listed with the endpoints; a rotation publishes the next certificate before it signs; 409 while it waits; sealed on PostgreSQL', async () => {
    const listed = await t.admin('GET', '/api/admin/saml/keys');
    expect(listed.statusCode).toBe(200);
    expect(listed.json()).toMatchObject({
      entityId: `${t.config.issuer}/saml`, metadataUrl: `${t.config.issuer}/saml/metadata`, ssoUrl: `${t.config.issuer}/saml/sso`, sloUrl: `${t.config.issuer}/saml/slo`,
    });
    const [current] = listed.json().keys;
    expect(current).toMatchObject({ status: 'active', retiredAt: null, expiresAt: null });
    expect(current.fingerprint).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    expect(new Date(current.notAfter).getUTCFullYear() - t.clock.now().getUTCFullYear()).toBe(10);
    const { X509Certificate } = await import('node:crypto');
    const x509 = new X509Certificate(current.certificate);
    expect(x509.subject).toBe(`CN=${new URL(t.config.issuer).hostname} SAML signing`);
    expect(x509.publicKey.asymmetricKeyDetails?.modulusLength).toBe(2048);

    // An SP and a member to sign for.
    const sp = await create(samlSettings({ entityId: 'https://rot.example/md', acs: [{ url: 'https://rot.example/acs', binding: 'HTTP-POST', index: 0 }] }), { authPolicy: { signup_policy: 'open' } });
    const spId = sp.json().id as string;
    const cookie = `gatehouse_session=${sessionCookieOf(await signUp(t, { email: 'rot@example.com', applicationId: spId }))}`;
    const signedBy = async () => {
      const { xml, doc } = responseOf(await t.app.inject({ method: 'GET', url: redirectUrl('/saml/sso', authnRequestXml(t, { issuer: 'https://rot.example/md', acsUrl: 'https://rot.example/acs' })), headers: { cookie } }));
      return (await idpCertificates(t)).filter((c) => verifySigned(xml, el(doc, 'Response').getAttribute('ID')!, [c]));
    };
    const before = await idpCertificates(t);
    expect(before).toHaveLength(1);

    const rotated = await t.admin('POST', '/api/admin/saml/keys/rotate');
    expect(rotated.statusCode, rotated.body).toBe(201);
    expect(rotated.headers.location).toBe('/api/admin/saml/keys');
    const next = rotated.json().key;
    expect(next.status).toBe('next');
    expect(new Date(next.activatesAt).getTime() - t.clock.now().getTime()).toBe(168 * 3600_000);
    expect(rotated.json().previous).toEqual([expect.objectContaining({ id: current.id, status: 'active', retiredAt: next.activatesAt })]);
    expectProblem(await t.admin('POST', '/api/admin/saml/keys/rotate'), 409, 'key_rotation_pending');
    // Published now, both; the current key still signs.
    const during = await idpCertificates(t);
    expect(during).toHaveLength(2);
    expect(await signedBy()).toEqual([during[0]]);
    expect(during[0]!.replace(/\s/g, '')).toBe(current.certificate.replace(/\s/g, ''));

    // After the activation delay the next key signs; the old one stays a day, then leaves the metadata.
    t.clock.advance(168 * 3600_000 + 1000);
    const after = await idpCertificates(t);
    expect(after).toHaveLength(2);
    expect(after[0]!.replace(/\s/g, '')).toBe(next.certificate.replace(/\s/g, ''));
    expect(await signedBy()).toEqual([after[0]]);
    const statuses = (await t.admin('GET', '/api/admin/saml/keys')).json().keys.map((k: { status: string }) => k.status);
    expect(statuses).toEqual(['active', 'retiring']);
    t.clock.advance(24 * 3600_000);
    expect(await idpCertificates(t)).toHaveLength(1);
    expect((await t.admin('GET', '/api/admin/saml/keys')).json().keys.map((k: { status: string }) => k.status)).toEqual(['active', 'retired']);
    expect((await many(t.db.select().from(auditLog).where(eq(auditLog.action, 'saml.key_rotated')))).length).toBe(1);

    const rows = await many(t.db.select({ pem: samlSigningKeys.privateKeyPem }).from(samlSigningKeys));
    for (const row of rows) {
      if (engineOf(t.db) === 'postgres') expect(row.pem).toMatch(/^gks1\.[\w-]+\.[\w-]+\.[\w-]+\.[\w-]+$/);
      else expect(row.pem).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    }
    // Owner only: an API key may not see or rotate them.
    const apiKey = (await t.admin('POST', `/api/admin/applications/${spId}/api-keys`, { name: 'k', scopes: ['application:read'] })).json().key as string;
    expectProblem(await t.admin('GET', '/api/admin/saml/keys', undefined, { authorization: `Bearer ${apiKey}` }), 403, 'insufficient_scope');
  });
});
