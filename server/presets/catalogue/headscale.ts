/**
 * Headscale. Facts from Headscale's documentation v0.29.2 ("OpenID Connect", headscale.net/stable/ref/oidc): the callback
 * `/oidc/callback`, PKCE (S256), allowed_groups from the `groups` claim, and
 * `email_verified_required` (a verified e-mail by default).
 */
import { PLACEHOLDERS, PLACEHOLDER_NOTE, TEST_SIGN_IN_NOTE, baseOf, baseUrlInput, caTrust, groupInput, oidcApplication, oidcSettings } from '../build.js';
import type { Preset } from '../types.js';

const DOC = 'https://headscale.net/stable/ref/oidc/';
const scopes = ['openid', 'profile', 'email', 'groups'];

export const headscale: Preset = {
  id: 'headscale',
  name: 'Headscale',
  category: 'web-app',
  protocol: 'oidc',
  version: 1,
  summary: 'Headscale (a self-hosted Tailscale control server) registers nodes for people who sign in with OIDC.',
  inputs: [
    baseUrlInput('Headscale server_url', 'https://headscale.lan.example'),
    groupInput('allowedGroup', 'Group allowed to join nodes', 'vpn-users', 'Optional: only members of this directory group may sign in (allowed_groups).'),
  ],
  testedWith: { status: 'documentation', product: 'Headscale', version: '0.29.2', test: null },
  sources: [{ title: 'Headscale documentation: OpenID Connect', section: 'Basic configuration; Enable PKCE; Authorize users with filters; Control email verification', url: DOC, version: '0.29.2' }],
  caveats: ['Headscale synchronises the e-mail address only when email_verified is true (email_verified_required, on by default).'],
  client: { tokenEndpointAuthMethod: 'client_secret_basic', pkce: true, scopes },
  application: (inputs) => oidcApplication({ redirectUris: [`${baseOf(inputs)}/oidc/callback`] }),
  requirements: (inputs) => [
    { kind: 'claimTrue', claim: 'email_verified', text: 'email_verified is true (email_verified_required)' },
    ...(inputs.allowedGroup ? [{ kind: 'claimList' as const, claim: 'groups', text: 'the groups claim is a list (allowed_groups)' }] : []),
  ],
  setup: (c) => {
    const yaml = [
      'oidc:',
      '  only_start_if_oidc_is_available: true',
      `  issuer: "${c.issuer}"`,
      `  client_id: "${c.app.id}"`,
      `  client_secret: "${PLACEHOLDERS.clientSecret}"`,
      `  scope: [${scopes.map((s) => `"${s}"`).join(', ')}]`,
      '  pkce:',
      '    enabled: true',
      '    method: S256',
      ...(c.inputs.allowedGroup ? ['  allowed_groups:', `    - "${c.inputs.allowedGroup}"`] : []),
    ].join('\n');
    return {
      settings: oidcSettings(c, { redirect: c.app.redirectUris[0] }),
      files: [{ name: 'config.yaml', content: `${yaml}\n` }],
      notes: ['Merge the oidc section into Headscale\'s config.yaml and restart it.', PLACEHOLDER_NOTE, ...caTrust.runtime(c), TEST_SIGN_IN_NOTE],
    };
  },
};
