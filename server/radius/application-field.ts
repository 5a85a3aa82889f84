/**
 * The application field `radius` (spec radius.md, "RADIUS clients belong to applications"):
 * `{ clients: [{ name, address }], vlans: [{ group, vlan }], defaultVlan }` in bodies; the record
 * shows each client's name, address and when its secret was set, never the secret. A client added
 * (a new name) gets a generated shared secret, answered once in that answer (`radiusSecrets`, by
 * client name); a client kept by name keeps its secret, wherever its address moves.
 * `POST /api/admin/applications/:id/radius/clients/:name/secret` makes a new one (`rotateSecret`).
 *
 * Rules: at most 50 clients, names 1–64 printable characters, unique (any case), addresses an IPv4
 * or IPv6 address or CIDR range, each at most once in the installation (another application's
 * client there is a 409-like field error: who would answer its packets?); at most 50 VLAN rules, a
 * group id and a VLAN 1–4094; `defaultVlan` null or 1–4094.
 */
import { randomBytes } from 'node:crypto';
import { isIP } from '../util/ip-family.js';
import { eq } from 'drizzle-orm';
import { Type } from 'typebox';
import type { AppContext } from '../context.js';
import type { Db } from '../db/client.js';
import { applications, type RadiusClientSettings, type RadiusSettings } from '../db/schema.js';
import { many, exec, transaction } from '../db/store.js';
import { sealAtRest } from '../db/secrets-at-rest.js';
import { notFound } from '../http/problem.js';
import { recordAudit } from '../audit/record.js';
import { getApplication } from '../applications/lookup.js';
import type { FieldError } from '../http/problem.js';
import type { ApplicationField } from '../plugin-api/application-fields.js';
import { normalizeRange, secretPurpose } from './clients.js';

export const MAX_CLIENTS = 50;
export const MAX_VLAN_RULES = 50;

const RADIUS_TEXT =
  'RADIUS (docs/radius.md): the network gear that may ask (clients by address or CIDR range, each with a generated shared secret answered once in radiusSecrets), the VLAN of each group (first match in order) and of everyone else (defaultVlan); null: none.';
const Vlan = Type.Integer({ minimum: 1, maximum: 4094 });
const ClientInput = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 64, pattern: '^[^\\u0000-\\u001f\\u007f]+$', description: 'a name for the gear (unique in the application)' }),
    address: Type.String({ minLength: 2, maxLength: 64, description: 'an IPv4 or IPv6 address, or a CIDR range (192.168.10.0/24)' }),
  },
  { additionalProperties: false },
);
const VlanRule = Type.Object(
  { group: Type.String({ pattern: '^[a-z0-9][a-z0-9._-]{0,63}$', description: 'a directory group id' }), vlan: Vlan },
  { additionalProperties: false },
);
export const RadiusInputSchema = Type.Union(
  [
    Type.Object(
      {
        clients: Type.Array(ClientInput, { maxItems: MAX_CLIENTS }),
        vlans: Type.Optional(Type.Array(VlanRule, { maxItems: MAX_VLAN_RULES })),
        defaultVlan: Type.Optional(Type.Union([Vlan, Type.Null()])),
      },
      { additionalProperties: false },
    ),
    Type.Null(),
  ],
  { description: RADIUS_TEXT },
);
export const RadiusRecordSchema = Type.Union(
  [
    Type.Object(
      {
        clients: Type.Array(
          Type.Object(
            { name: Type.String(), address: Type.String(), secretSetAt: Type.String({ format: 'date-time' }) },
            { additionalProperties: false },
          ),
        ),
        vlans: Type.Array(VlanRule),
        defaultVlan: Type.Union([Vlan, Type.Null()]),
      },
      { additionalProperties: false },
    ),
    Type.Null(),
  ],
  { description: RADIUS_TEXT },
);
export const RadiusSecretSchema = Type.Object(
  { secret: Type.String({ description: 'the client\'s new shared secret, shown only in this answer' }) },
  { additionalProperties: false },
);

export interface RadiusInput {
  clients: { name: string; address: string }[];
  vlans?: { group: string; vlan: number }[];
  defaultVlan?: number | null;
}
export interface RadiusRecord {
  clients: { name: string; address: string; secretSetAt: string }[];
  vlans: { group: string; vlan: number }[];
  defaultVlan: number | null;
}

declare module '../plugin-api/application-fields.js' {
  interface ApplicationFieldInputs {
    radius: RadiusInput | null;
  }
  interface ApplicationFieldRecords {
    radius: RadiusRecord | null;
  }
}

/** A shared secret: 160 random bits as 40 hex digits (every piece of gear's form accepts those). */
export function newClientSecret(): string {
  return randomBytes(20).toString('hex');
}

/** The record's value: the settings without the secrets. */
export function radiusRecord(settings: RadiusSettings | null): RadiusRecord | null {
  if (!settings) return null;
  return {
    clients: settings.clients.map(({ name, address, secretSetAt }) => ({ name, address, secretSetAt })),
    vlans: settings.vlans,
    defaultVlan: settings.defaultVlan,
  };
}

/** Every other application's client ranges, to refuse a range claimed twice. */
async function rangesElsewhere(db: Db, id: string): Promise<Map<string, string>> {
  const rows = await many(db.select({ id: applications.id, radius: applications.radius }).from(applications));
  const out = new Map<string, string>();
  for (const row of rows) {
    if (row.id === id || !row.radius) continue;
    for (const client of row.radius.clients) out.set(normalizeRange(client.address) ?? client.address, row.id);
  }
  return out;
}

