/**
 * The group rule (issue 44 item 5, issue 48 item 3; decision 0450): an application's
 * `allowedGroups`, `null` (no rule) or a list of directory group ids of which a person must be in
 * at least one to use the application, by whatever protocol they come:
 * - OIDC: authorize and the device page admit (accounts/membership.ts `settleMembership`: the
 *   refusal page names the rule), the code and device grants re-check (oauth/token/session-grant.ts),
 *   and so does every refresh (oauth/token/refresh-token.ts: `invalid_grant`);
 * - forward auth: its check (forward-auth/check.ts, with the groups it reads anyway for
 *   Remote-Groups) and its start route (through `admit`);
 * - LDAP binds and every operation after them (ldap/bind.ts);
 * - SAML and RADIUS: call `passesGroupRule` where they decide who is let in.
 * A person in an allowed group may also join an invitation-only application without an invitation
 * (`admitNewcomer`). The rule lives here, beside membership admission, so every protocol plugin
 * imports the one function rather than writing the test again.
 *
 * Cost: nothing when the application has no rule (no read, no promise). With one, a probe of
 * `group_members`' (person_id, group_id) index per allowed group (oauth/claims/queries.ts
 * `groupIdsAmong`), synchronous on SQLite.
 */
import type { Db } from '../db/client.js';
import type { Application } from '../db/schema.js';
import { claimQueries } from '../oauth/claims/queries.js';

/** The token endpoint's `error_description` when a grant is refused by the rule (`invalid_grant`). */
export const GROUP_RULE_GRANT_ERROR = 'The person is not in any of the groups this application allows.';

/** What the rule needs of an application: its `allowedGroups` (null: no rule). */
export type GroupRuled = Pick<Application, 'allowedGroups'>;

/**
 * Whether a person in `personGroups` passes the rule `allowedGroups`, for callers that have read
 * the person's groups anyway (forward auth's check, for its Remote-Groups header).
 */
export function groupRuleAdmits(allowedGroups: readonly string[] | null, personGroups: readonly string[]): boolean {
  return allowedGroups === null || allowedGroups.some((group) => personGroups.includes(group));
}

/**
 * Whether the person may use `app` under its group rule: true without a rule; else whether they
 * are in at least one of its groups. Synchronous on SQLite unless another async context holds a
 * transaction; a promise on PostgreSQL. `db` is the store's handle (not a transaction's).
 */
export function passesGroupRule(db: Db, app: GroupRuled, personId: string): boolean | Promise<boolean> {
  const allowed = app.allowedGroups;
  if (allowed === null) return true;
  if (allowed.length === 0) return false;
  const found = claimQueries(db).groupIdsAmong(personId, allowed);
  return found instanceof Promise ? found.then((ids) => ids.length > 0) : found.length > 0;
}
