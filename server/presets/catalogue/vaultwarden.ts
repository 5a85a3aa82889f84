/**
 * Vaultwarden's SSO (spec: Vaultwarden needs `email_verified`). Facts from Vaultwarden 1.37.2's
 * `.env.template` (SSO section: SSO_ENABLED … SSO_ALLOW_UNKNOWN_EMAIL_VERIFICATION) and its
 * redirect address `${DOMAIN}/identity/connect/oidc-signin` (src/config.rs).
 */
import { PLACEHOLDERS, PLACEHOLDER_NOTE, TEST_SIGN_IN_NOTE, baseOf, baseUrlInput, caTrust, envBlock, oidcApplication, oidcSettings } from '../build.js';
import type { Preset } from '../types.js';

const TEMPLATE = 'https://github.com/dani-garcia/vaultwarden/blob/1.37.2/.env.template';
const scopes = ['openid', 'email', 'profile', 'offline_access'];

export const vaultwarden: Preset = {
  id: 'vaultwarden',
  name: 'Vaultwarden',
  category: 'web-app',
  protocol: 'oidc',
  version: 1,
  summary: 'Vaultwarden signs people in with SSO (the master password still unlocks the vault); it needs a verified e-mail address.',
  inputs: [baseUrlInput('Vaultwarden address (DOMAIN)', 'https://vault.lan.example')],
  testedWith: { status: 'configuration', product: 'Vaultwarden', version: '1.37.2', test: 'test/integration/presets.test.ts' },
  sources: [
    { title: 'Vaultwarden .env.template', section: 'SSO settings (SSO_ENABLED … SSO_CLIENT_CACHE_EXPIRATION)', url: TEMPLATE, version: '1.37.2' },
    { title: 'Vaultwarden source: the SSO redirect address', section: 'src/config.rs: {DOMAIN}/identity/connect/oidc-signin', url: 'https://github.com/dani-garcia/vaultwarden/blob/1.37.2/src/config.rs', version: '1.37.2' },
  ],
  caveats: [
    'With SSO_ALLOW_UNKNOWN_EMAIL_VERIFICATION=false (the default), Vaultwarden refuses a sign-in whose email_verified is not true. Gatehouse marks an address verified after an e-mailed invitation, a verification link or an administrator\'s change.',
    'Vaultwarden uses the provider\'s tokens for its session unless SSO_AUTH_ONLY_NOT_SESSION=true; Gatehouse issues a refresh token only for offline_access, so the preset asks for it.',
  ],
  client: { tokenEndpointAuthMethod: 'client_secret_basic', pkce: true, scopes },
  application: (inputs) =>
    oidcApplication({ redirectUris: [`${baseOf(inputs)}/identity/connect/oidc-signin`], grantTypes: ['authorization_code', 'refresh_token'] }),
  requirements: () => [{ kind: 'claimTrue', claim: 'email_verified', text: 'email_verified is true (Vaultwarden refuses unverified addresses)' }],
  setup: (c) => ({
    settings: oidcSettings(c, { redirect: c.app.redirectUris[0] }),
    files: [{
      name: '.env',
      content: envBlock([
        ['DOMAIN', baseOf(c.inputs)],
        ['SSO_ENABLED', 'true'],
        ['SSO_ONLY', 'false'],
        ['SSO_SIGNUPS_MATCH_EMAIL', 'true'],
        ['SSO_ALLOW_UNKNOWN_EMAIL_VERIFICATION', 'false'],
        ['SSO_AUTHORITY', c.issuer],
        ['SSO_SCOPES', `"${scopes.filter((s) => s !== 'openid').join(' ')}"`],
        ['SSO_PKCE', 'true'],
        ['SSO_CLIENT_ID', c.app.id],
        ['SSO_CLIENT_SECRET', PLACEHOLDERS.clientSecret],
      ]),
    }],
    notes: ['SSO_SCOPES leaves out openid, which Vaultwarden always adds.', PLACEHOLDER_NOTE, ...caTrust.runtime(c), TEST_SIGN_IN_NOTE],
  }),
};
