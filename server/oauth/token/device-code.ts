/**
 * `grant_type=urn:ietf:params:oauth:grant-type:device_code` (RFC 8628 §3.4–3.5): the device polls
 * with its device code until the person has decided on the /device page.
 * - A code of another client, or an unknown one: `invalid_grant`; past its 10 minutes:
 *   `expired_token`; already exchanged: `invalid_grant` (tokens are issued exactly once).
 * - Still undecided: `authorization_pending`; polled again sooner than the interval:
 *   `slow_down`, and the interval grows by 5 s for every later poll (§3.5).
 * - Denied: `access_denied`. Approved: the tokens of session-grant.ts, spent in the same
 *   transaction that starts the refresh-token family, so two racing polls get one set between them.
 */
import type { OAuthClient } from '../client-auth.js';
import type { AppContext } from '../../context.js';
import { invalidGrant, OAuthError } from '../errors.js';
import type { KeyRing } from '../keys.js';
import { requiredParam, type RawParams } from '../params.js';
import { findByDeviceCode, markIssued, recordPoll, SLOW_DOWN_SECONDS } from '../device/store.js';
import type { TokenResponse } from './response.js';
import { issueSessionTokens } from './session-grant.js';

export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/**
 * Polls may arrive this much sooner than the interval without counting as too fast: a device
 * that waits exactly the interval after each answer is seen a little early by network jitter.
 */
const JITTER_MS = 500;

export async function deviceCodeGrant(ctx: AppContext, keys: KeyRing, client: OAuthClient, body: RawParams): Promise<TokenResponse> {
  const deviceCode = requiredParam(body, 'device_code');
  const now = ctx.clock.now();
  const row = await findByDeviceCode(ctx.db, deviceCode);
  if (!row || row.applicationId !== client.id) throw invalidGrant('The device code is not valid.');
  if (row.status === 'issued') throw invalidGrant('The device code has already been exchanged for tokens.');
  if (row.expiresAt.getTime() <= now.getTime()) throw new OAuthError('expired_token', 'The device code has expired; start the sign-in on the device again.');
  if (row.status === 'denied') throw new OAuthError('access_denied', 'The person denied the sign-in on the device.');
  if (row.status === 'pending') {
    const tooSoon = row.lastPolledAt !== null && now.getTime() - row.lastPolledAt.getTime() < row.interval * 1000 - JITTER_MS;
    const interval = tooSoon ? row.interval + SLOW_DOWN_SECONDS : row.interval;
    await recordPoll(ctx.db, row.id, now, interval);
    if (tooSoon) throw new OAuthError('slow_down', `Polling too fast: wait ${interval} seconds between requests.`);
    throw new OAuthError('authorization_pending', 'The person has not approved the sign-in yet.');
  }
  // Approved: the decision recorded who, for which membership, in which (device) session; a
  // session removed since (the person was deleted) leaves nothing to issue for.
  if (!row.membershipId || !row.sessionId || !row.authTime) throw invalidGrant('The device sign-in is no longer valid; start again.');
  return issueSessionTokens(
    ctx, keys, client,
    {
      membershipId: row.membershipId, sessionId: row.sessionId, scope: row.scope, resource: row.resource, nonce: null,
      authTime: row.authTime, given: 'this device sign-in was approved', grantType: 'urn:ietf:params:oauth:grant-type:device_code',
    },
    { claim: async (tx) => markIssued(tx, row.id) },
  );
}
