/**
 * Consent where it matters (issue 25, item 17). An application's `consent` policy is `implicit`
 * (the administrator consented for the team: nothing is asked) or `explicit`: a person approves
 * once what the application asks for, per membership and scope set, on the hosted consent page
 * (oauth/consent-page.ts), and sees and withdraws it on the account page.
 *
 * - Authorize asks when the requested scopes are not all approved yet, or when the request says
 *   `prompt=consent` (OIDC Core §3.1.2.1); with `prompt=none` it answers `consent_required`.
 * - An approval is the union of the scopes approved so far; it is kept until withdrawn, the
 *   membership ends, or a year passes without use (`last_used_at`, moved at most once a day, so a
 *   busy application does not write on every sign-in; retention-rules.ts).
 * - Withdrawing revokes the application's refresh tokens for the person: what they allowed stops.
 */
import { and, eq, lt } from 'drizzle-orm';
import type { AppContext } from '../context.js';
import type { Tx } from '../audit/record.js';
import { recordAudit } from '../audit/record.js';
import { consents, memberships, type Application, type Consent, type Membership } from '../db/schema.js';
import { notFound } from '../http/problem.js';
import { revokeFamilies } from './revoke-families.js';

/** The hosted consent page (consent-page.ts). */
export const CONSENT_PAGE = '/consent';
const USE_MARK_EVERY_MS = 86_400_000;

const scopeSet = (scope: string) => new Set(scope.split(' ').filter(Boolean));

/** The membership's approval, if any. */
export function consentOf(db: Tx, membershipId: string): Consent | undefined {
  return db.select().from(consents).where(eq(consents.membershipId, membershipId)).get();
}

/**
 * Whether the person must be asked before `scope` is granted to `app`: only under an explicit
 * policy, when something requested is not approved yet or the request demands it. A passing
 * approval is marked used (at most daily).
 */
export function consentNeeded(ctx: AppContext, app: Application, membership: Membership, scope: string, demanded: boolean): boolean {
  if (app.consent !== 'explicit') return false;
  if (demanded) return true;
  const given = consentOf(ctx.db, membership.id);
  if (!given) return true;
  const approved = scopeSet(given.scope);
  if ([...scopeSet(scope)].some((s) => !approved.has(s))) return true;
  const now = ctx.clock.now();
  ctx.db
    .update(consents)
    .set({ lastUsedAt: now })
    .where(and(eq(consents.membershipId, membership.id), lt(consents.lastUsedAt, new Date(now.getTime() - USE_MARK_EVERY_MS))))
    .run();
  return false;
}

/** Records the person's approval of `scope` (added to what they approved before). */
export function grantConsent(ctx: AppContext, app: Application, membership: Membership, scope: string): void {
  const now = ctx.clock.now();
  ctx.db.transaction((tx) => {
    const before = consentOf(tx, membership.id);
    const union = [...new Set([...scopeSet(before?.scope ?? ''), ...scopeSet(scope)])].join(' ');
    tx.insert(consents)
      .values({ membershipId: membership.id, applicationId: app.id, scope: union, grantedAt: now, lastUsedAt: now })
      .onConflictDoUpdate({ target: consents.membershipId, set: { scope: union, grantedAt: now, lastUsedAt: now } })
      .run();
    recordAudit(tx, now, { actor: `person:${membership.personId}`, action: 'consent.granted', applicationId: app.id, target: membership.id, details: { scope: union } });
  });
}

/** The person's approvals, by application id (the account page lists them per membership). */
export function consentsOfPerson(ctx: AppContext, personId: string): Map<string, Consent> {
  const rows = ctx.db
    .select({ consent: consents })
    .from(consents)
    .innerJoin(memberships, eq(memberships.id, consents.membershipId))
    .where(eq(memberships.personId, personId))
    .all();
  return new Map(rows.map(({ consent }) => [consent.applicationId, consent]));
}

/** Withdraws the person's approval for an application and revokes its refresh tokens for them; 404 when there is none. */
export function withdrawConsent(ctx: AppContext, personId: string, applicationId: string): void {
  const now = ctx.clock.now();
  ctx.db.transaction((tx) => {
    const membership = tx
      .select({ id: memberships.id })
      .from(memberships)
      .where(and(eq(memberships.applicationId, applicationId), eq(memberships.personId, personId)))
      .get();
    const removed = membership ? tx.delete(consents).where(eq(consents.membershipId, membership.id)).run().changes : 0;
    if (!removed) throw notFound('consent_not_found', 'You have not allowed this application anything.');
    const revoked = revokeFamilies(tx, now, { applicationId, personId }, 'consent_withdrawn');
    recordAudit(tx, now, { actor: `person:${personId}`, action: 'consent.withdrawn', applicationId, target: membership!.id, details: { refreshFamiliesRevoked: revoked } });
  });
}
