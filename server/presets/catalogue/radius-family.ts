/**
 * What the RADIUS presets share (spec radius.md, "Presets"): the application gets one RADIUS
 * client, the gear's address or subnet (`clientAddress`), and its shared secret is answered once
 * when the application is made (`radiusSecrets`); people sign in with an app password (PAP or
 * EAP-TTLS/PAP) or a network certificate (EAP-TLS).
 */
import { PLACEHOLDERS, baseOf, oidcApplication } from '../build.js';
import type { PresetApplication, PresetInput, PresetInputs, SetupContext } from '../types.js';

/** The gear's address or subnet: what the RADIUS client is. */
export function clientAddressInput(label: string, example: string): PresetInput {
  return {
    key: 'clientAddress',
    label,
    example,
    kind: 'text',
    required: true,
    pattern: { source: '^[0-9A-Fa-f.:]{2,45}(/[0-9]{1,3})?$', message: 'an IPv4 or IPv6 address, or a CIDR range such as 192.168.10.0/24' },
    hint: 'The address the gear sends RADIUS from (or the subnet of several access points).',
  };
}

/** The application: one RADIUS client named after the gear. */
export function radiusApplication(clientName: string) {
  return (inputs: PresetInputs): PresetApplication =>
    // Not used for RADIUS; an application needs a redirect URI.
    oidcApplication({
      redirectUris: [`${baseOf(inputs)}/`],
      radius: { clients: [{ name: clientName, address: inputs.clientAddress ?? '' }], vlans: [], defaultVlan: null },
    });
}

/** The server's address and ports, or placeholders when RADIUS is off here. */
export function radiusServer(c: SetupContext): { host: string; port: string; acctPort: string } {
  return c.radius
    ? { host: c.radius.host, port: String(c.radius.port || 1812), acctPort: String(c.radius.acctPort || 1813) }
    : { host: new URL(c.issuer).hostname, port: '1812', acctPort: '1813' };
}

export const RADIUS_SECRET = PLACEHOLDERS.radiusSecret;

export const RADIUS_NOTES = [
  `Replace ${PLACEHOLDERS.radiusSecret} with the client's shared secret, shown once when the application was made (the application's RADIUS tab, or POST …/radius/clients/:name/secret, makes a new one).`,
  'People sign in with their username and an app password for this application (EAP-TTLS with PAP inside, or PAP), or with a network certificate from their account page (EAP-TLS). Their Gatehouse password never works over RADIUS, and PEAP-MSCHAPv2 is refused.',
  'Set VLANs by group on the application\'s RADIUS tab; the answers carry Tunnel-Type VLAN, Tunnel-Medium-Type IEEE-802 and Tunnel-Private-Group-ID.',
];

/** Where RADIUS is off on this server. */
export const radiusOffNote = (c: SetupContext): string[] =>
  c.radius ? [] : ['RADIUS is off on this server: start Gatehouse with GATEHOUSE_RADIUS=on (docs/radius.md), then open this page again.'];
