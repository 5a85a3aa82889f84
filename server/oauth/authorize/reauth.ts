/**
 * Demands for a fresh sign-in (OIDC Core §3.1.2.1): `prompt=login`, or a `max_age` the realm's
 * last sign-in is older than. Such a request goes to the sign-in page with `prompt` and `max_age`
 * dropped from its `return_to`: a fresh sign-in satisfies both, and kept there, `max_age=0`
 * could never be met. Dropped from the URL, the demand must still hold, or loading `return_to`
 * directly would skip the sign-in and issue a code carrying the old `auth_time`.
 *
 * So the demand is kept here, keyed by what binds the relying party's pending request (client,
 * redirect URI, state, nonce, PKCE challenge: change any and the relying party rejects the
 * answer). A request with that key gets a code only once the realm was authenticated at or after
 * the demand. In memory, like the codes (one process per data directory), for as long as a
 * sign-in may take; a restart forgets demands and the request then goes through as asked anew.
 */
import { sha256 } from '../../util/crypto.js';

/** How long a demand waits for its sign-in. */
export const DEMAND_TTL_MS = 30 * 60_000;
/** At most this many demands are kept; beyond it the oldest are forgotten first. */
export const MAX_DEMANDS = 10_000;

export interface PendingRequest {
  clientId: string;
  redirectUri: string;
  state: string | undefined;
  nonce: string | undefined;
  codeChallenge: string | undefined;
}

function demandKey(request: PendingRequest): string {
  return sha256(JSON.stringify([request.clientId, request.redirectUri, request.state ?? null, request.nonce ?? null, request.codeChallenge ?? null]));
}

/** Methods take the request, not its key: with no demand pending (the norm) nothing is hashed on the authorize path. */
export class ReauthDemands {
  /** Key → when it was demanded (epoch ms); Map order is oldest first. */
  private readonly demands = new Map<string, number>();

  /** Records that `request` needs a sign-in at or after `now`. */
  demand(request: PendingRequest, now: number): void {
    const key = demandKey(request);
    this.demands.delete(key);
    this.demands.set(key, now);
    for (const [k, at] of this.demands) {
      if (this.demands.size <= MAX_DEMANDS && at + DEMAND_TTL_MS > now) break;
      this.demands.delete(k);
    }
  }

  /** Whether a realm signed in at `authTime` satisfies the demand on `request` (true when none). */
  satisfied(request: PendingRequest, authTime: number, now: number): boolean {
    if (this.demands.size === 0) return true;
    const key = demandKey(request);
    const at = this.demands.get(key);
    if (at === undefined) return true;
    if (at + DEMAND_TTL_MS <= now) {
      this.demands.delete(key);
      return true;
    }
    return authTime >= at;
  }

  /** The request was answered with a code: its demand is met. */
  settle(request: PendingRequest): void {
    if (this.demands.size > 0) this.demands.delete(demandKey(request));
  }
}
