/**
 * Open WebUI. Facts from Open WebUI's documentation, "SSO (OAuth, OIDC, Trusted Header)"
 * (docs/features/authentication-access/auth/sso/index.mdx): the callback `/oauth/oidc/callback`,
 * the OAUTH_* / OPENID_* variables, role management from a roles claim (OAUTH_ROLES_CLAIM,
 * OAUTH_ALLOWED_ROLES, OAUTH_ADMIN_ROLES) and group management from the groups claim.
 */
import { PLACEHOLDERS, PLACEHOLDER_NOTE, TEST_SIGN_IN_NOTE, baseOf, baseUrlInput, caTrust, envBlock, oidcApplication, oidcSettings } from '../build.js';
import type { Preset } from '../types.js';

const DOC = 'https://docs.openwebui.com/features/authentication-access/auth/sso/';
const scopes = ['openid', 'email', 'profile', 'groups'];

export const openWebui: Preset = {
  id: 'open-webui',
  name: 'Open WebUI',
  category: 'web-app',
  protocol: 'oidc',
  version: 1,
  summary: 'Open WebUI signs people in with OIDC; the application role (member or admin) becomes their Open WebUI role.',
  inputs: [baseUrlInput('Open WebUI address (WEBUI_URL)', 'https://chat.lan.example')],
  runtime: 'python',
  testedWith: { status: 'documentation', product: 'Open WebUI', version: '(August 2026)', test: null },
  sources: [{ title: 'Open WebUI: SSO (OAuth, OIDC, Trusted Header)', section: 'OIDC; OAuth Role Management; OAuth Group Management', url: DOC, version: '2026-08' }],
  caveats: [
    'The documentation says roles are read from the access token; Gatehouse puts the roles claim (the member\'s role in this application) in the access token, the ID token and userinfo.',
    'WEBUI_URL must be set before OAuth is enabled, as Open WebUI builds the redirect URI from it.',
  ],
  client: { tokenEndpointAuthMethod: 'client_secret_basic', pkce: false, scopes },
  application: (inputs) =>
    oidcApplication({
      redirectUris: [`${baseOf(inputs)}/oauth/oidc/callback`],
      postLogoutRedirectUris: [`${baseOf(inputs)}/auth`],
      customClaims: [{ name: 'roles', source: { type: 'role' }, inAccessToken: true }],
    }),
  requirements: () => [
    { kind: 'accessTokenClaim', claim: 'roles', values: ['member', 'admin'], text: 'the access token carries roles (member or admin) for OAUTH_ROLES_CLAIM' },
    { kind: 'claim', claim: 'email', text: 'email is in the ID token (Open WebUI accounts are keyed by e-mail)' },
  ],
  setup: (c) => ({
    settings: oidcSettings(c, { redirect: c.app.redirectUris[0] }),
    files: [{
      name: '.env',
      content: envBlock([
        ['WEBUI_URL', baseOf(c.inputs)],
        ['ENABLE_OAUTH_SIGNUP', 'true'],
        ['OAUTH_PROVIDER_NAME', 'Gatehouse'],
        ['OAUTH_CLIENT_ID', c.app.id],
        ['OAUTH_CLIENT_SECRET', PLACEHOLDERS.clientSecret],
        ['OPENID_PROVIDER_URL', c.discoveryUrl],
        ['OPENID_REDIRECT_URI', c.app.redirectUris[0]!],
        ['OAUTH_SCOPES', `"${scopes.join(' ')}"`],
        ['ENABLE_OAUTH_ROLE_MANAGEMENT', 'true'],
        ['OAUTH_ROLES_CLAIM', 'roles'],
        ['OAUTH_ALLOWED_ROLES', 'member,admin'],
        ['OAUTH_ADMIN_ROLES', 'admin'],
        ['ENABLE_OAUTH_GROUP_MANAGEMENT', 'true'],
        ['OAUTH_GROUP_CLAIM', 'groups'],
      ]),
    }],
    notes: [PLACEHOLDER_NOTE, ...caTrust.runtime(c), TEST_SIGN_IN_NOTE],
  }),
};
