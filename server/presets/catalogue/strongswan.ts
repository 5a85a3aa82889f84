/**
 * strongSwan IKEv2 with the eap-radius plugin (spec radius.md, "Presets"): the gateway forwards
 * the EAP conversation to Gatehouse (EAP-TLS with a network certificate, or EAP-TTLS/PAP). Facts
 * from strongSwan's eap-radius plugin page (charon.plugins.eap-radius.servers.<name>.address,
 * secret, auth_port, acct_port; accounting; remote.auth = eap-radius in swanctl.conf), strongSwan 6.0.
 */
import { baseUrlInput } from '../build.js';
import type { Preset } from '../types.js';
import { RADIUS_NOTES, RADIUS_SECRET, clientAddressInput, radiusApplication, radiusOffNote, radiusServer } from './radius-family.js';

export const strongswan: Preset = {
  id: 'strongswan',
  name: 'strongSwan',
  category: 'network',
  protocol: 'radius',
  version: 1,
  summary: 'An IKEv2 VPN gateway hands EAP to Gatehouse: network certificates (EAP-TLS) or app passwords (EAP-TTLS).',
  inputs: [baseUrlInput('VPN gateway address', 'https://vpn.lan.example'), clientAddressInput('Gateway address (as RADIUS sees it)', '192.168.10.6')],
  testedWith: { status: 'documentation', product: 'strongSwan', version: '6.0', test: null },
  sources: [{ title: 'strongSwan documentation: eap-radius Plugin', section: 'Configuration', url: 'https://docs.strongswan.org/docs/6.0/plugins/eap-radius.html', version: '6.0' }],
  caveats: ['Gatehouse sends the MSK as MS-MPPE-Send-Key and MS-MPPE-Recv-Key, which the plugin needs for EAP methods that make one.'],
  client: { tokenEndpointAuthMethod: 'client_secret_basic', pkce: false, scopes: [] },
  application: radiusApplication('strongSwan'),
  requirements: () => [],
  setup: (c) => {
    const server = radiusServer(c);
    return {
      settings: [{ label: 'swanctl.conf, the connection', value: 'remote { auth = eap-radius  eap_id = %any }' }],
      files: [{
        name: '/etc/strongswan.d/charon/eap-radius.conf',
        content: [
          'eap-radius {',
          '  load = yes',
          '  accounting = yes',
          '  servers {',
          '    gatehouse {',
          `      address = ${server.host}`,
          `      secret = ${RADIUS_SECRET}`,
          `      auth_port = ${server.port}`,
          `      acct_port = ${server.acctPort}`,
          '    }',
          '  }',
          '}',
          '',
        ].join('\n'),
      }],
      notes: [...radiusOffNote(c), ...RADIUS_NOTES],
    };
  },
};
