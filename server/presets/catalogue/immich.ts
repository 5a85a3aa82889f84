/**
 * Immich (spec: "Immich: RS256 ID token"). Facts from Immich's documentation, "OAuth
 * Authentication" (docs.immich.app/administration/oauth): a confidential web client, redirect URIs
 * `/auth/login` and `/user-settings`, the mobile app's `app.immich:///oauth-callback` or the
 * Mobile Redirect URI Override with Immich's own `/api/oauth/mobile-redirect`, the settings
 * table (Signing Algorithm RS256 by default, Role Claim `immich_role`, Storage Label Claim).
 */
import { PLACEHOLDER_NOTE, TEST_SIGN_IN_NOTE, baseOf, baseUrlInput, caTrust, groupInput, oidcApplication, oidcSettings } from '../build.js';
import type { Preset } from '../types.js';

const DOC = 'https://docs.immich.app/administration/oauth';
const scopes = ['openid', 'email', 'profile'];

export const immich: Preset = {
  id: 'immich',
  name: 'Immich',
  category: 'web-app',
  protocol: 'oidc',
  version: 1,
  summary: 'Immich (web and mobile apps) signs people in with OAuth; Gatehouse signs its ID tokens with RS256, as Immich expects by default.',
  inputs: [
    baseUrlInput('Immich address', 'https://photos.lan.example'),
    groupInput('adminGroup', 'Group whose members are Immich administrators', 'admins', 'Optional: sets the immich_role claim to admin for them (user for everyone else). Immich reads it only when it creates the account.'),
  ],
  runtime: 'node',
  testedWith: { status: 'configuration', product: 'Immich', version: '(2026)', test: 'test/integration/presets.test.ts' },
  sources: [{ title: 'Immich documentation: OAuth Authentication', section: 'Prerequisites; Enable OAuth (settings table); Mobile Redirect URI', url: DOC, version: '2026' }],
  caveats: [
    'Immich\'s documentation asks for app.immich:///oauth-callback as a redirect URI. Gatehouse accepts custom schemes only for native (public) clients, and Immich is a confidential client; the preset registers Immich\'s own forwarder, /api/oauth/mobile-redirect, instead: turn on "Mobile Redirect URI Override" with that address, as the documentation describes for providers that refuse the custom scheme.',
    'Immich\'s "Signing Algorithm" setting defaults to RS256; the preset pins RS256 for this application so a change of Gatehouse\'s default does not break it.',
  ],
  client: { tokenEndpointAuthMethod: 'client_secret_post', pkce: false, scopes },
  application: (inputs) => {
    const base = baseOf(inputs);
    return oidcApplication({
      redirectUris: [`${base}/auth/login`, `${base}/user-settings`, `${base}/api/oauth/mobile-redirect`],
      signingAlg: 'RS256',
      customClaims: inputs.adminGroup
        ? [{ name: 'immich_role', source: { type: 'groupMap', map: [{ group: inputs.adminGroup, value: 'admin' }], default: 'user' } }]
        : [],
    });
  },
  requirements: (inputs) => [
    { kind: 'idTokenAlg', alg: 'RS256', text: 'the ID token is signed with RS256 (Immich\'s Signing Algorithm)' },
    { kind: 'claim', claim: 'preferred_username', text: 'preferred_username is in the ID token (Immich\'s Storage Label Claim)' },
    ...(inputs.adminGroup ? [{ kind: 'claimOneOf' as const, claim: 'immich_role', values: ['user', 'admin'], text: 'the immich_role claim is user or admin (Immich\'s Role Claim)' }] : []),
  ],
  setup: (c) => ({
    settings: [
      { label: 'Issuer URL', value: c.issuer },
      ...oidcSettings(c).filter((s) => s.label.startsWith('Client')),
      { label: 'Token Endpoint Auth Method', value: 'client_secret_post' },
      { label: 'Scope', value: scopes.join(' ') },
      { label: 'Signing Algorithm (ID Token Signed Response Algorithm)', value: 'RS256' },
      { label: 'Storage Label Claim', value: 'preferred_username' },
      { label: 'Role Claim', value: 'immich_role' },
      { label: 'Mobile Redirect URI Override', value: 'on' },
      { label: 'Mobile Redirect URI', value: `${baseOf(c.inputs)}/api/oauth/mobile-redirect` },
    ],
    files: [],
    notes: ['Type these under Administration → Settings → OAuth Authentication.', PLACEHOLDER_NOTE, ...caTrust.runtime(c), TEST_SIGN_IN_NOTE],
  }),
};
