/**
 * Synology DSM 7.2's OpenID Connect SSO client (Control Panel → Domain/LDAP → SSO Client). Facts
 * from Synology's DSM 7.2 help for the SSO Client page (Profile OIDC, Well-known URL, Application
 * ID and key, Redirect URL, Authorization scope, Username claim). DSM does not create accounts
 * from OIDC: the account must already exist (local, domain or LDAP).
 */
import { PLACEHOLDER_NOTE, TEST_SIGN_IN_NOTE, baseOf, baseUrlInput, caTrust, oidcApplication, oidcSettings } from '../build.js';
import type { Preset } from '../types.js';

const scopes = ['openid', 'profile', 'email', 'groups'];

export const synologyDsm: Preset = {
  id: 'synology-dsm',
  name: 'Synology DSM',
  category: 'web-app',
  protocol: 'oidc',
  version: 1,
  summary: 'Synology DSM 7.2 signs people in to existing DSM accounts with OpenID Connect.',
  inputs: [baseUrlInput('DSM address', 'https://nas.lan.example:5001')],
  testedWith: { status: 'documentation', product: 'Synology DSM', version: '7.2', test: null },
  sources: [
    { title: 'Synology Knowledge Center: DSM 7.2 help, Domain/LDAP → SSO Client', section: 'OpenID Connect SSO service settings', url: 'https://kb.synology.com/', version: '7.2' },
  ],
  caveats: [
    'DSM signs people in only to accounts that already exist with the name the Username claim gives; it does not create them. Joining DSM to Gatehouse\'s LDAP directory (the LDAP presets) makes every member exist under the same username.',
    'The Redirect URL is the DSM address itself; the preset registers it with and without a trailing slash.',
  ],
  client: { tokenEndpointAuthMethod: 'client_secret_basic', pkce: false, scopes },
  application: (inputs) => oidcApplication({ redirectUris: [baseOf(inputs), `${baseOf(inputs)}/`] }),
  requirements: () => [{ kind: 'claim', claim: 'preferred_username', text: 'preferred_username is in the ID token (Username claim)' }],
  setup: (c) => ({
    settings: [
      { label: 'Profile', value: 'OIDC' },
      { label: 'Name', value: 'Gatehouse' },
      { label: 'Well-known URL', value: c.discoveryUrl },
      ...oidcSettings(c).filter((s) => s.label.startsWith('Client')).map((s) => ({ label: s.label === 'Client ID' ? 'Application ID' : 'Application secret', value: s.value })),
      { label: 'Redirect URL', value: baseOf(c.inputs) },
      { label: 'Authorization scope', value: scopes.join(' ') },
      { label: 'Username claim', value: 'preferred_username' },
    ],
    files: [],
    notes: ['Turn on "Enable OpenID Connect SSO service" under Control Panel → Domain/LDAP → SSO Client, then type these in its settings and Apply.', PLACEHOLDER_NOTE, ...caTrust.file(c, 'import it under Control Panel → Security → Certificate (DSM checks the provider\'s certificate).'), TEST_SIGN_IN_NOTE],
  }),
};
