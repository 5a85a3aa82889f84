/**
 * OpenVPN with the radiusplugin (openvpn-auth-radius, spec radius.md "Presets"): people connect
 * with their username and an app password. Facts from the plugin's sample radiusplugin.cnf
 * (NAS-Identifier, Service-Type, Framed-Protocol, NAS-Port-Type, NAS-IP-Address, OpenVPNConfig,
 * and server { acctport authport name retry wait sharedsecret }), radiusplugin 2.1 as Debian ships it.
 */
import { baseUrlInput } from '../build.js';
import type { Preset } from '../types.js';
import { RADIUS_NOTES, RADIUS_SECRET, clientAddressInput, radiusApplication, radiusOffNote, radiusServer } from './radius-family.js';

export const openvpn: Preset = {
  id: 'openvpn',
  name: 'OpenVPN',
  category: 'network',
  protocol: 'radius',
  version: 1,
  summary: 'OpenVPN Community server asks Gatehouse through the radiusplugin: username and app password.',
  inputs: [baseUrlInput('VPN server address', 'https://vpn.lan.example'), clientAddressInput('VPN server address (as RADIUS sees it)', '192.168.10.5')],
  testedWith: { status: 'documentation', product: 'openvpn-auth-radius (radiusplugin)', version: '2.1', test: null },
  sources: [{ title: 'radiusplugin sample configuration', section: 'radiusplugin.cnf', url: 'https://github.com/ValdikSS/openvpn-radiusplugin/blob/master/radiusplugin.cnf', version: '2.1' }],
  caveats: ['The VPN clients need auth-user-pass in their profile; the password they type is the app password.'],
  client: { tokenEndpointAuthMethod: 'client_secret_basic', pkce: false, scopes: [] },
  application: radiusApplication('OpenVPN'),
  requirements: () => [],
  setup: (c) => {
    const server = radiusServer(c);
    return {
      settings: [{ label: 'server.conf', value: 'plugin /usr/lib/openvpn/radiusplugin.so /etc/openvpn/radiusplugin.cnf' }],
      files: [{
        name: '/etc/openvpn/radiusplugin.cnf',
        content: [
          'NAS-Identifier=OpenVPN',
          'Service-Type=5',
          'Framed-Protocol=1',
          'NAS-Port-Type=5',
          'NAS-IP-Address=<this VPN server\'s address>',
          'OpenVPNConfig=/etc/openvpn/server.conf',
          'overwriteccfiles=true',
          'server',
          '{',
          `\tacctport=${server.acctPort}`,
          `\tauthport=${server.port}`,
          `\tname=${server.host}`,
          '\tretry=1',
          '\twait=3',
          `\tsharedsecret=${RADIUS_SECRET}`,
          '}',
          '',
        ].join('\n'),
      }],
      notes: [...radiusOffNote(c), ...RADIUS_NOTES],
    };
  },
};
