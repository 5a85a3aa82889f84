/**
 * Home Assistant behind a reverse proxy with forward auth (spec: "Home Assistant (forward
 * auth)"). Facts from Home Assistant's documentation, the HTTP integration (`use_x_forwarded_for`,
 * `trusted_proxies`, needed behind any reverse proxy) and "Authentication providers" (Home
 * Assistant keeps its own login; there is no header-based provider).
 */
import { baseOf, baseUrlInput } from '../build.js';
import type { Preset } from '../types.js';
import { PROXY_NOTE, allowedGroupInput, forwardAuthApplication, proxyCaTrust, proxyFiles, upstreamInput } from './forward-auth-family.js';

export const homeAssistant: Preset = {
  id: 'home-assistant',
  name: 'Home Assistant (forward auth)',
  category: 'forward-auth',
  protocol: 'forward-auth',
  // 2: forwardAuth is applied at creation (it was recorded but not applied before forward auth landed).
  version: 2,
  summary: 'Home Assistant behind Caddy, nginx or Traefik: only people Gatehouse admits reach it.',
  inputs: [baseUrlInput('Home Assistant address (through the proxy)', 'https://home.lan.example'), upstreamInput('http://127.0.0.1:8123'), allowedGroupInput],
  runtime: 'python',
  testedWith: { status: 'tested', product: 'the proxy side, Caddy and nginx with this set-up text (Home Assistant itself does not run here; its side from its documentation of 2026)', version: 'caddy 2.6.2, nginx 1.22.1 (Debian 12)', test: 'test/interop/presets-forward-auth.test.ts' },
  sources: [
    { title: 'Home Assistant: HTTP integration', section: 'use_x_forwarded_for, trusted_proxies (reverse proxies)', url: 'https://www.home-assistant.io/integrations/http/', version: '2026' },
    { title: 'Home Assistant: Authentication providers', section: 'homeassistant, trusted_networks, command_line', url: 'https://www.home-assistant.io/docs/authentication/providers/', version: '2026' },
  ],
  caveats: [
    'The app itself does not run here; Gatehouse\'s tests run the proxy side of this preset (Caddy 2.6 and nginx 1.22 in front of a stand-in app, test/interop/presets-forward-auth.test.ts).',
    'Home Assistant has no header-based sign-in: after Gatehouse lets a person through, Home Assistant still asks for its own login. Forward auth keeps everyone else away from it.',
    'The companion apps cannot follow a sign-in redirect to Gatehouse; use them on the LAN without the proxy, or through the proxy with an exception for their API paths at your own risk.',
  ],
  client: { tokenEndpointAuthMethod: 'client_secret_basic', pkce: false, scopes: [] },
  application: forwardAuthApplication,
  requirements: () => [],
  setup: (c) => ({
    settings: [{ label: 'Protected host', value: new URL(baseOf(c.inputs)).host }, { label: 'Upstream', value: c.inputs.upstream ?? 'http://127.0.0.1:8123' }],
    files: [...proxyFiles(c), { name: 'configuration.yaml', content: 'http:\n  use_x_forwarded_for: true\n  trusted_proxies:\n    - 127.0.0.1\n    - ::1\n' }],
    notes: [PROXY_NOTE, ...proxyCaTrust(c), 'Home Assistant refuses proxied requests unless the proxy\'s address is in trusted_proxies (replace 127.0.0.1 with the proxy\'s address if it runs elsewhere).'],
  }),
};
