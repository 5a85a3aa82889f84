/**
 * Uptime Kuma behind a reverse proxy with forward auth (spec: "Uptime Kuma (forward auth)").
 * Facts from Uptime Kuma's wiki: "Reverse Proxy" (WebSocket upgrade headers) and Settings →
 * Security → "Disable Auth" for use behind a third-party authentication.
 */
import { baseOf, baseUrlInput } from '../build.js';
import type { Preset } from '../types.js';
import { PROXY_NOTE, allowedGroupInput, forwardAuthApplication, proxyCaTrust, proxyFiles, upstreamInput } from './forward-auth-family.js';

export const uptimeKuma: Preset = {
  id: 'uptime-kuma',
  name: 'Uptime Kuma (forward auth)',
  category: 'forward-auth',
  protocol: 'forward-auth',
  // 2: forwardAuth is applied at creation (it was recorded but not applied before forward auth landed).
  version: 2,
  summary: 'Uptime Kuma behind Caddy, nginx or Traefik, with Gatehouse deciding who may open it.',
  inputs: [baseUrlInput('Uptime Kuma address (through the proxy)', 'https://status.lan.example'), upstreamInput('http://127.0.0.1:3001'), allowedGroupInput],
  runtime: 'node',
  testedWith: { status: 'tested', product: 'the proxy side, Caddy and nginx with this set-up text (Uptime Kuma itself does not run here; its side from its documentation of 1.23–2.0)', version: 'caddy 2.6.2, nginx 1.22.1 (Debian 12)', test: 'test/interop/presets-forward-auth.test.ts' },
  sources: [
    { title: 'Uptime Kuma wiki: Reverse Proxy', section: 'nginx and Caddy (WebSocket)', url: 'https://github.com/louislam/uptime-kuma/wiki/Reverse-Proxy', version: '1.23–2.0' },
    { title: 'Uptime Kuma: Settings → Security', section: 'Disable Auth (when a third-party authentication is in front)', url: 'https://github.com/louislam/uptime-kuma/wiki', version: '1.23–2.0' },
  ],
  caveats: [
    'The app itself does not run here; Gatehouse\'s tests run the proxy side of this preset (Caddy 2.6 and nginx 1.22 in front of a stand-in app, test/interop/presets-forward-auth.test.ts).',
    'Uptime Kuma keeps its own login unless "Disable Auth" is turned on; do that only once the proxy sends every request through Gatehouse.',
    'Public status pages (/status/…) are behind Gatehouse too; give them their own host without forward auth if they must stay public.',
  ],
  client: { tokenEndpointAuthMethod: 'client_secret_basic', pkce: false, scopes: [] },
  application: forwardAuthApplication,
  requirements: () => [],
  setup: (c) => ({
    settings: [{ label: 'Protected host', value: new URL(baseOf(c.inputs)).host }, { label: 'Upstream', value: c.inputs.upstream ?? 'http://127.0.0.1:3001' }],
    files: proxyFiles(c),
    notes: [PROXY_NOTE, ...proxyCaTrust(c), 'Uptime Kuma talks to the browser over a WebSocket: Caddy passes it as is; the nginx configuration keeps the Upgrade and Connection headers.'],
  }),
};
