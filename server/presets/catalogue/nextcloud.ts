/**
 * Nextcloud with the user_oidc app (spec presets-and-operations.md). Facts from the app's README
 * (config.php keys, PKCE, single and back-channel logout, unique user ids), its routes
 * (`/apps/user_oidc/code`) and `occ user_oidc:provider --help`, nextcloud/user_oidc v8.10.1.
 */
import { PLACEHOLDERS, PLACEHOLDER_NOTE, TEST_SIGN_IN_NOTE, baseOf, baseUrlInput, caTrust, oidcApplication, oidcSettings } from '../build.js';
import type { Preset } from '../types.js';

const SOURCE = 'https://github.com/nextcloud/user_oidc/blob/v8.10.1/README.md';
const scopes = ['openid', 'email', 'profile', 'groups'];

export const nextcloud: Preset = {
  id: 'nextcloud',
  name: 'Nextcloud (user_oidc)',
  category: 'web-app',
  protocol: 'oidc',
  version: 1,
  summary: 'Nextcloud signs people in through its OpenID Connect user backend app, user_oidc.',
  inputs: [
    baseUrlInput('Nextcloud address', 'https://cloud.lan.example'),
    {
      key: 'providerId', label: 'Provider identifier in Nextcloud', example: 'gatehouse', kind: 'text', required: false, default: 'gatehouse',
      pattern: { source: '^[A-Za-z0-9_-]{1,64}$', message: 'letters, digits, - and _ only (at most 64)' },
      hint: 'The name user_oidc gives this provider; it is part of the back-channel logout address.',
    },
  ],
  runtime: 'nextcloud',
  testedWith: { status: 'configuration', product: 'Nextcloud user_oidc', version: '8.10.1', test: 'test/integration/presets.test.ts' },
  sources: [
    { title: 'user_oidc README', section: 'PKCE; Single logout; Backchannel logout; User IDs; Commandline settings', url: SOURCE, version: '8.10.1' },
    { title: 'user_oidc routes', section: 'appinfo/routes.php: login#code at /code', url: 'https://github.com/nextcloud/user_oidc/blob/v8.10.1/appinfo/routes.php', version: '8.10.1' },
    { title: 'occ user_oidc:provider --help', section: 'options --mapping-uid, --unique-uid, --group-provisioning, --mapping-groups, --postlogouturi', url: 'https://github.com/nextcloud/user_oidc/blob/v8.10.1/lib/Command/UpsertProvider.php', version: '8.10.1' },
  ],
  caveats: [
    'user_oidc hashes the provider id together with the user id unless "unique user id" is turned off (--unique-uid=0); the preset turns it off so Nextcloud user names are the Gatehouse usernames.',
    'The README offers user_oidc.httpclient.allowselfsigned to accept a self-signed provider; it turns certificate checks off entirely. Import Gatehouse\'s CA into Nextcloud\'s certificate store instead (see the notes when LAN TLS is on).',
  ],
  client: { tokenEndpointAuthMethod: 'client_secret_basic', pkce: true, scopes },
  application: (inputs) => {
    const base = baseOf(inputs);
    return oidcApplication({
      redirectUris: [`${base}/apps/user_oidc/code`, `${base}/index.php/apps/user_oidc/code`],
      postLogoutRedirectUris: [`${base}/`],
      backchannelLogoutUri: `${base}/index.php/apps/user_oidc/backchannel-logout/${inputs.providerId ?? 'gatehouse'}`,
    });
  },
  requirements: () => [
    { kind: 'claim', claim: 'preferred_username', text: 'preferred_username is in the ID token (Nextcloud\'s user ID mapping)' },
    { kind: 'claim', claim: 'email', text: 'email is in the ID token (Nextcloud\'s e-mail mapping)' },
  ],
  setup: (c) => {
    const base = baseOf(c.inputs);
    const provider = c.inputs.providerId ?? 'gatehouse';
    const command = [
      `sudo -u www-data php occ user_oidc:provider ${provider} \\`,
      `  --clientid='${c.app.id}' --clientsecret='${PLACEHOLDERS.clientSecret}' \\`,
      `  --discoveryuri='${c.discoveryUrl}' \\`,
      `  --scope='${scopes.join(' ')}' \\`,
      `  --unique-uid=0 --mapping-uid=preferred_username --mapping-display-name=name --mapping-email=email \\`,
      `  --group-provisioning=1 --mapping-groups=groups \\`,
      `  --send-id-token-hint=1 --postlogouturi='${base}/'`,
    ].join('\n');
    return {
      settings: [
        { label: 'Identifier', value: provider },
        ...oidcSettings(c),
        { label: 'Scope', value: scopes.join(' ') },
        { label: 'User ID mapping', value: 'preferred_username' },
        { label: 'Use unique user ID', value: 'off' },
        { label: 'Groups mapping', value: 'groups (with group provisioning on)' },
      ],
      files: [{ name: 'occ-user-oidc.sh', content: `${command}\n` }],
      notes: [
        'Install and enable the "OpenID Connect user backend" app (user_oidc), then run the command (or type the settings under Administration settings → OpenID Connect).',
        `Gatehouse already sends back-channel logout to ${base}/index.php/apps/user_oidc/backchannel-logout/${provider}, with a session id, as user_oidc expects.`,
        PLACEHOLDER_NOTE,
        ...caTrust.runtime(c),
        TEST_SIGN_IN_NOTE,
      ],
    };
  },
};
