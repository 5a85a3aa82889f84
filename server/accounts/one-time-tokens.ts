/**
 * Single-use links sent by e-mail (`one_time_tokens`): password reset and e-mail verification.
 * A token is 256 random bits, stored as its SHA-256, valid one hour, and redeemed at most once
 * (an atomic update, so two clicks cannot both pass). Issuing a new link retires the person's
 * earlier unused links of the same purpose.
 */
import { and, desc, eq, gt, isNull } from 'drizzle-orm';
import type { Tx } from '../db/client.js';
import type { AppContext } from '../context.js';
import { oneTimeTokens, people, type Person } from '../db/schema.js';
import { Problem } from '../http/problem.js';
import { randomToken, sha256 } from '../util/crypto.js';
import { exec, one } from '../db/store.js';

export type TokenPurpose = 'password_reset' | 'email_verification';

export const TOKEN_TTL_MS = 60 * 60_000;
/** At most one e-mail per person and purpose per minute: nobody can flood a mailbox through us. */
export const RESEND_INTERVAL_MS = 60_000;

/** Whether a link of this purpose was sent to the person within the last minute. */
export async function sentRecently(tx: Tx, now: Date, personId: string, purpose: TokenPurpose): Promise<boolean> {
  const last = await one(tx
    .select({ createdAt: oneTimeTokens.createdAt })
    .from(oneTimeTokens)
    .where(and(eq(oneTimeTokens.personId, personId), eq(oneTimeTokens.purpose, purpose)))
    .orderBy(desc(oneTimeTokens.createdAt)));
  return last !== undefined && now.getTime() - last.createdAt.getTime() < RESEND_INTERVAL_MS;
}

/** Issues a link token for the person (earlier unused ones of the purpose stop working). */
/** `ttlMs`: how long the link works (an hour unless told; an administrator's welcome link: a week). */
export async function issueToken(tx: Tx, now: Date, personId: string, purpose: TokenPurpose, ttlMs = TOKEN_TTL_MS): Promise<string> {
  const token = randomToken();
  await exec(tx.delete(oneTimeTokens)
    .where(and(eq(oneTimeTokens.personId, personId), eq(oneTimeTokens.purpose, purpose), isNull(oneTimeTokens.usedAt))));
  await exec(tx.insert(oneTimeTokens)
    .values({ tokenHash: sha256(token), personId, purpose, createdAt: now, expiresAt: new Date(now.getTime() + ttlMs) }));
  return token;
}

const linkProblems = {
  invalid: () => new Problem(400, 'token_invalid', 'This link is not valid. Check that you opened the whole link from the e-mail.'),
  used: () => new Problem(410, 'token_used', 'This link was already used. Ask for a new e-mail if you still need one.'),
  expired: () => new Problem(410, 'token_expired', 'This link has expired (links work for one hour). Ask for a new e-mail.'),
};

/** Why a token cannot be redeemed, as a problem: 400 `token_invalid`, 410 `token_used` / `token_expired`. */
async function refusal(tx: Tx, now: Date, token: string, purpose: TokenPurpose): Promise<Problem> {
  const row = await one(tx.select().from(oneTimeTokens).where(eq(oneTimeTokens.tokenHash, sha256(token))));
  if (!row || row.purpose !== purpose) return linkProblems.invalid();
  if (row.usedAt) return linkProblems.used();
  if (row.expiresAt.getTime() <= now.getTime()) return linkProblems.expired();
  return linkProblems.invalid();
}

/** The person a still-usable token belongs to, without using it (the reset form shows first). */
export async function peekToken(tx: Tx, now: Date, token: string, purpose: TokenPurpose): Promise<string> {
  const row = await one(tx
    .select({ personId: oneTimeTokens.personId })
    .from(oneTimeTokens)
    .where(and(eq(oneTimeTokens.tokenHash, sha256(token)), eq(oneTimeTokens.purpose, purpose), isNull(oneTimeTokens.usedAt), gt(oneTimeTokens.expiresAt, now))));
  if (!row) throw await refusal(tx, now, token, purpose);
  return row.personId;
}

/**
 * The person a still-usable link belongs to, without using it: the page a link opens shows their
 * address and asks before anything is spent (a reset form, a verification button). Throws as
 * `peekToken` does.
 */
export async function linkPerson(ctx: AppContext, token: string, purpose: TokenPurpose): Promise<Person> {
  const personId = await peekToken(ctx.db, ctx.clock.now(), token, purpose);
  return (await one(ctx.db.select().from(people).where(eq(people.id, personId))))!;
}

/** Uses the token inside the caller's transaction and returns its person's id; throws when unusable. */
export async function redeemToken(tx: Tx, now: Date, token: string, purpose: TokenPurpose): Promise<string> {
  const row = await one(tx
    .update(oneTimeTokens)
    .set({ usedAt: now })
    .where(and(eq(oneTimeTokens.tokenHash, sha256(token)), eq(oneTimeTokens.purpose, purpose), isNull(oneTimeTokens.usedAt), gt(oneTimeTokens.expiresAt, now)))
    .returning({ personId: oneTimeTokens.personId }));
  if (!row) throw await refusal(tx, now, token, purpose);
  return row.personId;
}
