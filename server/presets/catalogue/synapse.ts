/**
 * Matrix Synapse. Facts from Synapse's documentation, openid.md ("Configuring Synapse to
 * authenticate against an OpenID Connect provider"): the callback
 * `[public_baseurl]/_synapse/client/oidc/callback`, back-channel logout at
 * `/_synapse/client/oidc/backchannel_logout` with `backchannel_logout_enabled`, `SSL_CERT_FILE`
 * for a locally trusted CA, and `user_mapping_provider` templates.
 */
import { PLACEHOLDERS, PLACEHOLDER_NOTE, TEST_SIGN_IN_NOTE, baseOf, baseUrlInput, caTrust, oidcApplication, oidcSettings } from '../build.js';
import type { Preset } from '../types.js';

const DOC = 'https://element-hq.github.io/synapse/latest/openid.html';
const scopes = ['openid', 'profile', 'email'];

export const synapse: Preset = {
  id: 'synapse',
  name: 'Matrix Synapse',
  category: 'web-app',
  protocol: 'oidc',
  version: 1,
  summary: 'Synapse signs Matrix users in with OpenID Connect; their Matrix ID is their Gatehouse username.',
  inputs: [baseUrlInput('Synapse public_baseurl', 'https://matrix.lan.example')],
  runtime: 'python',
  testedWith: { status: 'documentation', product: 'Synapse', version: '(2026)', test: null },
  sources: [{ title: 'Synapse documentation: OpenID Connect', section: 'Preparing Synapse; OIDC Back-Channel Logout; Sample configs', url: DOC, version: '2026' }],
  caveats: ['Synapse uses public_baseurl (default https://<server_name>/) to build the callback; with .well-known delegation set it explicitly.'],
  client: { tokenEndpointAuthMethod: 'client_secret_basic', pkce: true, scopes },
  application: (inputs) => {
    const base = baseOf(inputs);
    return oidcApplication({
      redirectUris: [`${base}/_synapse/client/oidc/callback`],
      backchannelLogoutUri: `${base}/_synapse/client/oidc/backchannel_logout`,
    });
  },
  requirements: () => [{ kind: 'claim', claim: 'preferred_username', text: 'preferred_username is in the ID token (localpart_template)' }],
  setup: (c) => {
    const yaml = [
      'oidc_providers:',
      '  - idp_id: gatehouse',
      '    idp_name: Gatehouse',
      '    discover: true',
      `    issuer: "${c.issuer}"`,
      `    client_id: "${c.app.id}"`,
      `    client_secret: "${PLACEHOLDERS.clientSecret}"`,
      `    scopes: [${scopes.map((s) => `"${s}"`).join(', ')}]`,
      '    backchannel_logout_enabled: true',
      '    user_mapping_provider:',
      '      config:',
      '        localpart_template: "{{ user.preferred_username }}"',
      '        display_name_template: "{{ user.name }}"',
      '        email_template: "{{ user.email }}"',
    ].join('\n');
    return {
      settings: oidcSettings(c, { redirect: c.app.redirectUris[0] }),
      files: [{ name: 'homeserver.yaml', content: `${yaml}\n` }],
      notes: [
        'Add the oidc_providers section to homeserver.yaml and restart Synapse.',
        'Gatehouse sends back-channel logout to Synapse\'s /_synapse/client/oidc/backchannel_logout, which the backchannel_logout_enabled line turns on.',
        PLACEHOLDER_NOTE,
        ...(c.lanCa ? [`LAN TLS is on: start Synapse with SSL_CERT_FILE=/path/to/gatehouse-ca.pem (Synapse's documentation for a locally trusted CA); download the CA from ${c.lanCa.url}.`] : []),
        TEST_SIGN_IN_NOTE,
      ],
    };
  },
};
