/**
 * What the forward-auth presets share (spec forward-auth.md): the protected host is the base
 * URL's host, the application itself listens at `upstream`, and the proxy configuration is the
 * one Gatehouse prints for the application's hosts.
 */
import { baseOf, groupInput, hostOf, oidcApplication } from '../build.js';
import type { PresetApplication, PresetInput, PresetInputs, SetupContext } from '../types.js';

/**
 * Where the app listens, as the proxy reaches it: a scheme and a host (with its port) only, the
 * shape the proxy snippets take (forward-auth/snippet-routes.ts). Plain http is normal here (a
 * container name or a LAN address behind the proxy), so this is not a `url` input, which allows
 * http only for private hosts.
 */
export function upstreamInput(example: string): PresetInput {
  return {
    key: 'upstream', label: 'Where the app itself listens (for the proxy)', example, kind: 'text', required: false, default: example,
    pattern: { source: '^https?://[^\\s/?#]+$', message: 'must be http:// or https:// and a host with its port, without a path (e.g. http://127.0.0.1:8123)' },
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
