/**
 * Zammad (spec saml.md, presets). Facts from Zammad's admin documentation, Settings › Security ›
 * Third-party Applications › SAML: the SP metadata at /auth/saml/metadata, the ACS
 * /auth/saml/callback (HTTP-POST), the attributes it reads (email, name, first_name, last_name),
 * and its fields (IDP SSO target URL, IDP single logout target URL, IDP certificate, Name
 * Identifier Format), Zammad 6.x.
 */
import { baseOf, baseUrlInput } from '../build.js';
import type { Preset } from '../types.js';
import { SAML_CERTIFICATE, field, samlApplication, samlIdp, samlNotes } from './saml-family.js';

const DOCS = 'https://admin-docs.zammad.org/en/latest/settings/security/third-party/saml.html';

export const zammad: Preset = {
  id: 'zammad',
  name: 'Zammad',
  category: 'saml',
  protocol: 'saml',
  version: 1,
  summary: 'The Zammad helpdesk signs agents and customers in with SAML; people are matched by e-mail address.',
  inputs: [baseUrlInput('Zammad address', 'https://helpdesk.lan.example')],
  testedWith: { status: 'configuration', product: 'Zammad', version: '6.x', test: 'test/integration/presets.test.ts' },
  sources: [
    { title: 'Zammad admin documentation: SAML', section: 'Step 1: Configure Your IdP (metadata /auth/saml/metadata, ACS /auth/saml/callback; attributes email, name, first_name, last_name)', url: DOCS, version: '6.x' },
    { title: 'Zammad admin documentation: SAML', section: 'Step 2: Configure Zammad (IDP SSO target URL, IDP single logout target URL, IDP certificate, Name Identifier Format)', url: DOCS, version: '6.x' },
  ],
  caveats: ['Zammad links a SAML sign-in to an existing account with the same e-mail address; the NameID is the e-mail address for that reason.'],
  client: { tokenEndpointAuthMethod: 'client_secret_basic', pkce: false, scopes: [] },
  application: samlApplication((inputs) => {
    const base = `${baseOf(inputs)}/auth/saml`;
    return {
      entityId: `${base}/metadata`,
      acs: [{ url: `${base}/callback` }],
      slo: { url: `${base}/slo`, binding: 'HTTP-Redirect' },
      nameId: { format: 'emailAddress', source: 'email' },
      attributes: [field('email', 'email'), field('name', 'name'), field('first_name', 'givenName'), field('last_name', 'familyName')],
    };
  }),
  requirements: () => [],
  setup: (c) => {
    const idp = samlIdp(c);
    return {
      settings: [
        { label: 'Display name', value: 'Gatehouse' },
        { label: 'IDP SSO target URL', value: idp.sso },
        { label: 'IDP single logout target URL', value: idp.slo },
        { label: 'IDP certificate', value: SAML_CERTIFICATE },
        { label: 'Name Identifier Format', value: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress' },
      ],
      files: [],
      notes: ['In Zammad: Settings › Security › Third-party Applications › Authentication via SAML, switch it on and fill the fields above.', ...samlNotes(c)],
    };
  },
};
