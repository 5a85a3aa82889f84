/**
 * Forgejo, signing in through an "OpenID Connect" authentication source. Facts from Forgejo's
 * documentation (forgejo/docs, 2026-04): admin/command-line.md (`forgejo admin auth add-oauth`),
 * admin/config-cheat-sheet.md (`[oauth2_client]`) and user/oauth2-provider.md (the callback
 * `/user/oauth2/<name>/callback`).
 */
import { PLACEHOLDER_NOTE, TEST_SIGN_IN_NOTE, baseOf, baseUrlInput, caTrust, groupInput, oidcApplication, oidcSettings } from '../build.js';
import type { Preset } from '../types.js';
import { addOauthCommand, sourceNameInput } from './gitea-family.js';

const scopes = ['openid', 'profile', 'email', 'groups'];
const DOCS = 'https://forgejo.org/docs/latest/admin';

export const forgejo: Preset = {
  id: 'forgejo',
  name: 'Forgejo',
  category: 'web-app',
  protocol: 'oidc',
  version: 1,
  summary: 'Forgejo signs people in through an OpenID Connect authentication source.',
  inputs: [
    baseUrlInput('Forgejo address (ROOT_URL)', 'https://forge.lan.example'),
    sourceNameInput,
    groupInput('adminGroup', 'Group whose members are Forgejo administrators', 'admins', 'Optional: members of this directory group become site administrators at sign-in (--admin-group).'),
  ],
  testedWith: { status: 'documentation', product: 'Forgejo', version: '(April 2026)', test: null },
  sources: [
    { title: 'Forgejo documentation: Forgejo CLI', section: 'admin auth add-oauth', url: `${DOCS}/command-line/`, version: '2026-04' },
    { title: 'Forgejo documentation: Configuration Cheat Sheet', section: 'OAuth2 Client (oauth2_client): ENABLE_AUTO_REGISTRATION, USERNAME, ACCOUNT_LINKING', url: `${DOCS}/config-cheat-sheet/`, version: '2026-04' },
    { title: 'Forgejo documentation: OAuth2 provider', section: 'the callback /user/oauth2/<name>/callback', url: 'https://forgejo.org/docs/latest/user/oauth2-provider/', version: '2026-04' },
  ],
  caveats: [
    'Forgejo\'s [oauth2_client] USERNAME offers userid, nickname or email (no preferred_username, unlike Gitea 1.22). Gatehouse sends no nickname claim, so the preset uses email: new accounts are named after the e-mail address\'s local part, which may differ from the Gatehouse username.',
  ],
  client: { tokenEndpointAuthMethod: 'client_secret_basic', pkce: false, scopes },
  application: (inputs) =>
    oidcApplication({ redirectUris: [`${baseOf(inputs)}/user/oauth2/${inputs.sourceName ?? 'gatehouse'}/callback`] }),
  requirements: () => [{ kind: 'claim', claim: 'email', text: 'email is in the ID token (Forgejo\'s USERNAME = email)' }],
  setup: (c) => ({
    settings: [
      { label: 'Authentication type', value: 'OAuth2' },
      { label: 'OAuth2 provider', value: 'OpenID Connect' },
      { label: 'Authentication name', value: c.inputs.sourceName ?? 'gatehouse' },
      ...oidcSettings(c),
      { label: 'OpenID Connect Auto Discovery URL', value: c.discoveryUrl },
      { label: 'Additional scopes', value: 'profile email groups' },
      { label: 'Claim name providing group names', value: 'groups' },
      ...(c.inputs.adminGroup ? [{ label: 'Group claim value for administrator users', value: c.inputs.adminGroup }] : []),
    ],
    files: [
      { name: 'add-oauth.sh', content: addOauthCommand('forgejo', c, scopes) },
      { name: 'app.ini', content: '[oauth2_client]\nENABLE_AUTO_REGISTRATION = true\nUSERNAME = email\nACCOUNT_LINKING = login\n' },
    ],
    notes: ['Run the command as the user Forgejo runs as, or add the source under Site Administration → Authentication Sources.', PLACEHOLDER_NOTE, ...caTrust.runtime(c), TEST_SIGN_IN_NOTE],
  }),
};
