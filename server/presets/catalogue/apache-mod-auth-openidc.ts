/**
 * Apache httpd with mod_auth_openidc. Facts from the module's README (Debian's
 * libapache2-mod-auth-openidc 2.4.12.3, /usr/share/doc/…/README.md: OIDCRedirectURI is a vanity
 * URL inside the protected location that serves no content, OIDCCryptoPassphrase, discovery by
 * OIDCProviderMetadataURL) and its annotated auth_openidc.conf (OIDCPKCEMethod,
 * OIDCRemoteUserClaim, OIDCCABundlePath). Tested here: test/interop/presets-apache.test.ts.
 */
import { PLACEHOLDERS, PLACEHOLDER_NOTE, TEST_SIGN_IN_NOTE, baseOf, baseUrlInput, caTrust, oidcApplication, oidcSettings } from '../build.js';
import type { Preset } from '../types.js';

const scopes = ['openid', 'email', 'profile'];

export const apacheModAuthOpenidc: Preset = {
  id: 'apache-mod-auth-openidc',
  name: 'Apache httpd (mod_auth_openidc)',
  category: 'library',
  protocol: 'oidc',
  version: 1,
  summary: 'Any site served by Apache httpd, protected by mod_auth_openidc: REMOTE_USER is the Gatehouse username.',
  inputs: [baseUrlInput('Site address', 'https://intranet.lan.example')],
  testedWith: { status: 'tested', product: 'mod_auth_openidc', version: '2.4.12.3 (Debian 12, Apache 2.4.6x)', test: 'test/interop/presets-apache.test.ts' },
  sources: [
    { title: 'mod_auth_openidc README', section: 'OpenID Connect Provider discovery (OIDCProviderMetadataURL, OIDCRedirectURI vanity URL, OIDCCryptoPassphrase)', url: 'https://github.com/OpenIDC/mod_auth_openidc/blob/v2.4.12.3/README.md', version: '2.4.12.3' },
    { title: 'mod_auth_openidc auth_openidc.conf', section: 'OIDCPKCEMethod, OIDCRemoteUserClaim, OIDCCABundlePath', url: 'https://github.com/OpenIDC/mod_auth_openidc/blob/v2.4.12.3/auth_openidc.conf', version: '2.4.12.3' },
  ],
  caveats: [
    'OIDCRedirectURI must be a path inside the protected location that serves nothing else: the module answers it itself.',
    'The module sends only page navigations to sign in: a script\'s request (fetch or XHR, Sec-Fetch-Mode other than navigate) without a session gets 401, not a redirect (seen with 2.4.12.3 here; the README does not say so).',
  ],
  client: { tokenEndpointAuthMethod: 'client_secret_basic', pkce: true, scopes },
  application: (inputs) =>
    oidcApplication({ redirectUris: [`${baseOf(inputs)}/redirect_uri`], postLogoutRedirectUris: [`${baseOf(inputs)}/`] }),
  requirements: () => [{ kind: 'claim', claim: 'preferred_username', text: 'preferred_username is in the ID token (OIDCRemoteUserClaim)' }],
  setup: (c) => {
    const base = baseOf(c.inputs);
    const conf = [
      `OIDCProviderMetadataURL ${c.discoveryUrl}`,
      `OIDCClientID ${c.app.id}`,
      `OIDCClientSecret ${PLACEHOLDERS.clientSecret}`,
      `OIDCRedirectURI ${base}/redirect_uri`,
      `OIDCCryptoPassphrase ${PLACEHOLDERS.appSecret}`,
      `OIDCScope "${scopes.join(' ')}"`,
      'OIDCPKCEMethod S256',
      'OIDCRemoteUserClaim preferred_username',
      ...(c.lanCa ? ['OIDCCABundlePath /etc/ssl/certs/gatehouse-ca.pem'] : []),
      '',
      '<Location />',
      '    AuthType openid-connect',
      '    Require valid-user',
      '</Location>',
    ].join('\n');
    return {
      settings: oidcSettings(c, { redirect: `${base}/redirect_uri` }),
      files: [{ name: 'gatehouse-openidc.conf', content: `${conf}\n` }],
      notes: [
        'Enable the module (a2enmod auth_openidc), put the file in the site\'s <VirtualHost> (or conf-enabled/) and reload Apache.',
        `Replace ${PLACEHOLDERS.appSecret} with a long random string of your own (it encrypts the module's session cookies).`,
        `Sign out through ${base}/redirect_uri?logout=${encodeURIComponent(`${base}/`)}: the module ends Gatehouse's session too.`,
        PLACEHOLDER_NOTE,
        ...caTrust.apache(c),
        TEST_SIGN_IN_NOTE,
      ],
    };
  },
};
