/**
 * The application's group rule, the one every protocol honours (issue 44 item 5, issue 48 item 3;
 * decision 0450; spec forward-auth.md, ldap.md, radius.md: the application-level `allowedGroups`):
 * `null` (no rule) or a list of directory group ids of which a person must be in at least one to
 * use the application, by whatever protocol they come:
 * - OIDC: authorize and the device page admit (accounts/membership.ts `settleMembership`: the
 *   refusal page names the rule), the code and device grants re-check (oauth/token/session-grant.ts),
 *   and so does every refresh (oauth/token/refresh-token.ts: `invalid_grant`);
 * - forward auth: its check (on the groups it reads anyway for Remote-Groups) and its hand-over;
 * - LDAP binds and every operation after them (ldap/bind.ts);
 * - RADIUS (radius/people.ts: PAP, EAP-TTLS and EAP-TLS) asks here; SAML admits through
 *   `settleMembership` (saml/sso.ts), so it holds there as for OIDC.
 * A person in an allowed group may also join an invitation-only application without an invitation
 * (accounts/membership.ts `admitNewcomer`). Nothing else reads `allowedGroups` to decide access.
 *
 * Cost: nothing when the application has no rule (no read, no promise). With one, one probe of
 * `group_members`' (person_id, group_id) index for the allowed groups (oauth/claims/queries.ts
 * `groupIdsAmong`), synchronous on SQLite.
 */
import type { Db } from '../db/client.js';
import type { Application } from '../db/schema.js';
import { claimQueries } from '../oauth/claims/queries.js';

/** The token endpoint's `error_description` when a grant is refused by the rule (`invalid_grant`). */
export const GROUP_RULE_GRANT_ERROR = 'The person is not in any of the groups this application allows.';

/** What the rule needs of an application: its `allowedGroups` (null: no rule). */
export type GroupRuled = Pick<Application, 'allowedGroups'>;

/** The groups a person must be in one of, or null when the application has no group rule. */
export function requiredGroups(app: GroupRuled): readonly string[] | null {
  const groups = app.allowedGroups;
  return groups?.length ? groups : null;
}

/**
 * Whether a person in `personGroups` passes the application's group rule, for callers that have
 * read the person's groups anyway (forward auth's check, for its Remote-Groups header).
 */
export function passesGroupRule(app: GroupRuled, personGroups: readonly string[]): boolean {
  const required = requiredGroups(app);
  return !required || required.some((group) => personGroups.includes(group));
}

/**
 * The same for a person by id: true without a rule (no read, no promise); else whether they are in
 * at least one of its groups. Synchronous on SQLite unless another async context holds a
 * transaction; a promise on PostgreSQL. `source` is the store's handle (not a transaction's).
 */
export function personPassesGroupRule(source: Db | { db: Db }, app: GroupRuled, personId: string): boolean | Promise<boolean> {
  const required = requiredGroups(app);
  if (!required) return true;
  const db = '$client' in source ? source : source.db;
  const found = claimQueries(db).groupIdsAmong(personId, required);
  return found instanceof Promise ? found.then((ids) => ids.length > 0) : found.length > 0;
}
