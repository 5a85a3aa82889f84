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
import type { Tx } from '../db/client.js';
import { recordAudit } from '../audit/record.js';
import { consents, memberships, type Application, type Consent, type Membership } from '../db/schema.js';
import { notFound } from '../http/problem.js';
import { revokeFamilies } from './revoke-families.js';
import { exec, many, one, transaction } from '../db/store.js';

/** The hosted consent page (consent-page.ts). */
export const CONSENT_PAGE = '/consent';
const USE_MARK_EVERY_MS = 86_400_000;

const scopeSet = (scope: string) => new Set(scope.split(' ').filter(Boolean));

/** The membership's approval, if any. */
export async function consentOf(db: Tx, membershipId: string): Promise<Consent | undefined> {
  return await one(db.select().from(consents).where(eq(consents.membershipId, membershipId)));
}

/**
 * Whether the person must be asked before `scope` is granted to `app`: only under an explicit
 * policy, when something requested is not approved yet or the request demands it. A passing
 * approval is marked used (at most daily).
 */
export async function consentNeeded(ctx: AppContext, app: Application, membership: Membership, scope: string, demanded: boolean): Promise<boolean> {
  if (app.consent !== 'explicit') return false;
  if (demanded) return true;
  const given = await consentOf(ctx.db, membership.id);
  if (!given) return true;
  const approved = scopeSet(given.scope);
  if ([...scopeSet(scope)].some((s) => !approved.has(s))) return true;
  const now = ctx.clock.now();
  await exec(ctx.db
    .update(consents)
    .set({ lastUsedAt: now })
    .where(and(eq(consents.membershipId, membership.id), lt(consents.lastUsedAt, new Date(now.getTime() - USE_MARK_EVERY_MS)))));
  return false;
}

/** Records the person's approval of `scope` (added to what they approved before). */
export async function grantConsent(ctx: AppContext, app: Application, membership: Membership, scope: string): Promise<void> {
  const now = ctx.clock.now();
  await transaction(ctx.db, async (tx) => {
    const before = await consentOf(tx, membership.id);
    const union = [...new Set([...scopeSet(before?.scope ?? ''), ...scopeSet(scope)])].join(' ');
    await exec(tx.insert(consents)
      .values({ membershipId: membership.id, applicationId: app.id, scope: union, grantedAt: now, lastUsedAt: now })
      .onConflictDoUpdate({ target: consents.membershipId, set: { scope: union, grantedAt: now, lastUsedAt: now } }));
    await recordAudit(tx, now, { actor: `person:${membership.personId}`, action: 'consent.granted', applicationId: app.id, target: membership.id, details: { scope: union } });
  });
}

/** The person's approvals, by application id (the account page lists them per membership). */
export async function consentsOfPerson(ctx: AppContext, personId: string): Promise<Map<string, Consent>> {
  const rows = await many(ctx.db
    .select({ consent: consents })
    .from(consents)
    .innerJoin(memberships, eq(memberships.id, consents.membershipId))
    .where(eq(memberships.personId, personId)));
  return new Map(rows.map(({ consent }) => [consent.applicationId, consent]));
}

/** Withdraws the person's approval for an application and revokes its refresh tokens for them; 404 when there is none. */
export async function withdrawConsent(ctx: AppContext, personId: string, applicationId: string): Promise<void> {
  const now = ctx.clock.now();
  await transaction(ctx.db, async (tx) => {
    const membership = await one(tx
      .select({ id: memberships.id })
      .from(memberships)
      .where(and(eq(memberships.applicationId, applicationId), eq(memberships.personId, personId))));
    const removed = membership ? await exec(tx.delete(consents).where(eq(consents.membershipId, membership.id))) : 0;
    if (!removed) throw notFound('consent_not_found', 'You have not allowed this application anything.');
    const revoked = await revokeFamilies(tx, now, { applicationId, personId }, 'consent_withdrawn');
    await recordAudit(tx, now, { actor: `person:${personId}`, action: 'consent.withdrawn', applicationId, target: membership!.id, details: { refreshFamiliesRevoked: revoked } });
  });
}
