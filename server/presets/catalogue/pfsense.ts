/**
 * pfSense and OPNsense (spec radius.md, "Presets"): a RADIUS authentication server for the
 * firewall's VPNs and its own logins. Facts from Netgate's "RADIUS Authentication Servers"
 * (System > User Manager > Authentication Servers: Hostname or IP address, Shared Secret,
 * Services offered, Authentication port, Accounting port, Authentication Timeout, RADIUS NAS IP
 * Attribute; pfSense 2.7) and OPNsense's System › Access › Servers, which has the same fields.
 */
import { baseUrlInput } from '../build.js';
import type { Preset } from '../types.js';
import { RADIUS_NOTES, RADIUS_SECRET, clientAddressInput, radiusApplication, radiusOffNote, radiusServer } from './radius-family.js';

export const pfsense: Preset = {
  id: 'pfsense',
  name: 'pfSense/OPNsense',
  category: 'network',
  protocol: 'radius',
  version: 1,
  summary: 'The firewall\'s VPN (OpenVPN, IPsec) and admin logins ask Gatehouse: app passwords, PAP.',
  inputs: [baseUrlInput('Firewall address', 'https://firewall.lan.example'), clientAddressInput('Firewall address (as RADIUS sees it)', '192.168.10.1')],
  testedWith: { status: 'documentation', product: 'pfSense CE / OPNsense', version: '2.7 / 24.7', test: null },
  sources: [
    { title: 'pfSense documentation: RADIUS Authentication Servers', section: 'User Management and Authentication', url: 'https://docs.netgate.com/pfsense/en/latest/usermanager/radius.html', version: 'pfSense 2.7' },
    { title: 'OPNsense manual: Access → Servers', section: 'RADIUS', url: 'https://docs.opnsense.org/manual/how-tos/user-radius.html', version: '24.7' },
  ],
  caveats: ['Choose PAP as the protocol: MS-CHAPv2 needs a stored NT hash, which Gatehouse never keeps.'],
  client: { tokenEndpointAuthMethod: 'client_secret_basic', pkce: false, scopes: [] },
  application: radiusApplication('Firewall'),
  requirements: () => [],
  setup: (c) => {
    const server = radiusServer(c);
    return {
      settings: [
        { label: 'System → User Manager → Authentication Servers → Add: Type', value: 'RADIUS' },
        { label: 'Protocol', value: 'PAP' },
        { label: 'Hostname or IP address', value: server.host },
        { label: 'Shared Secret', value: RADIUS_SECRET },
        { label: 'Services offered', value: 'Authentication and Accounting' },
        { label: 'Authentication port / Accounting port', value: `${server.port} / ${server.acctPort}` },
        { label: 'Authentication Timeout', value: '5' },
      ],
      files: [],
      notes: [...radiusOffNote(c), 'Then pick this server as the VPN\'s backend for authentication (VPN → OpenVPN → Servers, or IPsec Mobile Clients), and test it under Diagnostics → Authentication.', ...RADIUS_NOTES],
    };
  },
};
