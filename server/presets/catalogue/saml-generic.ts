/**
 * Any SAML 2.0 service provider (spec saml.md): its entity ID and assertion consumer service as the
 * app's own metadata gives them, the persistent NameID and the default attributes (email, username,
 * name, givenName, familyName, groups). Importing the SP's metadata on the SAML tab afterwards fills
 * its single logout and certificates. Facts from SAML 2.0 Metadata (§2.4.4 SPSSODescriptor) and the
 * saml2int deployment profile.
 */
import { baseUrlInput } from '../build.js';
import type { Preset } from '../types.js';
import { idpSettings, samlApplication, samlNotes } from './saml-family.js';

export const samlGeneric: Preset = {
  id: 'saml-generic',
  name: 'Any SAML 2.0 app',
  category: 'saml',
  protocol: 'saml',
  version: 1,
  summary: 'Any app that signs people in as a SAML 2.0 service provider: its entity ID and ACS URL, a persistent NameID and the default attributes.',
  inputs: [
    baseUrlInput('App address', 'https://app.lan.example'),
    {
      key: 'entityId', label: 'The app\'s SAML entity ID (SP issuer)', example: 'https://app.lan.example/saml/metadata', kind: 'text', required: true,
      pattern: { source: '^[A-Za-z][A-Za-z0-9+.-]*:\\S{1,1000}$', message: 'a URI without spaces (an https URL or a URN), as the app\'s metadata gives it' },
      hint: 'The entityID of the app\'s SP metadata; often its metadata URL.',
    },
    { key: 'acsUrl', label: 'The app\'s assertion consumer service (ACS) URL', example: 'https://app.lan.example/saml/acs', kind: 'url', required: true, hint: 'Where the app takes the HTTP-POST Response.' },
  ],
  testedWith: { status: 'configuration', product: 'SAML 2.0 service providers (saml2int)', version: 'SAML 2.0 errata 05', test: 'test/integration/presets.test.ts' },
  sources: [
    { title: 'Metadata for the OASIS Security Assertion Markup Language (SAML) V2.0', section: '§2.4.4 SPSSODescriptor, AssertionConsumerService', url: 'https://docs.oasis-open.org/security/saml/v2.0/saml-metadata-2.0-os.pdf', version: 'SAML 2.0 OS (errata 05)' },
    { title: 'SAML V2.0 Deployment Profile for Federation Interoperability (saml2int)', section: 'Service providers: metadata, persistent identifiers, signed assertions', url: 'https://kantarainitiative.github.io/SAMLprofiles/saml2int.html', version: '2.0' },
  ],
  caveats: ['The SP\'s single logout endpoint and signing certificate come from its metadata: import it on the application\'s SAML tab (file, paste or URL) to add them.'],
  client: { tokenEndpointAuthMethod: 'client_secret_basic', pkce: false, scopes: [] },
  application: samlApplication((inputs) => ({
    entityId: inputs.entityId ?? '',
    acs: [{ url: inputs.acsUrl ?? '' }],
    slo: null,
    nameId: { format: 'persistent', source: 'id' },
    attributes: null,
  })),
  requirements: () => [],
  setup: (c) => ({
    settings: idpSettings(c),
    files: [],
    notes: [
      'Give the app the IdP metadata URL where it takes one; otherwise the entity ID, single sign-on URL and certificate one by one. The NameID is persistent (opaque and stable per person for this app); the attributes are email, username, name, givenName, familyName and groups (basic names).',
      ...samlNotes(c, { fetchesMetadata: true }),
    ],
  }),
};
