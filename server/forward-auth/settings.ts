/**
 * The application field `forwardAuth` (spec forward-auth.md, "A protected site is an
 * application"): `null`, or `{ hosts, basic }`. Its wire schema, the rules a schema cannot say
 * (host syntax, duplicates, a web client), and the `forward_auth_hosts` rows
 * that keep each host to one application (409 `host_in_use`). Registered as an application field
 * (plugin-api/application-fields.ts) by the plugin (plugin.ts): the applications service calls
 * `prepare` before its create/update transaction and `written` inside it; a change reaches the
 * checks at once (protected-hosts.ts).
 *
 * Who passes is the application's to say, for every protocol alike: its group rule
 * (`allowedGroups`, applications/group-rule.ts) took the place of `forwardAuth.groups` (decision 0450;
 * the migration `allowed_groups` moved the stored lists). The contract's shape still names
 * `groups` (spec forward-auth.md), and every export before the move wrote `groups: null`: null or
 * an empty list (both meant "no group rule here") is taken and ignored; a list of groups is refused
 * with a message saying where it went, rather than silently applied to every protocol or dropped.
 */
import { eq } from 'drizzle-orm';
import { Type, type Static } from 'typebox';
import { forwardAuthHosts, type ClientType, type ForwardAuthSettings } from '../db/schema.js';
import type { Tx } from '../db/client.js';
import { conflict, type FieldError } from '../http/problem.js';
import { exec, many } from '../db/store.js';
import { MAX_HOSTS_PER_APPLICATION, parseHostPattern, patternsOverlap } from './hosts.js';
import { forwardAuthChanged } from './protected-hosts.js';
import type { ApplicationField } from '../plugin-api/application-fields.js';

const FORWARD_AUTH_TEXT =
  'Forward auth (docs/protect-apps-without-oidc.md): the hosts this application protects behind a reverse proxy ' +
  '(wiki.lan.example, wiki.lan.example:8443, *.media.lan.example for one label under it; each host belongs to one application), ' +
  'and whether HTTP Basic with an app password is accepted (for DAV clients); null: not protected. Needs a web application. ' +
  'Who passes is the application\'s sign-up policy, membership, MFA policy and group rule (allowedGroups).';
const MOVED_GROUPS_TEXT =
  'Moved to the application\'s allowedGroups (the group rule every protocol honours): null or [] is accepted and ignored, a list of groups is refused.';
export const GROUPS_MOVED_MESSAGE =
  'has moved to allowedGroups, the application\'s group rule that every protocol honours: send "allowedGroups": [...] beside forwardAuth instead';

export const ForwardAuthInputSchema = Type.Object(
  {
    hosts: Type.Array(Type.String({ minLength: 1, maxLength: 300 }), { minItems: 1, maxItems: MAX_HOSTS_PER_APPLICATION }),
    groups: Type.Optional(Type.Unknown({ deprecated: true, description: MOVED_GROUPS_TEXT })),
    basic: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, description: FORWARD_AUTH_TEXT },
);
export type ForwardAuthInput = Static<typeof ForwardAuthInputSchema>;

export const ForwardAuthField = Type.Union([ForwardAuthInputSchema, Type.Null()], { description: FORWARD_AUTH_TEXT });

export const ForwardAuthRecordSchema = Type.Union(
  [
    Type.Object(
      { hosts: Type.Array(Type.String()), basic: Type.Boolean() },
      { additionalProperties: false },
    ),
    Type.Null(),
  ],
  { description: FORWARD_AUTH_TEXT },
);

const PATH = 'body.forwardAuth';

/**
 * The settings as stored, from the request's value (undefined: not given), or field errors pushed
 * onto `errors`. Host patterns are normalised; a `groups` list is refused with where it went.
 */
export function forwardAuthSettings(
  input: ForwardAuthInput | null | undefined,
  clientType: ClientType,
  errors: FieldError[],
): ForwardAuthSettings | null | undefined {
  if (input === undefined || input === null) return input;
  if (clientType !== 'web') errors.push({ path: PATH, message: 'forward auth needs a web (confidential) application' });
  const hosts: string[] = [];
  input.hosts.forEach((raw, i) => {
    const parsed = parseHostPattern(raw);
    if ('error' in parsed) errors.push({ path: `${PATH}.hosts.${i}`, message: parsed.error });
    else if (hosts.includes(parsed.pattern)) errors.push({ path: `${PATH}.hosts.${i}`, message: `repeats ${parsed.pattern}` });
    else hosts.push(parsed.pattern);
  });
  if (!noGroupList(input.groups)) errors.push({ path: `${PATH}.groups`, message: GROUPS_MOVED_MESSAGE });
  return { hosts, basic: input.basic ?? false };
}

/** The old `groups` said nothing: absent, null, or an empty list (which meant no rule then too). */
function noGroupList(groups: unknown): boolean {
  return groups === undefined || groups === null || (Array.isArray(groups) && groups.length === 0);
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
export function forwardAuthField(): ApplicationField<ForwardAuthInput | null> {
  return {
    name: 'forwardAuth',
    after: 'consent',
    input: ForwardAuthField,
    record: ForwardAuthRecordSchema,
    toRecord: (app) => app.forwardAuth ?? null,
    async prepare(change) {
      const { id, given, current, clientType, errors } = change;
      const settings = forwardAuthSettings(given, clientType, errors);
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
      JSON.stringify(given) !== JSON.stringify(current.forwardAuth) ? 'change the protected hosts (forward auth)' : undefined,
  };
}
