/**
 * The application's group rule, the one every protocol honours (spec forward-auth.md: an
 * application's `groups`, "any of them, when set", folding into the application-level
 * `allowedGroups`): when the application names groups, a person passes only while in one of
 * them. Forward auth's check and its hand-over, LDAP binds and RADIUS (PAP, EAP-TTLS and EAP-TLS) — and next SAML — ask
 * here, so the rule is written once. The groups live in the application row's forward-auth
 * settings today; when `allowedGroups` lands, this is the one place that reads it.
 */
import type { Application } from '../db/schema.js';
import { groupIdsOfPerson, type DbSource } from '../groups/queries.js';

type Ruled = Pick<Application, 'forwardAuth'>;

/** The groups a person must be in one of, or null when the application has no group rule. */
export function requiredGroups(app: Ruled): readonly string[] | null {
  const groups = app.forwardAuth?.groups;
  return groups?.length ? groups : null;
}

/** Whether a person in `personGroups` passes the application's group rule. */
export function passesGroupRule(app: Ruled, personGroups: readonly string[]): boolean {
  const required = requiredGroups(app);
  return !required || required.some((group) => personGroups.includes(group));
}

/** The same for a person by id: their groups are read only when the application has a rule. */
export async function personPassesGroupRule(source: DbSource, app: Ruled, personId: string): Promise<boolean> {
  return !requiredGroups(app) || passesGroupRule(app, await groupIdsOfPerson(source, personId));
}
