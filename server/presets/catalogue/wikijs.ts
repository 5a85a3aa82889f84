/**
 * Wiki.js 2.x (spec saml.md, presets). Facts from its SAML 2.0 module
 * (server/modules/authentication/saml/definition.yml: entryPoint, issuer, audience, cert,
 * identifierFormat, authnRequestBinding, mappingUID, mappingEmail, mappingDisplayName,
 * mappingGroups; authentication.js: the NameID when the UID field is absent), passport-saml under
 * it, and the callback each strategy shows (/login/<strategy key>/callback), Wiki.js 2.5.
 */
import { baseOf, baseUrlInput } from '../build.js';
import type { Preset } from '../types.js';
import { SAML_CERTIFICATE, field, groups, samlApplication, samlIdp, samlNotes } from './saml-family.js';

const DEFINITION = 'https://github.com/requarks/wiki/blob/main/server/modules/authentication/saml/definition.yml';
/** The claim URIs Wiki.js maps by default: sending them under these names needs no mapping changes. */
const WS = 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims';

export const wikijs: Preset = {
  id: 'wikijs',
  name: 'Wiki.js',
  category: 'saml',
  protocol: 'saml',
  version: 1,
  summary: 'Wiki.js 2 signs people in with its SAML 2.0 authentication strategy; the attributes use the names it maps by default.',
  inputs: [
    baseUrlInput('Wiki.js address', 'https://wiki.lan.example'),
    {
      key: 'strategyKey', label: 'The SAML strategy\'s key in Wiki.js', example: '3f2b9c1e-8a4d-4f7e-9b61-2c5d7e8f9a10', kind: 'text', required: true,
      pattern: { source: '^[A-Za-z0-9-]{1,64}$', message: 'the key from the strategy\'s callback URL (/login/<key>/callback): letters, digits and -' },
      hint: 'Add a SAML 2.0 strategy in Wiki.js (Administration › Authentication); its Callback URL is /login/<key>/callback.',
    },
  ],
  testedWith: { status: 'configuration', product: 'Wiki.js', version: '2.5', test: 'test/integration/presets.test.ts' },
  sources: [
    { title: 'Wiki.js SAML 2.0 module definition', section: 'props entryPoint, issuer, audience, cert, identifierFormat, authnRequestBinding, mappingUID, mappingEmail, mappingDisplayName, mappingGroups', url: DEFINITION, version: '2.5' },
    { title: 'Wiki.js SAML 2.0 module', section: 'authentication.js: the unique ID falls back to the NameID', url: 'https://github.com/requarks/wiki/blob/main/server/modules/authentication/saml/authentication.js', version: '2.5' },
    { title: 'Wiki.js documentation: SAML', section: 'Authentication Module (passport-saml as-is)', url: 'https://docs.requarks.io/auth/saml', version: '2.5' },
  ],
  caveats: [
    'Wiki.js asks for an e-mail NameID by default (Name Identifier format); set it to persistent as below, or the e-mail address becomes the account\'s unique ID and a changed address makes a new account.',
    'Its request signing and digest default to SHA-1; leave the private key empty (Gatehouse does not need signed requests here) rather than sign with SHA-1, which Gatehouse refuses.',
  ],
  client: { tokenEndpointAuthMethod: 'client_secret_basic', pkce: false, scopes: [] },
  application: samlApplication((inputs) => {
    const base = `${baseOf(inputs)}/login/${inputs.strategyKey ?? ''}`;
    return {
      entityId: base,
      acs: [{ url: `${base}/callback` }],
      slo: null,
      nameId: { format: 'persistent', source: 'id' },
      attributes: [field(`${WS}/emailaddress`, 'email', true), field(`${WS}/name`, 'name', true), groups('memberOf')],
    };
  }),
  requirements: () => [],
  setup: (c) => {
    const idp = samlIdp(c);
    return {
      settings: [
        { label: 'Entry Point', value: idp.sso },
        { label: 'Issuer', value: `${baseOf(c.inputs)}/login/${c.inputs.strategyKey ?? ''}` },
        { label: 'Audience', value: `${baseOf(c.inputs)}/login/${c.inputs.strategyKey ?? ''}` },
        { label: 'Certificate', value: SAML_CERTIFICATE },
        { label: 'Signature Algorithm / Digest Algorithm', value: 'sha256 / sha256' },
        { label: 'Name Identifier format', value: 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent' },
        { label: 'Request Binding', value: 'HTTP-Redirect' },
        { label: 'Unique ID / Email / Display Name Field Mapping', value: 'the defaults (the NameID, emailaddress and name claim URIs)' },
        { label: 'User Groups Field Mapping', value: 'memberOf' },
      ],
      files: [],
      notes: ['Wiki.js takes no IdP metadata: the entry point and certificate are all it needs.', ...samlNotes(c)],
    };
  },
};
