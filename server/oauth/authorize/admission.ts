/**
 * Who may receive tokens for an application from this browser (DESIGN §4.4–4.8): the one check
 * that the authorize endpoint and the device page (`/device`, RFC 8628) both make, so that the
 * same sign-in, sign-up-policy (and second-factor) rules hold for both:
 * 1. a live session whose person has authenticated the application's realm (its SSO group or the
 *    application alone), recently enough for the caller's demand (authorize's `prompt=login`,
 *    `max_age`), or else a sign-in is needed;
 * 2. a multi-factor session when the application requires MFA or the caller asks for it
 *    (`acr_values`): a password-only one is stepped up (accounts/second-factor/flow.ts), before
 *    any membership is created;
 * 3. a membership settled by the application's sign-up policy (accounts/membership.ts): an
 *    active member passes, a newcomer joins if the policy lets them, anyone else is denied.
 */
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import type { Application, Membership, Person, Session } from '../../db/schema.js';
import { readSession, realmAuthTime, realmOf } from '../../accounts/session.js';
import { settleMembership, type RefusalReason } from '../../accounts/membership.js';
import { isMultiFactor, mfaRequired } from '../../accounts/second-factor/factors.js';

export type Admission =
  /** Sign in first: no session, the realm not authenticated in it, or not recently enough. */
  | { kind: 'sign_in'; found: { session: Session; person: Person } | undefined; authTime: Date | undefined }
  /** Signed in with a password only, where a second factor is needed: step up first. */
  | { kind: 'second_factor'; session: Session; person: Person }
  /** Signed in, but the application refuses the person (suspended, or not admitted by its policy). */
  | { kind: 'denied'; reason: RefusalReason; description: string; person: Person }
  | { kind: 'admitted'; session: Session; person: Person; authTime: Date; membership: Membership };

/**
 * Settles whether the request's browser may receive tokens for `client`. `fresh(authTime)` is
 * the caller's further demand on when the realm was authenticated (default: any time);
 * `mfaRequested` asks for a multi-factor session even where the application does not require one.
 * Admitting may create a membership (an open application, a matching invitation).
 */
export async function admit(
  ctx: AppContext,
  request: FastifyRequest,
  client: Application,
  fresh: (authTime: Date) => boolean = () => true,
  mfaRequested = false,
): Promise<Admission> {
  const found = await readSession(ctx, request);
  const authTime = found ? await realmAuthTime(ctx, found.session.id, realmOf(client)) : undefined;
  if (!found || authTime === undefined || !fresh(authTime)) return { kind: 'sign_in', found, authTime };
  if ((mfaRequested || mfaRequired(client)) && !isMultiFactor(found.session.amr)) return { kind: 'second_factor', ...found };
  const settled = await settleMembership(ctx, client, found.person);
  if ('error' in settled) return { kind: 'denied', reason: settled.reason, description: settled.description, person: found.person };
  return { kind: 'admitted', session: found.session, person: found.person, authTime, membership: settled.membership };
}
