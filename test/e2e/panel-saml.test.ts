/**
 * The application's SAML part in the panel's Connect section (issue 42 item 2, spec saml.md "Per
 * application"), in headless Chromium against one real server: the SP's metadata imported from a
 * file (and a pasted one that is not metadata refused under its field), the settings shown as
 * imported, an edit refused under the ACS field and then saved, each time the exact record read
 * back through the admin API; Gatehouse's metadata URL, entity ID and active signing certificate
 * shown to copy, as GET /saml/keys has them; the metadata imported from its URL (fetched by the
 * server, a missing one refused under the URL field); the signing certificate rotated after a
 * confirmation (cancelling rotates nothing), the next certificate shown before it signs and
 * published in the metadata beside the active one; axe clean.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { adminJsonOf, OAUTH_ADMIN_TOKEN, startOAuthServer, type OAuthServer } from '../helpers/oauth-server.js';
import { buildIfStale, launchChromium, panelContext, seriousViolations, shot } from '../helpers/panel-browser.js';
import { SP_ENTITY, SP_SLO, spKey, spMetadataXml } from '../helpers/saml-sp.js';
import { certificatePem as storedPem } from '../../server/saml/settings.js';

let server: OAuthServer;
let browser: Browser;
let page: Page;
let certificatePem: string;

const adminJson = <T,>(method: string, path: string, body?: unknown) => adminJsonOf<T>(server, method, path, body);
const samlOf = async () => (await adminJson<{ saml: unknown }>('GET', '/api/admin/applications/wiki')).saml;
const ACS_1 = 'https://wiki.example.com/saml/acs';
const ACS_2 = 'https://wiki.example.com/saml/acs-default';

beforeAll(async () => {
  buildIfStale();
  // The SP's metadata URL is served on loopback here: the server fetches it with the webhook rules, loopback allowed.
  server = await startOAuthServer({ GATEHOUSE_WEBHOOK_ALLOW_LOOPBACK: '1' });
  certificatePem = (await spKey('wiki.example.com')).certificatePem;
  await adminJson('POST', '/api/admin/applications', {
    id: 'wiki', name: 'Team wiki', audience: 'https://wiki.example.com', redirectUris: ['https://wiki.example.com/cb'], clientType: 'spa',
  });
  browser = await launchChromium();
  page = await (await panelContext(browser, OAUTH_ADMIN_TOKEN)).newPage();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe("the application's SAML part", () => {
  it('imports the metadata from a file, refuses pasted non-metadata under its field, and shows what the SP is given', async () => {
    await page.goto(`${server.url}/admin/applications/wiki/connect/saml`);
    const importer = page.getByTestId('saml-import');
    await importer.waitFor();

    await importer.getByLabel('Or paste the metadata XML').fill('<html><body>not metadata</body></html>');
    await importer.getByRole('button', { name: 'Import metadata' }).click();
    await expect.poll(() => importer.locator('.field-errors').allTextContents()).toEqual(['', expect.stringMatching(/\S/), '']);
    expect(await samlOf()).toBeNull();

    const xml = spMetadataXml({ entityId: SP_ENTITY, acs: [ACS_1, ACS_2], slo: SP_SLO, certificate: certificatePem });
    await importer.getByLabel('Metadata file').setInputFiles({ name: 'wiki-sp.xml', mimeType: 'application/xml', buffer: Buffer.from(xml) });
    await expect.poll(() => importer.getByLabel('Or paste the metadata XML').inputValue()).toBe(xml);
    await importer.getByRole('button', { name: 'Import metadata' }).click();
    await page.getByText('Metadata imported: the entity ID, endpoints and certificates are filled in.').waitFor();
    const imported = {
      entityId: SP_ENTITY,
      acs: [{ url: ACS_2, binding: 'HTTP-POST', index: 2 }, { url: ACS_1, binding: 'HTTP-POST', index: 1 }],
      slo: { url: SP_SLO, binding: 'HTTP-Redirect' },
      nameId: { format: 'persistent', source: 'id' },
      attributes: null,
      signResponse: true,
      signAssertion: true,
      wantAuthnRequestsSigned: false,
      spCertificates: [storedPem(certificatePem)],
      idpInitiated: false,
    };
    expect(await samlOf()).toEqual(imported);

    const form = page.getByTestId('saml-settings');
    await expect.poll(() => form.locator('input[name="samlEntityId"]').inputValue()).toBe(SP_ENTITY);
    expect(await form.locator('textarea[name="samlAcs"]').inputValue()).toBe(`${ACS_2}\n${ACS_1}`);
    expect(await form.locator('input[name="samlSlo"]').inputValue()).toBe(SP_SLO);
    expect(await form.locator('select[name="samlNameIdFormat"]').inputValue()).toBe('persistent');
    expect(await form.getByText('SP certificates: 1 (from its metadata).').count()).toBe(1);

    const keys = await adminJson<{ metadataUrl: string; entityId: string; keys: { status: string; certificate: string; fingerprint: string }[] }>('GET', '/api/admin/saml/keys');
    const active = keys.keys.find((k) => k.status === 'active')!;
    expect(keys.metadataUrl).toBe(`${server.url}/saml/metadata`);
    const idp = page.getByTestId('saml-idp');
    await expect.poll(() => idp.getByTestId('copy-metadata-url').textContent()).toBe(keys.metadataUrl);
    expect(await idp.getByTestId('copy-identity-provider-entity-id').textContent()).toBe(keys.entityId);
    expect(await idp.getByTestId('copy-signing-certificate').textContent()).toBe(active.certificate);
    expect(await idp.getByTestId('copy-sha-256-fingerprint').textContent()).toBe(active.fingerprint);
    expect(await seriousViolations(page)).toEqual([]);
    await shot(page, 'application-saml');
  });

  it('saves an edit, with a refused ACS URL shown under its field first; the record is exactly what was typed', async () => {
    const form = page.getByTestId('saml-settings');
    const before = await samlOf();
    await form.locator('textarea[name="samlAcs"]').fill(`${ACS_2}\nftp://wiki.example.com/acs`);
    await form.locator('select[name="samlNameIdFormat"]').selectOption('emailAddress');
    await form.locator('textarea[name="samlAttributes"]').fill('mail = email\nmemberOf = groups\n{"name":"urn:oid:2.5.4.42","source":{"type":"personField","field":"givenName"},"nameFormat":"uri","friendlyName":"givenName"}');
    await form.getByLabel('Allow IdP-initiated sign-on (from the people\'s app list)').check();
    await form.getByRole('button', { name: 'Save SAML settings' }).click();
    const acsErrors = form.getByRole('textbox', { name: 'Assertion consumer service URLs' });
    await expect.poll(() => acsErrors.getAttribute('aria-invalid')).toBe('true');
    expect(await form.locator('.field.invalid .field-errors p').allTextContents()).toEqual([expect.stringMatching(/^Line 2/)]);
    expect(await samlOf()).toEqual(before);
    expect(await seriousViolations(page)).toEqual([]);

    await form.locator('textarea[name="samlAcs"]').fill(`${ACS_2}\nhttps://wiki.example.com/saml/acs-2`);
    await form.getByRole('button', { name: 'Save SAML settings' }).click();
    await page.getByText('SAML settings saved.').waitFor();
    expect(await samlOf()).toEqual({
      entityId: SP_ENTITY,
      acs: [{ url: ACS_2, binding: 'HTTP-POST', index: 2 }, { url: 'https://wiki.example.com/saml/acs-2', binding: 'HTTP-POST', index: 3 }],
      slo: { url: SP_SLO, binding: 'HTTP-Redirect' },
      nameId: { format: 'emailAddress', source: 'email' },
      attributes: [
        { name: 'mail', source: { type: 'personField', field: 'email' } },
        { name: 'memberOf', source: { type: 'groups' } },
        { name: 'urn:oid:2.5.4.42', source: { type: 'personField', field: 'givenName' }, nameFormat: 'uri', friendlyName: 'givenName' },
      ],
      signResponse: true,
      signAssertion: true,
      wantAuthnRequestsSigned: false,
      spCertificates: [storedPem(certificatePem)],
      idpInitiated: true,
    });
    await expect.poll(() => form.locator('textarea[name="samlAttributes"]').inputValue()).toBe(
      'mail = email\nmemberOf = groups\n{"name":"urn:oid:2.5.4.42","source":{"type":"personField","field":"givenName"},"nameFormat":"uri","friendlyName":"givenName"}',
    );
  });

  it('imports the metadata from its URL, a missing one refused under the URL field', async () => {
    const moved = spMetadataXml({ entityId: SP_ENTITY, acs: ['https://wiki.example.com/saml/acs-moved'], slo: SP_SLO, certificate: certificatePem });
    const host = createServer((req, res) => {
      if (req.url === '/sp.xml') res.writeHead(200, { 'content-type': 'application/samlmetadata+xml' }).end(moved);
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(host.address() as AddressInfo).port}`;
    try {
      const importer = page.getByTestId('saml-import');
      const before = await samlOf();
      const urlField = importer.getByRole('textbox', { name: 'Or give the metadata URL' });
      await urlField.fill(`${base}/gone.xml`);
      await importer.getByRole('button', { name: 'Import metadata' }).click();
      await expect.poll(() => urlField.getAttribute('aria-invalid')).toBe('true');
      expect(await samlOf()).toEqual(before);
      await urlField.fill(`${base}/sp.xml`);
      await importer.getByRole('button', { name: 'Import metadata' }).click();
      await expect.poll(async () => ((await samlOf()) as { acs: unknown }).acs).toEqual([{ url: 'https://wiki.example.com/saml/acs-moved', binding: 'HTTP-POST', index: 1 }]);
      await expect.poll(() => page.getByTestId('saml-settings').locator('textarea[name="samlAcs"]').inputValue()).toBe('https://wiki.example.com/saml/acs-moved');
      expect(await urlField.inputValue()).toBe('');
    } finally {
      host.close();
    }
  });

  it('rotates the signing certificate after a confirmation and shows the next one, published before it signs', async () => {
    type Keys = { keys: { status: string; certificate: string; fingerprint: string }[] };
    const idp = page.getByTestId('saml-idp');
    const rotate = idp.getByRole('button', { name: 'Rotate the signing certificate' });
    const dialog = page.getByRole('dialog');
    await rotate.click();
    await dialog.getByText('Rotate the SAML signing certificate?').waitFor();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect((await adminJson<Keys>('GET', '/api/admin/saml/keys')).keys.map((k) => k.status)).toEqual(['active']);

    await rotate.click();
    await dialog.getByRole('button', { name: 'Rotate' }).click();
    await idp.getByTestId('saml-next-key').waitFor();
    const keys = (await adminJson<Keys>('GET', '/api/admin/saml/keys')).keys;
    expect(keys.map((k) => k.status)).toEqual(['next', 'active']);
    const [next, active] = keys as [Keys['keys'][number], Keys['keys'][number]];
    expect(await idp.getByTestId('copy-next-signing-certificate').textContent()).toBe(next.certificate);
    expect(await idp.getByTestId('copy-next-sha-256-fingerprint').textContent()).toBe(next.fingerprint);
    expect(await idp.getByTestId('copy-signing-certificate').textContent()).toBe(active.certificate);
    expect(await rotate.count()).toBe(0);
    const metadata = await (await fetch(`${server.url}/saml/metadata`)).text();
    const body = (pem: string) => pem.replace(/-----[A-Z ]+-----|\s/g, '');
    expect([...metadata.matchAll(/<ds:X509Certificate>([^<]+)</g)].map((m) => m[1]).sort()).toEqual([body(next.certificate), body(active.certificate)].sort());
    expect(await seriousViolations(page)).toEqual([]);
  });
});
