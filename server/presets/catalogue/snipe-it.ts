/**
 * Snipe-IT (spec saml.md, presets). Facts from Snipe-IT's SAML documentation (the SP's entity ID is
 * the app's URL, ACS /saml/acs, single logout /saml/sls; a user must already exist, matched by the
 * NameID against the username unless "Attribute Mapping - Username" names an attribute; the IdP is
 * given by its metadata URL or XML), Snipe-IT 7.x / 8.x.
 */
import { baseOf, baseUrlInput } from '../build.js';
import type { Preset } from '../types.js';
import { samlApplication, samlIdp, samlNotes } from './saml-family.js';

const DOCS = 'https://snipe-it.readme.io/docs/saml';

export const snipeIt: Preset = {
  id: 'snipe-it',
  name: 'Snipe-IT',
  category: 'saml',
  protocol: 'saml',
  version: 1,
  summary: 'Snipe-IT asset management signs existing users in with SAML, matching the Gatehouse username to the Snipe-IT username.',
  inputs: [baseUrlInput('Snipe-IT address (APP_URL)', 'https://assets.lan.example')],
  testedWith: { status: 'configuration', product: 'Snipe-IT', version: '8.x', test: 'test/integration/presets.test.ts' },
  sources: [
    { title: 'Snipe-IT documentation: SAML', section: 'General Steps (Entity-ID, ACS URL, SLS URL; IdP metadata URL or file)', url: DOCS, version: '8.x' },
    { title: 'Snipe-IT documentation: SAML', section: 'Attribute Mapping - Username (the NameID by default); Just-in-Time provisioning (none)', url: DOCS, version: '8.x' },
  ],
  caveats: [
    'Snipe-IT creates no users on a SAML sign-in: a person signs in only when a Snipe-IT user with their Gatehouse username exists (the NameID is the username).',
    'Keep a way in while setting up: /login?nosaml shows Snipe-IT\'s own login form.',
  ],
  client: { tokenEndpointAuthMethod: 'client_secret_basic', pkce: false, scopes: [] },
  application: samlApplication((inputs) => {
    const base = baseOf(inputs);
    return {
      entityId: base,
      acs: [{ url: `${base}/saml/acs` }],
      slo: { url: `${base}/saml/sls`, binding: 'HTTP-Redirect' },
      nameId: { format: 'unspecified', source: 'username' },
      attributes: null,
    };
  }),
  requirements: () => [],
  setup: (c) => ({
    settings: [
      { label: 'SAML enabled', value: 'yes' },
      { label: 'SAML IdP Metadata (URL)', value: samlIdp(c).metadata },
      { label: 'Attribute Mapping - Username', value: '(empty: the NameID, which is the Gatehouse username)' },
      { label: 'SAML Single Log Out', value: 'yes' },
    ],
    files: [],
    notes: ['In Snipe-IT: Admin › Settings › SAML. Snipe-IT reads Gatehouse\'s metadata from the URL when the settings are saved; save them again after a key rotation.', ...samlNotes(c, { fetchesMetadata: true })],
  }),
};