function check(given: RadiusInput, errors: FieldError[], elsewhere: Map<string, string>): void {
  const names = new Set<string>();
  const ranges = new Set<string>();
  given.clients.forEach((client, i) => {
    const key = client.name.trim().toLowerCase();
    if (!key) errors.push({ path: `body.radius.clients.${i}.name`, message: 'a name is required' });
    else if (names.has(key)) errors.push({ path: `body.radius.clients.${i}.name`, message: `"${client.name}" is named twice` });
    names.add(key);
    const range = normalizeRange(client.address);
    if (!range) {
      errors.push({ path: `body.radius.clients.${i}.address`, message: `"${client.address}" is not an IP address or a CIDR range` });
      return;
    }
    if (ranges.has(range)) errors.push({ path: `body.radius.clients.${i}.address`, message: `${range} is given twice` });
    ranges.add(range);
    const other = elsewhere.get(range);
    if (other) errors.push({ path: `body.radius.clients.${i}.address`, message: `${range} is already a RADIUS client of application "${other}"` });
  });
}

/** `radius` as an application field: after `forwardAuth` in the bodies and the record. */
export function radiusField(db: Db): ApplicationField<RadiusInput | null> {
  return {
    name: 'radius',
    after: 'forwardAuth',
    input: RadiusInputSchema,
    record: RadiusRecordSchema,
    secrets: {
      radiusSecrets: Type.Record(Type.String(), Type.String(), {
        description: 'The shared secrets of the RADIUS clients this answer added, by client name (only here; POST …/radius/clients/:name/secret makes new ones)',
      }),
    },
    toRecord: (app) => radiusRecord(app.radius),
    async prepare({ id, given, current, errors }) {
      if (given === undefined) return current ? undefined : { columns: { radius: null } };
      if (given === null || !given.clients.length && !given.vlans?.length && given.defaultVlan == null) {
        return { columns: { radius: null }, ...(current?.radius ? { audit: { radius: 'removed' } } : {}) };
      }
      check(given, errors, await rangesElsewhere(db, id));
      if (errors.length) return undefined;
      const before = new Map((current?.radius?.clients ?? []).map((c) => [c.name.trim().toLowerCase(), c]));
      const now = new Date().toISOString();
      const secrets: Record<string, string> = {};
      const clients: RadiusClientSettings[] = given.clients.map(({ name, address }) => {
        const kept = before.get(name.trim().toLowerCase());
        const range = normalizeRange(address)!;
        if (kept && kept.name === name.trim()) return { ...kept, address: range };
        const secret = newClientSecret();
        secrets[name.trim()] = secret;
        return { name: name.trim(), address: range, secret: sealAtRest(db, secret, secretPurpose(id, name.trim())), secretSetAt: now };
      });
      const settings: RadiusSettings = { clients, vlans: given.vlans ?? [], defaultVlan: given.defaultVlan ?? null };
      const added = Object.keys(secrets);
      return {
        columns: { radius: settings },
        ...(added.length ? { secrets: { radiusSecrets: secrets } } : {}),
        ...(current ? { audit: { radiusClients: clients.map((c) => c.name), ...(added.length ? { radiusSecretsIssued: added } : {}) } } : {}),
      };
    },
    keyMayNot: (current, given) =>
      JSON.stringify(radiusRecord(current.radius) && { clients: current.radius!.clients.map(({ name, address }) => ({ name, address })), vlans: current.radius!.vlans, defaultVlan: current.radius!.defaultVlan }) !==
      JSON.stringify(given && { clients: given.clients.map(({ name, address }) => ({ name: name.trim(), address: normalizeRange(address) ?? address })), vlans: given.vlans ?? [], defaultVlan: given.defaultVlan ?? null })
        ? 'change its RADIUS clients or VLANs (they let network gear admit people)'
        : undefined,
    derived: { 'clients.*.secretSetAt': 'set when the client\'s secret is made' },
  };
}

/**
 * A new shared secret for one client (spec: `POST /api/admin/applications/:id/radius/clients/:name/secret`
 * → 200 `{ secret }`): the old one stops working at once. 404 `radius_client_not_found` when the
 * application has no client of that name.
 */
export async function rotateSecret(ctx: AppContext, id: string, name: string, actor: string): Promise<{ secret: string }> {
  const app = await getApplication(ctx, id);
  const client = app.radius?.clients.find((c) => c.name === name);
  if (!app.radius || !client) throw notFound('radius_client_not_found', `Application "${id}" has no RADIUS client named "${name}".`);
  const secret = newClientSecret();
  const now = ctx.clock.now();
  const radius: RadiusSettings = {
    ...app.radius,
    clients: app.radius.clients.map((c) => (c === client ? { ...c, secret: sealAtRest(ctx.db, secret, secretPurpose(id, name)), secretSetAt: now.toISOString() } : c)),
  };
  await transaction(ctx.db, async (tx) => {
    await exec(tx.update(applications).set({ radius, updatedAt: now }).where(eq(applications.id, id)));
    await recordAudit(tx, now, { actor, action: 'application.radius_secret_rotated', applicationId: id, target: id, details: { client: name } });
  });
  return { secret };
}
