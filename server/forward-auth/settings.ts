/**
 * The application field `forwardAuth` (spec forward-auth.md, "A protected site is an
 * application"): `null`, or `{ hosts, groups, basic }`. Its wire schema, the rules a schema cannot
 * say (host syntax, duplicates, a web client, existing groups), and the `forward_auth_hosts` rows
 * that keep each host to one application (409 `host_in_use`). Registered as an application field
 * (plugin-api/application-fields.ts) by the plugin (plugin.ts): the applications service calls
 * `prepare` before its create/update transaction and `written` inside it; a change reaches the
 * checks at once (protected-hosts.ts).
 */
import { eq } from 'drizzle-orm';
import { Type, type Static } from 'typebox';
import { forwardAuthHosts, type ClientType, type ForwardAuthSettings } from '../db/schema.js';
import { existingGroupIds } from '../groups/queries.js';
import type { Db, Tx } from '../db/client.js';
import { conflict, type FieldError } from '../http/problem.js';
import { exec, many } from '../db/store.js';
import { MAX_HOSTS_PER_APPLICATION, parseHostPattern, patternsOverlap } from './hosts.js';
import { forwardAuthChanged } from './protected-hosts.js';
import type { ApplicationField } from '../plugin-api/application-fields.js';

/** Directory group ids (spec claims-and-groups.md). */
const GroupId = Type.String({ pattern: '^[a-z0-9][a-z0-9._-]{0,63}$', maxLength: 64 });

const FORWARD_AUTH_TEXT =
  'Forward auth (docs/protect-apps-without-oidc.md): the hosts this application protects behind a reverse proxy ' +
  '(wiki.lan.example, wiki.lan.example:8443, *.media.lan.example for one label under it; each host belongs to one application), ' +
  'the directory groups of which a person must be in one (null: every active member passes), and whether HTTP Basic with an ' +
  'app password is accepted (for DAV clients); null: not protected. Needs a web application.';

export const ForwardAuthInputSchema = Type.Object(
  {
    hosts: Type.Array(Type.String({ minLength: 1, maxLength: 300 }), { minItems: 1, maxItems: MAX_HOSTS_PER_APPLICATION }),
    groups: Type.Optional(Type.Union([Type.Array(GroupId, { minItems: 1, maxItems: 50, uniqueItems: true }), Type.Null()])),
    basic: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, description: FORWARD_AUTH_TEXT },
);
export type ForwardAuthInput = Static<typeof ForwardAuthInputSchema>;

export const ForwardAuthField = Type.Union([ForwardAuthInputSchema, Type.Null()], { description: FORWARD_AUTH_TEXT });

export const ForwardAuthRecordSchema = Type.Union(
  [
    Type.Object(
      { hosts: Type.Array(Type.String()), groups: Type.Union([Type.Array(Type.String()), Type.Null()]), basic: Type.Boolean() },
      { additionalProperties: false },
    ),
    Type.Null(),
  ],
  { description: FORWARD_AUTH_TEXT },
);

const PATH = 'body.forwardAuth';

/**
 * The settings as stored, from the request's value (undefined: not given), or field errors pushed
 * onto `errors`. Host patterns are normalised; groups must be directory groups that exist.
 */
export async function forwardAuthSettings(
  db: Db,
  input: ForwardAuthInput | null | undefined,
  clientType: ClientType,
  errors: FieldError[],
): Promise<ForwardAuthSettings | null | undefined> {
  if (input === undefined || input === null) return input;
  if (clientType !== 'web') errors.push({ path: PATH, message: 'forward auth needs a web (confidential) application' });
  const hosts: string[] = [];
  input.hosts.forEach((raw, i) => {
    const parsed = parseHostPattern(raw);
    if ('error' in parsed) errors.push({ path: `${PATH}.hosts.${i}`, message: parsed.error });
    else if (hosts.includes(parsed.pattern)) errors.push({ path: `${PATH}.hosts.${i}`, message: `repeats ${parsed.pattern}` });
    else hosts.push(parsed.pattern);
  });
  const groups = input.groups ?? null;
  if (groups) {
    const known = await existingGroupIds(db, groups);
    groups.forEach((id, i) => {
      if (!known.has(id)) errors.push({ path: `${PATH}.groups.${i}`, message: `there is no group "${id}"` });
    });
  }
  return { hosts, groups, basic: input.basic ?? false };
}

