/**
 * The token response (RFC 6749 §5.1, spec §2 "Token response") and refresh-token storage:
 * opaque 256-bit tokens, stored hashed, one family per code exchange, rotated on every use.
 */
import { refreshTokenFamilies, refreshTokens, type AuthMethod } from '../../db/schema.js';
import type { Tx } from '../../db/client.js';
import { randomToken, sha256 } from '../../util/crypto.js';
import { newId } from '../../util/ids.js';
import { exec } from '../../db/store.js';

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  /** Absent only for a client-credentials token asked without a scope (RFC 6749 §5.1). */
  scope?: string;
  refresh_token?: string;
  id_token?: string;
}

export const newRefreshToken = () => randomToken('ghr_');

/** Adds the next token of a family; it expires with the family (absolute lifetime). */
export async function storeRefreshToken(tx: Tx, familyId: string, token: string, now: Date, expiresAt: Date): Promise<void> {
  await exec(tx.insert(refreshTokens).values({ tokenHash: sha256(token), familyId, createdAt: now, expiresAt }));
}

export interface NewFamily {
  applicationId: string;
  personId: string;
  membershipId: string;
  sessionId: string | null;
  scope: string;
  resource: string;
  authTime: Date;
  amr: AuthMethod[];
}

/** Starts a family with its first token; returns the family id and the token. */
export async function startFamily(tx: Tx, now: Date, ttlSeconds: number, input: NewFamily): Promise<{ familyId: string; token: string }> {
  const familyId = newId('fam');
  const expiresAt = new Date(now.getTime() + ttlSeconds * 1000);
  await exec(tx.insert(refreshTokenFamilies).values({ id: familyId, ...input, createdAt: now, expiresAt }));
  const token = newRefreshToken();
  await storeRefreshToken(tx, familyId, token, now, expiresAt);
  return { familyId, token };
}
