/**
 * Grafana's generic OAuth (spec presets-and-operations.md: "Grafana: the role claim resolves").
 * Facts from Grafana's documentation, "Configure Generic OAuth authentication"
 * (docs/sources/setup-grafana/configure-security/configure-authentication/generic-oauth): the
 * callback `/login/generic_oauth`, `[auth.generic_oauth]` keys, PKCE, refresh tokens, role
 * mapping by a JMESPath `role_attribute_path` (Admin, Editor, Viewer or None), `tls_client_ca`.
 */
import { PLACEHOLDERS, PLACEHOLDER_NOTE, TEST_SIGN_IN_NOTE, baseOf, baseUrlInput, caTrust, groupInput, oidcApplication, oidcSettings } from '../build.js';
import type { Preset, PresetClaim, PresetInputs } from '../types.js';

const DOC = 'https://grafana.com/docs/grafana/v10.4/setup-grafana/configure-security/configure-authentication/generic-oauth/';
const scopes = ['openid', 'profile', 'email', 'offline_access'];

/**
 * The role claim: with groups given, the first group the person is in decides (default Viewer);
 * without, the person's role in this application (admin → Admin, member → Viewer).
 */
function roleClaim(inputs: PresetInputs): { claim: PresetClaim; path: string; values: string[] } {
  const map = [
    ...(inputs.adminGroup ? [{ group: inputs.adminGroup, value: 'Admin' }] : []),
    ...(inputs.editorGroup ? [{ group: inputs.editorGroup, value: 'Editor' }] : []),
  ];
  if (map.length) {
    return { claim: { name: 'grafana_role', source: { type: 'groupMap', map, default: 'Viewer' } }, path: 'grafana_role', values: ['Admin', 'Editor', 'Viewer'] };
  }
  return { claim: { name: 'grafana_role', source: { type: 'role' } }, path: "grafana_role == 'admin' && 'Admin' || 'Viewer'", values: ['admin', 'member'] };
}

export const grafana: Preset = {
  id: 'grafana',
  name: 'Grafana',
  category: 'web-app',
  protocol: 'oidc',
  version: 1,
  summary: 'Grafana signs people in with generic OAuth and gives them Admin, Editor or Viewer from a claim.',
  inputs: [
    baseUrlInput('Grafana address (root_url)', 'https://grafana.lan.example'),
    groupInput('adminGroup', 'Group whose members are Grafana Admins', 'admins', 'Optional. Without groups, the application role decides: admin → Admin, member → Viewer.'),
    groupInput('editorGroup', 'Group whose members are Grafana Editors', 'editors', 'Optional: members (not in the admin group) become Editors.'),
  ],
  testedWith: { status: 'configuration', product: 'Grafana', version: '10.4', test: 'test/integration/presets.test.ts' },
  sources: [
    { title: 'Configure Generic OAuth authentication', section: 'Steps (callback /login/generic_oauth); Configure a refresh token; Configure role mapping', url: DOC, version: '10.4' },
  ],
  caveats: [
    'Grafana reads role_attribute_path from the ID token first, then from userinfo; Gatehouse puts the grafana_role claim in both.',
    'If Grafana runs behind a proxy, set root_url in [server], or Grafana builds the callback from the wrong address.',
  ],
  client: { tokenEndpointAuthMethod: 'client_secret_basic', pkce: true, scopes },
  application: (inputs) =>
    oidcApplication({
      redirectUris: [`${baseOf(inputs)}/login/generic_oauth`],
      postLogoutRedirectUris: [`${baseOf(inputs)}/login`],
      grantTypes: ['authorization_code', 'refresh_token'],
      customClaims: [roleClaim(inputs).claim],
    }),
  requirements: (inputs) => [
    { kind: 'claimOneOf', claim: 'grafana_role', values: roleClaim(inputs).values, text: `the grafana_role claim resolves to a Grafana role (${roleClaim(inputs).values.join(', ')})` },
    { kind: 'refreshToken', text: 'a refresh token was issued (use_refresh_token keeps the Grafana session alive)' },
  ],
  setup: (c) => {
    const base = baseOf(c.inputs);
    const { path } = roleClaim(c.inputs);
    const ini = [
      '[auth.generic_oauth]',
      'enabled = true',
      'name = Gatehouse',
      `client_id = ${c.app.id}`,
      `client_secret = ${PLACEHOLDERS.clientSecret}`,
      `scopes = ${scopes.join(' ')}`,
      `auth_url = ${c.endpoints.authorization}`,
      `token_url = ${c.endpoints.token}`,
      `api_url = ${c.endpoints.userinfo}`,
      'use_pkce = true',
      'use_refresh_token = true',
      'login_attribute_path = preferred_username',
      `role_attribute_path = ${path}`,
      'role_attribute_strict = true',
      'allow_sign_up = true',
      `signout_redirect_url = ${c.endpoints.endSession}?client_id=${encodeURIComponent(c.app.id)}&post_logout_redirect_uri=${encodeURIComponent(`${base}/login`)}`,
      ...(c.lanCa ? ['tls_client_ca = /etc/grafana/gatehouse-ca.pem'] : []),
    ].join('\n');
    return {
      settings: [...oidcSettings(c, { redirect: `${base}/login/generic_oauth` }), { label: 'Role attribute path', value: path }],
      files: [{ name: 'grafana.ini', content: `${ini}\n` }],
      notes: [
        `Add the section to grafana.ini (or the matching GF_AUTH_GENERIC_OAUTH_* variables) and set root_url = ${base} under [server].`,
        PLACEHOLDER_NOTE,
        ...caTrust.file(c, 'save it as /etc/grafana/gatehouse-ca.pem (the file tls_client_ca names).'),
        TEST_SIGN_IN_NOTE,
      ],
    };
  },
};
