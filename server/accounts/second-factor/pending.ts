/**
 * Sign-ins waiting for their second step (spec second-factor.md, "Sign-in"), and WebAuthn
 * challenges waiting for their answer, in the database (tables `pending_sign_ins` and
 * `webauthn_challenges`) so that any instance sharing it can take the next step: behind a load
 * balancer without sticky sessions the second step often reaches another instance than the
 * password did. Each entry lives minutes; expired rows are swept (data-lifecycle/retention-rules.ts).
 *
 * A pending sign-in is found by the SHA-256 of the random token in its `gatehouse_mfa` cookie
 * (HttpOnly, `__Host-` under HTTPS, 5 minutes) and is bound to the person and to the device: the
 * browser's User-Agent must be the one that started it. It allows 5 wrong second steps; then it is
 * void (the person's own back-off, back-off.ts, also counts them across pending sign-ins).
 *
 * Single use across instances: completing a pending sign-in deletes its row with DELETE ...
 * RETURNING, and spending a WebAuthn challenge clears or deletes it conditionally, so of two
 * instances answering at once exactly one sees the row. Only hashes of what the browser carries
 * (the cookie's token, challenges) are stored.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { and, eq, gt, isNull, sql } from 'drizzle-orm';
import type { AppContext } from '../../context.js';
import type { Config } from '../../config.js';
import type { Db } from '../../db/client.js';
import { pendingSignIns as pendingTable, webauthnChallenges } from '../../db/schema.js';
import { exec, one } from '../../db/store.js';
import { unauthorized } from '../../http/problem.js';
import { randomToken, sha256 } from '../../util/crypto.js';

export const PENDING_TTL_MS = 5 * 60_000;
export const PENDING_MAX_FAILURES = 5;
export const CHALLENGE_TTL_MS = 5 * 60_000;
export const MFA_COOKIE = 'gatehouse_mfa';

/**
 * A pending sign-in as the second step needs it: the person; the application (null: Gatehouse's
 * own pages); the first factor's `amr` (`pwd`, `fed`), or the session's own for a step-up; the
 * session a step-up raises to multi-factor instead of starting one; where the hosted flow goes
 * once done (`next`), and whether it first links the external identity waiting in this browser
 * (`finishLink`, accounts/providers/link-on-sign-in.ts); the wrong second steps so far.
 */
export type PendingSignIn = Pick<
  typeof pendingTable.$inferSelect,
  'personId' | 'applicationId' | 'firstFactor' | 'stepUpSessionId' | 'next' | 'finishLink' | 'failures'
>;

/** The columns read back (the entry, and the device it is bound to). */
const pendingColumns = {
  personId: pendingTable.personId,
  applicationId: pendingTable.applicationId,
  firstFactor: pendingTable.firstFactor,
  stepUpSessionId: pendingTable.stepUpSessionId,
  next: pendingTable.next,
  finishLink: pendingTable.finishLink,
  failures: pendingTable.failures,
  deviceHash: pendingTable.deviceHash,
};

const deviceOf = (request: FastifyRequest) => sha256(String(request.headers['user-agent'] ?? ''));

/** Starts a pending sign-in for this browser; returns the cookie's token. */
export async function startPending(ctx: AppContext, request: FastifyRequest, entry: Omit<PendingSignIn, 'failures'>): Promise<string> {
  const token = randomToken();
  const now = ctx.clock.now();
  await exec(ctx.db.insert(pendingTable).values({
    ...entry,
    tokenHash: sha256(token),
    deviceHash: deviceOf(request),
    createdAt: now,
    expiresAt: new Date(now.getTime() + PENDING_TTL_MS),
  }));
  return token;
}

/** The pending sign-in of the request's cookie, if live and started on this device. */
export async function findPending(ctx: AppContext, request: FastifyRequest): Promise<{ key: string; entry: PendingSignIn } | undefined> {
  const token = request.cookies[mfaCookieName(ctx.config)];
  if (!token || token.length > 100) return undefined;
  const key = sha256(token);
  const row = await one(ctx.db.select(pendingColumns).from(pendingTable).where(and(eq(pendingTable.tokenHash, key), gt(pendingTable.expiresAt, ctx.clock.now()))));
  if (!row || row.deviceHash !== deviceOf(request)) return undefined;
  const { deviceHash: _device, ...entry } = row;
  return { key, entry };
}

