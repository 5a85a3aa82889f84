/**
 * Gitea, signing in through an "OpenID Connect" authentication source. Facts from Gitea's
 * documentation: the command line (`gitea admin auth add-oauth`), the configuration cheat sheet
 * (`[oauth2_client]`, `USERNAME = preferred_username` since 1.22) and the callback
 * `/user/oauth2/<source name>/callback`.
 */
import { PLACEHOLDERS, PLACEHOLDER_NOTE, TEST_SIGN_IN_NOTE, baseOf, baseUrlInput, caTrust, groupInput, oidcApplication, oidcSettings } from '../build.js';
import type { Preset } from '../types.js';
import { sourceNameInput, addOauthCommand } from './gitea-family.js';

const scopes = ['openid', 'profile', 'email', 'groups'];

export const gitea: Preset = {
  id: 'gitea',
  name: 'Gitea',
  category: 'web-app',
  protocol: 'oidc',
  version: 1,
  summary: 'Gitea signs people in through an OpenID Connect authentication source, creating accounts named by their Gatehouse username.',
  inputs: [
    baseUrlInput('Gitea address (ROOT_URL)', 'https://git.lan.example'),
    sourceNameInput,
    groupInput('adminGroup', 'Group whose members are Gitea administrators', 'admins', 'Optional: members of this directory group become site administrators at sign-in (--admin-group).'),
  ],
  testedWith: { status: 'configuration', product: 'Gitea', version: '1.22', test: 'test/integration/presets.test.ts' },
  sources: [
    { title: 'Gitea documentation: Command Line', section: 'admin auth add-oauth (--auto-discover-url, --scopes, --group-claim-name, --admin-group)', url: 'https://docs.gitea.com/administration/command-line', version: '1.22' },
    { title: 'Gitea documentation: Configuration Cheat Sheet', section: 'OAuth2 Client ([oauth2_client]): ENABLE_AUTO_REGISTRATION, USERNAME (preferred_username), ACCOUNT_LINKING', url: 'https://docs.gitea.com/administration/config-cheat-sheet#oauth2-client-oauth2_client', version: '1.22' },
  ],
  caveats: [
    'Gitea builds the callback from the authentication source\'s name (/user/oauth2/<name>/callback), not from the client id: renaming the source breaks sign-in until the redirect URI here is changed too.',
    'USERNAME = preferred_username exists from Gitea 1.22 on; older versions offer userid, nickname or email only.',
  ],
  client: { tokenEndpointAuthMethod: 'client_secret_basic', pkce: false, scopes },
  application: (inputs) =>
    oidcApplication({ redirectUris: [`${baseOf(inputs)}/user/oauth2/${inputs.sourceName ?? 'gatehouse'}/callback`] }),
  requirements: () => [{ kind: 'claim', claim: 'preferred_username', text: 'preferred_username is in the ID token (Gitea\'s USERNAME = preferred_username)' }],
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
      { name: 'add-oauth.sh', content: addOauthCommand('gitea', c, scopes) },
      { name: 'app.ini', content: '[oauth2_client]\nENABLE_AUTO_REGISTRATION = true\nUSERNAME = preferred_username\nACCOUNT_LINKING = login\n' },
    ],
    notes: [
      'Run the command as the user Gitea runs as (it refuses to run as root), or add the source under Site Administration → Identity & Access → Authentication Sources.',
      PLACEHOLDER_NOTE,
      ...caTrust.runtime(c),
      TEST_SIGN_IN_NOTE,
    ],
  }),
};
