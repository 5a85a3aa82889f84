/**
 * Roundcube signing in with OAuth and passing the access token to IMAP (XOAUTH2/OAUTHBEARER), the
 * IMAP server checking it by introspection (spec: "Roundcube with Dovecot (mail through
 * introspection)"). Facts from Roundcube 1.6's config/defaults.inc.php ("OAuth": oauth_provider
 * generic, oauth_client_id … oauth_identity_fields; redirect `…/index.php/login/oauth`).
 * Tested here with Debian's roundcube 1.6.5 and Dovecot 2.3.19: test/interop/presets-mail.test.ts.
 */
import { PLACEHOLDERS, PLACEHOLDER_NOTE, baseOf, baseUrlInput, oidcApplication, oidcSettings } from '../build.js';
import type { Preset } from '../types.js';

const scopes = ['openid', 'email', 'profile'];
const phpString = (value: string) => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

export const roundcube: Preset = {
  id: 'roundcube',
  name: 'Roundcube (with Dovecot)',
  category: 'mail',
  protocol: 'oidc',
  version: 1,
  summary: 'Roundcube signs people in with Gatehouse and logs in to IMAP with the access token; the IMAP server checks it by introspection.',
  inputs: [
    baseUrlInput('Roundcube address', 'https://mail.lan.example'),
    { key: 'imapApplication', label: 'The IMAP server\'s application', example: 'dovecot', kind: 'application', required: false, hint: 'Optional: the application made with the Dovecot preset; it may then introspect Roundcube\'s tokens (resourceServers).' },
  ],
  runtime: 'php',
  testedWith: { status: 'tested', product: 'Roundcube with Dovecot', version: 'roundcube 1.6.5 + dovecot 2.3.19 (Debian 12)', test: 'test/interop/presets-mail.test.ts' },
  sources: [
    { title: 'Roundcube config/defaults.inc.php', section: 'OAuth (oauth_provider … oauth_login_redirect; redirect URL …/index.php/login/oauth)', url: 'https://github.com/roundcube/roundcubemail/blob/1.6.5/config/defaults.inc.php', version: '1.6.5' },
  ],
  caveats: [
    'Roundcube uses the identity field (here email) as the IMAP login name, and the IMAP server compares it with the token\'s introspected e-mail: both must be the e-mail address.',
  ],
  client: { tokenEndpointAuthMethod: 'client_secret_post', pkce: false, scopes },
  application: (inputs) =>
    oidcApplication({
      redirectUris: [`${baseOf(inputs)}/index.php/login/oauth`],
      resourceServers: inputs.imapApplication ? [inputs.imapApplication] : [],
    }),
  requirements: () => [{ kind: 'claim', claim: 'email', text: 'email is in the ID token (the IMAP login name)' }],
  setup: (c) => {
    const lines = [
      '<?php',
      "$config['oauth_provider'] = 'generic';",
      "$config['oauth_provider_name'] = 'Gatehouse';",
      `$config['oauth_client_id'] = ${phpString(c.app.id)};`,
      `$config['oauth_client_secret'] = ${phpString(PLACEHOLDERS.clientSecret)};`,
      `$config['oauth_auth_uri'] = ${phpString(c.endpoints.authorization)};`,
      `$config['oauth_token_uri'] = ${phpString(c.endpoints.token)};`,
      `$config['oauth_identity_uri'] = ${phpString(c.endpoints.userinfo)};`,
      `$config['oauth_scope'] = ${phpString(scopes.join(' '))};`,
      "$config['oauth_identity_fields'] = ['email'];",
      ...(c.lanCa ? ["$config['oauth_verify_peer'] = '/etc/ssl/certs/gatehouse-ca.pem';"] : []),
    ];
    return {
      settings: oidcSettings(c, { redirect: c.app.redirectUris[0] }),
      files: [{ name: 'config.inc.php', content: `${lines.join('\n')}\n` }],
      notes: [
        'Add these lines to Roundcube\'s config.inc.php; the login page then shows "Gatehouse".',
        'The IMAP server must accept XOAUTH2 or OAUTHBEARER and check the token by introspection: create it from the Dovecot preset and name it here as the IMAP server\'s application.',
        PLACEHOLDER_NOTE,
        ...(c.lanCa ? [`LAN TLS is on: download Gatehouse's CA (${c.lanCa.url}) to the path oauth_verify_peer names (Roundcube passes it to Guzzle's verify option).`] : []),
      ],
    };
  },
};