/** Counts a wrong second step against the pending sign-in; its failures so far (0: it is gone). */
export async function countPendingFailure(db: Db, key: string): Promise<number> {
  const row = await one(db.update(pendingTable).set({ failures: sql`${pendingTable.failures} + 1` })
    .where(eq(pendingTable.tokenHash, key)).returning({ failures: pendingTable.failures }));
  return row?.failures ?? 0;
}

/**
 * Ends a live pending sign-in, once: true for the one caller whose DELETE removed the row (run it
 * in the transaction that completes the sign-in, so a failure there leaves it pending).
 */
export async function claimPending(db: Db, key: string, now: Date): Promise<boolean> {
  const row = await one(db.delete(pendingTable).where(and(eq(pendingTable.tokenHash, key), gt(pendingTable.expiresAt, now))).returning({ key: pendingTable.tokenHash }));
  return row !== undefined;
}

/** Keeps the WebAuthn challenge just handed out for this pending sign-in (replacing any earlier one). */
export async function setPendingChallenge(db: Db, key: string, challenge: string): Promise<void> {
  await exec(db.update(pendingTable).set({ challengeHash: sha256(challenge) }).where(eq(pendingTable.tokenHash, key)));
}

/** Spends the pending sign-in's challenge: true once, for the answer to the last one handed out. */
export async function takePendingChallenge(db: Db, key: string, challenge: string | undefined): Promise<boolean> {
  if (!challenge || challenge.length > 200) return false;
  const row = await one(db.update(pendingTable).set({ challengeHash: null })
    .where(and(eq(pendingTable.tokenHash, key), eq(pendingTable.challengeHash, sha256(challenge))))
    .returning({ key: pendingTable.tokenHash }));
  return row !== undefined;
}

/** Remembers a WebAuthn challenge handed out without a pending sign-in (passkey-first sign-in). */
export async function rememberSignInChallenge(ctx: AppContext, challenge: string): Promise<void> {
  const expiresAt = new Date(ctx.clock.now().getTime() + CHALLENGE_TTL_MS);
  await exec(ctx.db.insert(webauthnChallenges).values({ challengeHash: sha256(challenge), sessionId: null, expiresAt }));
}

/** Spends a remembered passkey-first challenge: true once per challenge, within its lifetime. */
export async function takeSignInChallenge(ctx: AppContext, challenge: string | undefined): Promise<boolean> {
  if (!challenge || challenge.length > 200) return false;
  const row = await one(ctx.db.delete(webauthnChallenges)
    .where(and(eq(webauthnChallenges.challengeHash, sha256(challenge)), isNull(webauthnChallenges.sessionId), gt(webauthnChallenges.expiresAt, ctx.clock.now())))
    .returning({ hash: webauthnChallenges.challengeHash }));
  return row !== undefined;
}

export function mfaCookieName(config: Config): string {
  return config.issuer.startsWith('https:') ? `__Host-${MFA_COOKIE}` : MFA_COOKIE;
}

const secure = (config: Config) => config.issuer.startsWith('https:');

export function setMfaCookie(reply: FastifyReply, config: Config, token: string): void {
  reply.setCookie(mfaCookieName(config), token, { path: '/', httpOnly: true, sameSite: 'lax', secure: secure(config), maxAge: PENDING_TTL_MS / 1000 });
}

export function clearMfaCookie(reply: FastifyReply, config: Config): void {
  reply.clearCookie(mfaCookieName(config), { path: '/', httpOnly: true, sameSite: 'lax', secure: secure(config) });
}

export const secondFactorExpired = () =>
  unauthorized('The sign-in waiting for a second factor has expired or was not started on this device; sign in again.', 'second_factor_expired', 'Cookie');

export const SECOND_FACTOR_PAGE = '/sign-in/second-factor';
export const ENROL_PAGE = '/sign-in/enrol';

/** A hosted flow whose first factor was right: on to the second step (or to enrolment). */
export function redirectToSecondStep(reply: FastifyReply, config: Config, outcome: { pendingToken: string; secondFactor: { methods: unknown[] } }) {
  setMfaCookie(reply, config, outcome.pendingToken);
  return reply.header('cache-control', 'no-store').redirect(outcome.secondFactor.methods.length ? SECOND_FACTOR_PAGE : ENROL_PAGE, 303);
}
