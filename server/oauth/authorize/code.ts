/**
 * Authorization codes (RFC 6749 §4.1.2, DESIGN §4.10): random 256-bit, stored hashed, single
 * use, valid 60 s, bound to client, redirect URI, PKCE challenge, resource, nonce and session.
 */
import { authorizationCodes } from '../../db/schema.js';
import type { AppContext } from '../../context.js';
import { randomToken, sha256 } from '../../util/crypto.js';

export const CODE_TTL_MS = 60_000;

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

/** Stores a new code and returns it (the only time it exists in the clear). */
export function issueCode(ctx: AppContext, input: NewCode): string {
  const code = randomToken();
  const now = ctx.clock.now();
  ctx.db
    .insert(authorizationCodes)
    .values({ ...input, codeHash: sha256(code), createdAt: now, expiresAt: new Date(now.getTime() + CODE_TTL_MS) })
    .run();
  return code;
}
