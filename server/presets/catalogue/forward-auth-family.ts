/**
 * What the forward-auth presets share (spec forward-auth.md): the protected host is the base
 * URL's host, the application itself listens at `upstream`, and the proxy configuration is the
 * one Gatehouse prints for the application's hosts.
 */
import { baseOf, caTrust, groupInput, hostOf, oidcApplication } from '../build.js';
import type { PresetApplication, PresetInput, PresetInputs, SetupContext } from '../types.js';
import { UPSTREAM_RULE, upstreamOrigin } from '../../forward-auth/upstream.js';

/**
 * Where the app listens, as the proxy reaches it: a scheme, a host and a port only, stored as the
 * URL parser gives it back, the rule of the proxy snippets' `upstream` (forward-auth/upstream.ts,
 * issue 49, H10: it is written into the proxy's configuration). Plain http is normal here (a
 * container name or a LAN address behind the proxy), so this is not a `url` input, which allows
 * http only for private hosts.
 */
export function upstreamInput(example: string): PresetInput {
  return {
    key: 'upstream', label: 'Where the app itself listens (for the proxy)', example, kind: 'text', required: false, default: example,
    normalise: (raw) => {
      const origin = upstreamOrigin(raw);
      return origin ? { value: origin } : { error: UPSTREAM_RULE };
    },
    hint: 'The address the reverse proxy forwards allowed requests to.',
  };
}

export const allowedGroupInput = groupInput('allowedGroup', 'Group allowed in', 'household', 'Optional: only members of this directory group pass (forwardAuth.groups).');

export function forwardAuthApplication(inputs: PresetInputs): PresetApplication {
  return oidcApplication({
    // Not used by forward auth (spec forward-auth.md); an application needs one.
    redirectUris: [`${baseOf(inputs)}/`],
    forwardAuth: { hosts: [hostOf(inputs)], groups: inputs.allowedGroup ? [inputs.allowedGroup] : null, basic: false },
  });
}

/** The proxy configurations, or a note saying where they come from when none could be made. */
export function proxyFiles(c: SetupContext): { name: string; content: string }[] {
  if (!c.proxySnippets) return [];
  return [
    { name: 'Caddyfile', content: c.proxySnippets.caddy },
    { name: 'nginx.conf', content: c.proxySnippets.nginx },
    { name: 'traefik.yml', content: c.proxySnippets.traefik },
  ];
}

export const PROXY_NOTE =
  'Use the configuration for your proxy (Caddy and nginx are tested here; Traefik\'s is written from its documentation). Requests reach the app only after Gatehouse allows them; the app receives Remote-User, Remote-Email, Remote-Name and Remote-Groups.';

/**
 * With LAN TLS on, the proxy connects to Gatehouse over https and must trust its CA. Each proxy
 * names the file in its own way (Caddy: the reverse_proxy transport's tls_trusted_ca_certs, or
 * the system store it reads by default; nginx: proxy_ssl_trusted_certificate, verified only with
 * proxy_ssl_verify on; Traefik: the forwardAuth middleware's tls.ca and a serversTransport's rootCAs).
 */
export function proxyCaTrust(c: SetupContext): string[] {
  return caTrust.file(
    c,
    'let the proxy trust it when it connects to Gatehouse: Caddy reads the system trust store (or add transport http { tls_trusted_ca_certs /path/to/gatehouse-ca.pem } to forward_auth and reverse_proxy); nginx checks the certificate only with proxy_ssl_verify on and proxy_ssl_trusted_certificate /path/to/gatehouse-ca.pem in both Gatehouse locations; Traefik: the forwardAuth middleware\'s tls.ca and a serversTransport with rootCAs for the Gatehouse service.',
  );
}