/**
 * Makes `hosts` the application's rows: removes the ones it gave up, adds the new ones, refusing
 * (409 `host_in_use`) a host another application protects, and a new pattern that overlaps one of
 * another application's (a name under its wildcard, `name:port` under its port-less name, or the
 * other way round: issue 49, H2) unless the caller administers that application too (`manages`):
 * the more specific pattern wins a request, so claiming one takes the host over. Hosts the
 * application already holds stay, whoever gave them. Inside the caller's transaction.
 *
 * Reads the table whole: at most 20 rows per application (so as small as the application list,
 * and read whole by the checks' map every minute, protected-hosts.ts), where an overlap (a name
 * under a wildcard) is no key or prefix an index could seek.
 */
export async function claimHosts(tx: Tx, applicationId: string, hosts: string[], manages: (applicationId: string) => boolean = () => true): Promise<void> {
  if (hosts.length) {
    const rows = await many(tx.select({ host: forwardAuthHosts.host, applicationId: forwardAuthHosts.applicationId }).from(forwardAuthHosts));
    const others = rows.filter((row) => row.applicationId !== applicationId);
    // Naming the host, not the application that has it: an app manager may only learn about their own.
    const taken = others.find((row) => hosts.includes(row.host));
    if (taken) throw conflict('host_in_use', `The host ${taken.host} is already protected by another application.`);
    const held = new Set(rows.filter((row) => row.applicationId === applicationId).map((row) => row.host));
    for (const host of hosts.filter((h) => !held.has(h))) {
      if (others.some((row) => !manages(row.applicationId) && patternsOverlap(host, row.host))) {
        throw conflict('host_in_use', `The host ${host} overlaps a host another application protects; only an administrator of both applications may give them overlapping hosts.`);
      }
    }
  }
  await exec(tx.delete(forwardAuthHosts).where(eq(forwardAuthHosts.applicationId, applicationId)));
  if (hosts.length) await exec(tx.insert(forwardAuthHosts).values(hosts.map((host) => ({ host, applicationId }))));
  forwardAuthChanged();
}

declare module '../plugin-api/application-fields.js' {
  interface ApplicationFieldInputs {
    forwardAuth: ForwardAuthInput | null;
  }
  interface ApplicationFieldRecords {
    forwardAuth: ForwardAuthSettings | null;
  }
}

/** `forwardAuth` as an application field: after `consent` in the bodies and the record. */
export function forwardAuthField(db: Db): ApplicationField<ForwardAuthInput | null> {
  return {
    name: 'forwardAuth',
    after: 'consent',
    input: ForwardAuthField,
    record: ForwardAuthRecordSchema,
    toRecord: (app) => app.forwardAuth ?? null,
    async prepare(change) {
      const { id, given, current, clientType, errors } = change;
      const settings = await forwardAuthSettings(db, given, clientType, errors);
      if (given === undefined && current?.forwardAuth && clientType !== 'web') {
        errors.push({ path: 'body.clientType', message: 'an application that protects hosts (forwardAuth) must stay a web application' });
      }
      if (settings === undefined) return undefined;
      const hosts = settings?.hosts ?? [];
      // A create without hosts has none to claim; an update that turns forward auth off frees them.
      if (!current && !settings) return { columns: { forwardAuth: null } };
      return { columns: { forwardAuth: settings }, written: (tx) => claimHosts(tx, id, hosts, change.manages) };
    },
    // Its protected hosts are free again at once (a few rows; the purge plan finds none left).
    deleted: (tx, id) => claimHosts(tx, id, []),
    keyMayNot: (current, given) =>
      JSON.stringify(given) !== JSON.stringify(current.forwardAuth) ? 'change the protected hosts or their groups (forward auth)' : undefined,
  };
}
