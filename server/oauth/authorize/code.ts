/**
 * Authorization codes (RFC 6749 §4.1.2, DESIGN §4.10): random 256-bit, known only by their
 * SHA-256, single use, valid 60 s, bound to client, redirect URI, PKCE challenge, resource, nonce
 * and session.
 *
 * They live in memory, not in the store. A code is read once within a minute, and one process
 * serves a data directory (ops/pid-file.ts), so a table bought two writes per sign-in (plus
 * their WAL checkpoint) and rows that had to be purged, for one benefit: surviving a restart. A
 * restart now forgets the codes issued before it; their exchange answers `invalid_grant` and the
 * application starts the sign-in again, which the still-live session completes silently.
 * In PostgreSQL mode several instances serve one issuer, and the codes are in the database
 * instead (code-table.ts).
 *
 * A spent code is remembered, with the refresh-token family its exchange started, until
 * REMEMBER_MS after it was issued, so a replay in that window revokes the family (RFC 6749
 * §4.1.2, "SHOULD revoke"); after that it is just unknown, as are expired codes.
 */
import { randomToken, sha256 } from '../../util/crypto.js';
import { AUTHORIZATION_CODE_MEMORY_MS } from '../../data-lifecycle/retention-rules.js';

export const CODE_TTL_MS = 60_000;
/** How long a code (spent or not) is remembered after issue: replays are caught for this long. */
export const REMEMBER_MS = AUTHORIZATION_CODE_MEMORY_MS;
/**
 * At most this many codes are remembered; beyond it the oldest are forgotten first (a forgotten
 * live code fails closed). A ceiling on memory, far above a small team's sign-ins per 10 minutes.
 */
export const MAX_REMEMBERED = 100_000;

export interface NewCode {
  applicationId: string;
  personId: string;
  membershipId: string;
  sessionId: string;
  redirectUri: string;
  scope: string;
  resource: string;
  codeChallenge: string | null;
  nonce: string | null;
  authTime: Date;
}

export interface IssuedCode extends NewCode {
  issuedAt: number;
  expiresAt: number;
  /** Set once the code was exchanged. */
  spent: boolean;
  /** The refresh-token family its exchange started (with `offline_access`). */
  issuedFamilyId?: string;
}

/** Each app's live codes (one server's memory; PostgreSQL mode keeps them in the database instead). */
const stores = new WeakMap<object, CodeStore>();

/** The live codes of the app whose context this is (made on first use). */
export function codeStoreOf(ctx: object): CodeStore {
  let store = stores.get(ctx);
  if (!store) stores.set(ctx, (store = new CodeStore()));
  return store;
}

/** The codes of one server, by SHA-256 of the code, oldest first (Map keeps insertion order). */
export class CodeStore {
  private readonly codes = new Map<string, IssuedCode>();

  /** Stores a new code and returns it: the only time it exists in the clear. */
  issue(input: NewCode, now: Date): string {
    const code = randomToken();
    const issuedAt = now.getTime();
    this.codes.set(sha256(code), { ...input, issuedAt, expiresAt: issuedAt + CODE_TTL_MS, spent: false });
    this.forgetOld(issuedAt);
    return code;
  }

  /** The code presented, spent or not (expiry is the caller's check), or undefined. */
  find(code: string, now: Date): IssuedCode | undefined {
    this.forgetOld(now.getTime());
    return this.codes.get(sha256(code));
  }

  get size(): number {
    return this.codes.size;
  }

  /**
   * Every code has the same lifetime, so the oldest is first in the map: forgetting is dropping
   * from the front — amortised O(1) per call.
   */
  private forgetOld(nowMs: number): void {
    for (const [hash, code] of this.codes) {
      if (code.issuedAt + REMEMBER_MS > nowMs && this.codes.size <= MAX_REMEMBERED) break;
      this.codes.delete(hash);
    }
  }
}
