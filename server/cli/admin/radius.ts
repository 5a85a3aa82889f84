/**
 * `gatehouse app radius APP [ACTION …]` (spec radius.md; docs/radius.md): an application's RADIUS
 * clients and VLANs from the command line, through the admin API like the panel's RADIUS part.
 * Actions: (none) show; `add NAME ADDRESS` a client (its secret printed once); `remove NAME`;
 * `new-secret NAME` (printed once); `vlan GROUP VLAN` (or `vlan GROUP none` to drop the rule);
 * `default-vlan VLAN|none`; `off` (no RADIUS at all).
 */
import { ConfigError } from '../../config.js';
import { adminCommand, applicationPath } from '../admin-client.js';
import { formatFields, formatTable, printJson } from '../output.js';

interface RadiusSettings {
  clients: { name: string; address: string; secretSetAt?: string }[];
  vlans: { group: string; vlan: number }[];
  defaultVlan: number | null;
}
interface RadiusAnswer {
  radius: RadiusSettings | null;
  radiusSecrets?: Record<string, string>;
}

const ACTIONS: Record<string, number> = { add: 2, remove: 1, 'new-secret': 1, vlan: 2, 'default-vlan': 1, off: 0 };
const USAGE = 'APP [add NAME ADDRESS | remove NAME | new-secret NAME | vlan GROUP VLAN|none | default-vlan VLAN|none | off]';

const vlanNumber = (text: string) => {
  if (!/^\d{1,4}$/.test(text) || Number(text) < 1 || Number(text) > 4094) throw new ConfigError(`"${text}" is not a VLAN (1–4094).`);
  return Number(text);
};

export const appRadius = adminCommand({
  positionals: { usage: USAGE, min: 1, max: 4, missing: 'Give an application id, e.g. `gatehouse app radius wifi add "Office APs" 192.168.10.0/24`.' },
  async run({ client, positionals, json }) {
    const [id, action, ...args] = positionals as [string, string | undefined, ...string[]];
    if (action !== undefined && ACTIONS[action] !== args.length) throw new ConfigError(`Usage: gatehouse app radius ${USAGE}`);
    const path = applicationPath(id);
    let secrets: Record<string, string> = {};
    let settings: RadiusSettings | null;
    if (action === 'new-secret') {
      const rotated = await client.request<{ secret: string }>('POST', `${path}/radius/clients/${encodeURIComponent(args[0]!)}/secret`);
      secrets = { [args[0]!]: rotated.secret };
      settings = (await client.request<RadiusAnswer>('GET', path)).radius;
    } else if (action === undefined) {
      settings = (await client.request<RadiusAnswer>('GET', path)).radius;
    } else {
      const current = (await client.request<RadiusAnswer>('GET', path)).radius ?? { clients: [], vlans: [], defaultVlan: null };
      const next: RadiusSettings = { clients: current.clients.map(({ name, address }) => ({ name, address })), vlans: [...current.vlans], defaultVlan: current.defaultVlan };
      if (action === 'add') next.clients.push({ name: args[0]!, address: args[1]! });
      if (action === 'remove') {
        if (!next.clients.some((c) => c.name === args[0])) throw new ConfigError(`Application "${id}" has no RADIUS client named "${args[0]}".`);
        next.clients = next.clients.filter((c) => c.name !== args[0]);
      }
      if (action === 'vlan') {
        next.vlans = next.vlans.filter((v) => v.group !== args[0]);
        if (args[1] !== 'none') next.vlans.push({ group: args[0]!, vlan: vlanNumber(args[1]!) });
      }
      if (action === 'default-vlan') next.defaultVlan = args[0] === 'none' ? null : vlanNumber(args[0]!);
      const answer = await client.request<RadiusAnswer>('PATCH', path, { radius: action === 'off' ? null : next });
      settings = answer.radius;
      secrets = answer.radiusSecrets ?? {};
    }
    if (json) return printJson({ id, radius: settings, ...(Object.keys(secrets).length ? { secrets } : {}) });
    if (!settings) {
      console.log(`Application "${id}" has no RADIUS clients (gatehouse app radius ${id} add NAME ADDRESS adds one).`);
      return;
    }
    console.log(formatTable(['CLIENT', 'ADDRESS', 'SECRET SET'], settings.clients.map((c) => [c.name, c.address, c.secretSetAt ?? ''])));
    console.log(formatFields([
      ['VLANs', settings.vlans.map((v) => `${v.group} → ${v.vlan}`).join(', ') || '(none)'],
      ['Default VLAN', settings.defaultVlan === null ? '(the gear\'s own)' : String(settings.defaultVlan)],
    ]));
    for (const [name, secret] of Object.entries(secrets)) console.log(formatFields([[`Secret of ${name}`, secret]]));
    if (Object.keys(secrets).length) console.log('Type each secret into its gear now: it is shown only this once.');
  },
});
