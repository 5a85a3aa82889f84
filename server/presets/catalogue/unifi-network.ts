/**
 * UniFi Network (spec radius.md, "Presets"): WPA2/WPA3-Enterprise Wi-Fi with a RADIUS profile.
 * Facts from Ubiquiti's help article "UniFi - Configuring Access Policies (WPA-E) for Wireless
 * Clients", section "Configuring a Non-USG RADIUS Server", and the RADIUS profile's "RADIUS
 * assigned VLAN" switches (UniFi Network 8).
 */
import { baseUrlInput } from '../build.js';
import type { Preset } from '../types.js';
import { RADIUS_NOTES, RADIUS_SECRET, clientAddressInput, radiusApplication, radiusOffNote, radiusServer } from './radius-family.js';

export const unifiNetwork: Preset = {
  id: 'unifi-network',
  name: 'UniFi',
  category: 'network',
  protocol: 'radius',
  version: 1,
  summary: 'WPA2/WPA3-Enterprise on UniFi access points: each person joins with a network certificate or an app password; groups choose the VLAN.',
  inputs: [baseUrlInput('UniFi Network application address', 'https://unifi.lan.example'), clientAddressInput('Access points\' subnet', '192.168.10.0/24')],
  testedWith: { status: 'documentation', product: 'UniFi Network', version: '8.x', test: null },
  sources: [{ title: 'UniFi - Configuring Access Policies (WPA-E) for Wireless Clients', section: 'Configuring a Non-USG RADIUS Server', url: 'https://help.ui.com/hc/en-us/articles/360015169854', version: 'UniFi Network 8' }],
  caveats: ['The access points ask Gatehouse themselves (not the controller): the client is their subnet.'],
  client: { tokenEndpointAuthMethod: 'client_secret_basic', pkce: false, scopes: [] },
  application: radiusApplication('UniFi access points'),
  requirements: () => [],
  setup: (c) => {
    const server = radiusServer(c);
    return {
      settings: [
        { label: 'Settings → Profiles → RADIUS → Create New: Authentication Servers', value: `${server.host} port ${server.port}` },
        { label: 'Accounting Servers', value: `${server.host} port ${server.acctPort}` },
        { label: 'Shared secret (both)', value: RADIUS_SECRET },
        { label: 'RADIUS assigned VLAN for Wireless Network', value: 'on (when the application has VLANs)' },
        { label: 'Settings → WiFi → the network → Security', value: 'WPA2 Enterprise (or WPA3 Enterprise), RADIUS Profile: the one above' },
      ],
      files: [],
      notes: [...radiusOffNote(c), ...RADIUS_NOTES],
    };
  },
};
