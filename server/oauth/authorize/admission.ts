/**
 * Who may receive tokens for an application from this browser (DESIGN §4.4–4.8): the one check
 * that the authorize endpoint and the device page (`/device`, RFC 8628) both make, so that the
 * same sign-in, sign-up-policy (and second-factor) rules hold for both:
 * 1. a live session whose person has authenticated the application's realm (its SSO group or the
 *    application alone), recently enough for the caller's demand (authorize's `prompt=login`,
 *    `max_age`), or else a sign-in is needed;
 * 2. a membership settled by the application's sign-up policy (accounts/membership.ts): an
 *    active member passes, a newcomer joins if the policy lets them, anyone else is denied.
 */
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import type { Application, Membership, Person, Session } from '../../db/schema.js';
import { readSession, realmAuthTime, realmOf } from '../../accounts/session.js';
import { settleMembership } from '../../accounts/membership.js';

export type Admission =
  /** Sign in first: no session, the realm not authenticated in it, or not recently enough. */
  | { kind: 'sign_in'; found: { session: Session; person: Person } | undefined; authTime: Date | undefined }
  /** Signed in, but the application refuses the person (suspended, or not admitted by its policy). */
  | { kind: 'denied'; description: string }
  | { kind: 'admitted'; session: Session; person: Person; authTime: Date; membership: Membership };

/**
 * Settles whether the request's browser may receive tokens for `client`. `fresh(authTime)` is
 * the caller's further demand on when the realm was authenticated (default: any time).
 * Admitting may create a membership (an open application, a matching invitation).
 */
export function admit(ctx: AppContext, request: FastifyRequest, client: Application, fresh: (authTime: Date) => boolean = () => true): Admission {
  const found = readSession(ctx, request);
  const authTime = found ? realmAuthTime(ctx, found.session.id, realmOf(client)) : undefined;
  if (!found || authTime === undefined || !fresh(authTime)) return { kind: 'sign_in', found, authTime };
  const settled = settleMembership(ctx, client, found.person);
  if ('error' in settled) return { kind: 'denied', description: settled.description };
  return { kind: 'admitted', session: found.session, person: found.person, authTime, membership: settled.membership };
}
