/**
 * Dovecot checking OAuth access tokens by introspection (RFC 7662) for webmail such as Roundcube.
 * Facts from Dovecot 2.3's OAuth2 password database documentation and its example
 * dovecot-oauth2.conf.ext (introspection_url, introspection_mode post, username_attribute,
 * active_attribute/active_value, tls_ca_cert_file) and the auth mechanisms xoauth2 and
 * oauthbearer. Tested here with Debian's dovecot 2.3.19: test/interop/presets-mail.test.ts.
 */
import { PLACEHOLDERS, PLACEHOLDER_NOTE, oidcApplication } from '../build.js';
import type { Preset } from '../types.js';

export const dovecot: Preset = {
  id: 'dovecot',
  name: 'Dovecot (IMAP, tokens by introspection)',
  category: 'mail',
  protocol: 'oidc',
  version: 1,
  summary: 'Dovecot accepts the access tokens Gatehouse issued to a webmail app and checks each by introspection with its own credentials.',
  inputs: [
    {
      key: 'host', label: 'IMAP server host name', example: 'imap.lan.example', kind: 'text', required: true,
      pattern: { source: '^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$', message: 'a host name, e.g. imap.lan.example' },
    },
  ],
  testedWith: { status: 'tested', product: 'Dovecot (passdb oauth2)', version: '2.3.19 (Debian 12)', test: 'test/interop/presets-mail.test.ts' },
  sources: [
    { title: 'Dovecot 2.3: OAuth2 authentication database', section: 'introspection_url, introspection_mode, username_attribute, active_attribute', url: 'https://doc.dovecot.org/2.3/configuration_manual/authentication/oauth2/', version: '2.3' },
    { title: 'dovecot-oauth2.conf.ext (example configuration shipped with Dovecot)', section: 'all settings', url: 'https://github.com/dovecot/core/blob/release-2.3.19/doc/example-config/dovecot-oauth2.conf.ext', version: '2.3.19' },
  ],
  caveats: [
    'Dovecot authenticates to the introspection endpoint with the credentials in introspection_url (HTTP Basic); the client secret must be URL-encoded there.',
    'The webmail application must list this application as a resource server (the Roundcube preset\'s "IMAP server\'s application"), or introspection answers {"active": false}.',
  ],
  client: { tokenEndpointAuthMethod: 'client_secret_basic', pkce: false, scopes: [] },
  application: (inputs) =>
    // A resource server signs nobody in: the client credentials grant only, and a redirect URI
    // that no authorization code can reach.
    oidcApplication({ redirectUris: [`https://${inputs.host ?? 'imap.invalid'}/`], grantTypes: ['client_credentials'] }),
  requirements: () => [],
  setup: (c) => {
    const introspection = new URL(c.endpoints.introspection);
    introspection.username = encodeURIComponent(c.app.id);
    const url = introspection.toString().replace(/^(https?:\/\/)([^@]*)@/, `$1$2:${PLACEHOLDERS.clientSecret}@`);
    const oauth2 = [
      `introspection_url = ${url}`,
      'introspection_mode = post',
      'username_attribute = email',
      'active_attribute = active',
      'active_value = true',
      `issuers = ${c.issuer}`,
      ...(c.lanCa ? ['tls_ca_cert_file = /etc/dovecot/gatehouse-ca.pem'] : []),
    ].join('\n');
    const conf = [
      'auth_mechanisms = $auth_mechanisms xoauth2 oauthbearer',
      'passdb {',
      '  driver = oauth2',
      '  mechanisms = xoauth2 oauthbearer',
      '  args = /etc/dovecot/dovecot-oauth2.conf.ext',
      '}',
    ].join('\n');
    return {
      settings: [
        { label: 'Introspection endpoint', value: c.endpoints.introspection },
        { label: 'Client ID', value: c.app.id },
        { label: 'Client secret', value: PLACEHOLDERS.clientSecret },
      ],
      files: [{ name: 'dovecot-oauth2.conf.ext', content: `${oauth2}\n` }, { name: 'conf.d/10-auth-gatehouse.conf', content: `${conf}\n` }],
      notes: [
        'Keep the password database that serves people\'s other logins; this one only accepts tokens. The user database (mail location, uid) stays as it is.',
        PLACEHOLDER_NOTE,
        ...(c.lanCa ? [`LAN TLS is on: download Gatehouse's CA (${c.lanCa.url}) to the file tls_ca_cert_file names.`] : []),
      ],
    };
  },
};
