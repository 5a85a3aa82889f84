/**
 * Tailscale with a custom OIDC provider (spec: "Tailscale (WebFinger)"). Facts from Tailscale's
 * knowledge base, "Custom OIDC providers" (kb/1240): WebFinger at
 * `https://<e-mail domain>/.well-known/webfinger` naming the issuer, which must equal the
 * discovery document's; openid, profile and email scopes; ES256 or RSA ≥ 2048 signatures; the
 * callback `https://login.tailscale.com/a/oauth_response`.
 */
import { PLACEHOLDER_NOTE, oidcApplication, oidcSettings } from '../build.js';
import type { Preset } from '../types.js';

const DOC = 'https://tailscale.com/kb/1240/sso-custom-oidc';
const CALLBACK = 'https://login.tailscale.com/a/oauth_response';
const scopes = ['openid', 'profile', 'email'];

export const tailscale: Preset = {
  id: 'tailscale',
  name: 'Tailscale (custom OIDC)',
  category: 'web-app',
  protocol: 'oidc',
  version: 1,
  summary: 'A new tailnet signs in with Gatehouse as its custom OIDC provider, found by WebFinger on your e-mail domain.',
  inputs: [
    {
      key: 'emailDomain', label: 'E-mail domain of the tailnet', example: 'example.com', kind: 'text', required: true,
      pattern: { source: '^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\\.)+[a-z]{2,63}$', message: 'a domain name, e.g. example.com' },
      hint: 'Tailscale looks up https://<this domain>/.well-known/webfinger for the address you sign up with.',
    },
  ],
  testedWith: { status: 'documentation', product: 'Tailscale', version: '(2026)', test: null },
  sources: [{ title: 'Tailscale: Custom OIDC providers', section: 'Requirements; WebFinger setup; Identity provider setup', url: DOC, version: '2026' }],
  caveats: [
    'Tailscale\'s servers fetch the WebFinger answer and Gatehouse\'s discovery document over the internet: Gatehouse must be reachable publicly with a publicly trusted certificate (the LAN CA will not do).',
    'Gatehouse answers WebFinger itself, at its own /.well-known/webfinger; the e-mail domain\'s web server must pass that path to Gatehouse (see the files).',
  ],
  client: { tokenEndpointAuthMethod: 'client_secret_basic', pkce: false, scopes },
  application: () => oidcApplication({ redirectUris: [CALLBACK] }),
  requirements: () => [
    { kind: 'idTokenAlg', alg: 'RS256', text: 'the ID token is signed with an RSA key (Tailscale accepts ES256 or RSA ≥ 2048)' },
    { kind: 'claim', claim: 'email', text: 'email is in the ID token (the tailnet user)' },
  ],
  setup: (c) => {
    const domain = c.inputs.emailDomain ?? 'example.com';
    const issuer = new URL(c.issuer);
    return {
      settings: [...oidcSettings(c, { redirect: CALLBACK }), { label: 'WebFinger URL Tailscale checks', value: `https://${domain}/.well-known/webfinger` }],
      files: [
        { name: 'Caddyfile', content: `${domain} {\n\thandle /.well-known/webfinger {\n\t\treverse_proxy ${issuer.origin} {\n\t\t\theader_up Host ${issuer.host}\n\t\t}\n\t}\n\t# … the rest of ${domain}'s site\n}\n` },
        { name: 'nginx.conf', content: `location = /.well-known/webfinger {\n    proxy_pass ${issuer.origin};\n    proxy_set_header Host ${issuer.host};\n}\n` },
      ],
      notes: [
        `Check it first: https://${domain}/.well-known/webfinger?resource=acct:you@${domain} must answer with ${c.issuer} as the issuer link.`,
        'Then sign up at login.tailscale.com/start/oidc with an address at that domain and give the client ID and secret.',
        PLACEHOLDER_NOTE,
      ],
    };
  },
};
