/**
 * Challenges of passkey registrations started from the account page, one per session, for 5
 * minutes, in the database table `webauthn_challenges` (like the passkey-first sign-in ones,
 * pending.ts) so the answer may reach any instance: it must come from the session that asked, and
 * each challenge is good once (DELETE ... RETURNING). Only the challenge's SHA-256 is stored.
 */
import { and, eq, gt } from 'drizzle-orm';
import type { AppContext } from '../../context.js';
import { webauthnChallenges } from '../../db/schema.js';
import { exec, one } from '../../db/store.js';
import { sha256 } from '../../util/crypto.js';
import { CHALLENGE_TTL_MS } from './pending.js';

/** Keeps the session's registration challenge, replacing any earlier one. */
export async function rememberRegistrationChallenge(ctx: AppContext, sessionId: string, challenge: string): Promise<void> {
  const row = { challengeHash: sha256(challenge), sessionId, expiresAt: new Date(ctx.clock.now().getTime() + CHALLENGE_TTL_MS) };
  await exec(ctx.db.insert(webauthnChallenges).values(row).onConflictDoUpdate({
    target: webauthnChallenges.sessionId,
    set: { challengeHash: row.challengeHash, expiresAt: row.expiresAt },
  }));
}

/**
 * Spends the session's live challenge if `response` answers it: the challenge to verify the
 * registration against, or undefined when none is live or the answer is to another one. Any
 * answer spends the session's challenge (one try per challenge).
 */
export async function takeRegistrationChallenge(ctx: AppContext, sessionId: string, challenge: string | undefined): Promise<string | undefined> {
  const row = await one(ctx.db.delete(webauthnChallenges)
    .where(and(eq(webauthnChallenges.sessionId, sessionId), gt(webauthnChallenges.expiresAt, ctx.clock.now())))
    .returning({ hash: webauthnChallenges.challengeHash }));
  return row && challenge && row.hash === sha256(challenge) ? challenge : undefined;
}
