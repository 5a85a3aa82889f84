/**
 * MikroTik RouterOS (spec radius.md, "Presets"): Wi-Fi (WPA2/WPA3-Enterprise), PPP/VPN and the
 * router's own logins ask Gatehouse. Facts from MikroTik's RouterOS manual, "RADIUS Client"
 * (/radius add address= secret= service= authentication-port= accounting-port=, require-message-auth;
 * /user aaa set use-radius=yes), RouterOS 7.
 */
import { baseUrlInput } from '../build.js';
import type { Preset } from '../types.js';
import { RADIUS_NOTES, RADIUS_SECRET, clientAddressInput, radiusApplication, radiusOffNote, radiusServer } from './radius-family.js';

export const mikrotik: Preset = {
  id: 'mikrotik',
  name: 'MikroTik',
  category: 'network',
  protocol: 'radius',
  version: 1,
  summary: 'RouterOS Wi-Fi, PPP/VPN and the router\'s own logins ask Gatehouse.',
  inputs: [baseUrlInput('Router address (WebFig)', 'https://router.lan.example'), clientAddressInput('Router address (as RADIUS sees it)', '192.168.10.1')],
  testedWith: { status: 'documentation', product: 'MikroTik RouterOS', version: '7.x', test: null },
  sources: [{ title: 'RouterOS manual: RADIUS Client', section: 'Configuration', url: 'https://help.mikrotik.com/docs/spaces/ROS/pages/328123/RADIUS', version: 'RouterOS 7' }],
  caveats: ['Set require-message-auth=yes-for-request-resp where RouterOS has it: Gatehouse signs every answer and drops requests without a Message-Authenticator.'],
  client: { tokenEndpointAuthMethod: 'client_secret_basic', pkce: false, scopes: [] },
  application: radiusApplication('MikroTik'),
  requirements: () => [],
  setup: (c) => {
    const server = radiusServer(c);
    return {
      settings: [{ label: 'Terminal', value: `/radius add address=${server.host} secret=${RADIUS_SECRET} service=wireless,ppp,login authentication-port=${server.port} accounting-port=${server.acctPort}` }],
      files: [{
        name: 'RouterOS commands',
        content: [
          `/radius add address=${server.host} secret=${RADIUS_SECRET} service=wireless,ppp,login authentication-port=${server.port} accounting-port=${server.acctPort} timeout=3s`,
          '/user aaa set use-radius=yes',
          '/ppp aaa set use-radius=yes accounting=yes',
          '',
        ].join('\n'),
      }],
      notes: [...radiusOffNote(c), 'For Wi-Fi, set the security profile (or /interface wifi security) to WPA2-EAP/WPA3-EAP with EAP passthrough to RADIUS.', ...RADIUS_NOTES],
    };
  },
};
