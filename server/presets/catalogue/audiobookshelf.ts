/**
 * Audiobookshelf. Facts from Audiobookshelf 2.36.0's authentication settings page
 * (client/pages/config/authentication.vue: the redirect URIs `/auth/openid/callback` and
 * `/auth/openid/mobile-redirect`, "Allowed Mobile Redirect URIs", the group claim whose values
 * admin, user or guest set the role) and the OIDC guide on audiobookshelf.org.
 */
import { PLACEHOLDER_NOTE, TEST_SIGN_IN_NOTE, baseOf, baseUrlInput, caTrust, groupInput, oidcApplication, oidcSettings } from '../build.js';
import type { Preset } from '../types.js';

const scopes = ['openid', 'profile', 'email'];

export const audiobookshelf: Preset = {
  id: 'audiobookshelf',
  name: 'Audiobookshelf',
  category: 'web-app',
  protocol: 'oidc',
  version: 1,
  summary: 'Audiobookshelf (web and mobile apps) signs people in with OpenID Connect.',
  inputs: [
    baseUrlInput('Audiobookshelf address', 'https://books.lan.example'),
    groupInput('adminGroup', 'Group whose members are Audiobookshelf admins', 'admins', 'Optional: sets the abs_groups claim to ["admin"] for them and ["user"] for everyone else.'),
  ],
  runtime: 'node',
  testedWith: { status: 'documentation', product: 'Audiobookshelf', version: '2.36.0', test: null },
  sources: [
    { title: 'Audiobookshelf: Authentication settings (OpenID Connect)', section: 'client/pages/config/authentication.vue (redirect URIs, mobile redirect URIs, group claim)', url: 'https://github.com/advplyr/audiobookshelf/blob/v2.36.0/client/pages/config/authentication.vue', version: '2.36.0' },
    { title: 'Audiobookshelf guide: OIDC Authentication', section: 'Configuring OpenID Connect', url: 'https://www.audiobookshelf.org/guides/oidc_authentication', version: '2.x' },
  ],
  caveats: ['The mobile apps return through /auth/openid/mobile-redirect, which forwards to audiobookshelf://oauth: keep that address in "Allowed Mobile Redirect URIs".'],
  client: { tokenEndpointAuthMethod: 'client_secret_basic', pkce: true, scopes },
  application: (inputs) => {
    const base = baseOf(inputs);
    return oidcApplication({
      redirectUris: [`${base}/auth/openid/callback`, `${base}/auth/openid/mobile-redirect`],
      customClaims: inputs.adminGroup
        ? [{ name: 'abs_groups', source: { type: 'groupMap', map: [{ group: inputs.adminGroup, value: ['admin'] }], default: ['user'] } }]
        : [],
    });
  },
  requirements: (inputs) => [
    { kind: 'claim', claim: 'preferred_username', text: 'preferred_username is in the ID token (matching existing users by username)' },
    ...(inputs.adminGroup ? [{ kind: 'claimList' as const, claim: 'abs_groups', text: 'the abs_groups claim is a list (Group Claim)' }] : []),
  ],
  setup: (c) => ({
    settings: [
      { label: 'Issuer URL', value: c.issuer },
      ...oidcSettings(c).filter((s) => s.label.startsWith('Client')),
      { label: 'Signing Algorithm', value: 'RS256' },
      { label: 'Allowed Mobile Redirect URIs', value: 'audiobookshelf://oauth' },
      { label: 'Match existing users by', value: 'username' },
      { label: 'Auto Register', value: 'on' },
      ...(c.inputs.adminGroup ? [{ label: 'Group Claim', value: 'abs_groups' }] : []),
    ],
    files: [],
    notes: ['Type these under Settings → Authentication → OpenID Connect Authentication ("Auto-populate" fills the endpoints from the issuer).', PLACEHOLDER_NOTE, ...caTrust.runtime(c), TEST_SIGN_IN_NOTE],
  }),
};
