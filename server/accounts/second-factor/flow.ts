/**
 * The second step of a sign-in and passkey-first sign-in (spec second-factor.md, "Sign-in"):
 * checking a TOTP code, a recovery code or a passkey against the pending sign-in of the request's
 * `gatehouse_mfa` cookie (pending.ts), enrolling a first factor there when the application
 * requires one, and completing the sign-in: a session (or, for a step-up, the same session raised
 * to multi-factor) with the `amr` of both steps and the realms marked.
 *
 * Abuse limits: without a live pending sign-in started on this device every step answers 401
 * `second_factor_expired`; a wrong code is 401 `invalid_code`, and the 5th wrong one voids the
 * pending sign-in and answers 429 `rate_limited` with `Retry-After` (as does every later try with
 * it); the person's back-off (back-off.ts) locks their second step across pending sign-ins.
 * Codes are never logged: they travel only in bodies, and no log line here carries them.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import type { SignInMethod } from '../../plugin-api/metrics.js';
import type { Application, AuthMethod, Person } from '../../db/schema.js';
import { findApplication } from '../../applications/lookup.js';
import { Problem } from '../../http/problem.js';
import { ACCOUNT_REALM, markRealm, readSession, realmOf, setSessionAmr } from '../session.js';
import { applicationForEmailSignIn, type ClientInfo } from '../people.js';
import { signInPerson, type SignedIn } from '../sign-in.js';
import { lockDuration, LOCK_AFTER_FAILURES } from '../sign-in-back-off.js';
import { hasSecondFactor, methodsOf, passkeyMethod, withSecondFactor } from './factors.js';
import { checkSecondStepLock, clearSecondStepBackOff, secondStepFailed, secondStepLocked, secondStepLockedUntil } from './back-off.js';
import {
  PENDING_MAX_FAILURES,
  claimPending,
  clearMfaCookie,
  countPendingFailure,
  findPending,
  redirectToSecondStep,
  rememberSignInChallenge,
  secondFactorExpired,
  setPendingChallenge,
  startPending,
  takePendingChallenge,
  takeSignInChallenge,
  type PendingSignIn,
} from './pending.js';
import { recoveryCodeHash } from './recovery.js';
import { secretBox } from './secret-box.js';
import { addPasskey, checkPasskeyRoom, checkTotp, confirmTotp, startTotpEnrolment } from './service.js';
import { passkeyByCredentialId, passkeysOf, personOf, recordPasskeyUse, spendRecoveryCode } from './store.js';
import {
  authenticationOptions,
  challengeOf,
  credentialIdOf,
  passkeyInvalid,
  passkeyNotRecognised,
  registrationOptions,
  verifyAssertion,
  verifyRegistration,
} from './webauthn.js';
import { transaction } from '../../db/store.js';

/** A finished sign-in, and where a hosted flow goes next. */
export interface Completed {
  signedIn: SignedIn;
  next: string;
  /** Whether to link the external identity waiting in this browser before going to `next`. */
  finishLink: boolean;
  /** Shown once when the sign-in enrolled a first factor. */
  recoveryCodes?: string[] | undefined;
}

interface Found {
  key: string;
  entry: PendingSignIn;
  person: Person;
  /** Whether the person has failed second steps counted (cleared on success). */
  counted?: boolean;
}

const invalidSecondFactorCode = () => new Problem(401, 'invalid_code', 'The code is not correct.', undefined, { 'www-authenticate': 'Cookie' });

/** The request's pending sign-in and its person, or 401 `second_factor_expired`. */
export async function pendingOf(ctx: AppContext, request: FastifyRequest): Promise<Found> {
  const found = await findPending(ctx, request);
  const person = found && await personOf(ctx.db, found.entry.personId);
  if (!found || !person) throw secondFactorExpired();
  return { ...found, person };
}

/** 429 for a pending sign-in voided by failures, or while the person's second step is locked. */
async function guard(ctx: AppContext, found: Found, method: SignInMethod): Promise<void> {
  try {
    if (found.entry.failures >= PENDING_MAX_FAILURES) {
      const until = await secondStepLockedUntil(ctx, found.person.id);
      throw secondStepLocked(until ? (until - ctx.clock.now().getTime()) / 1000 : lockDuration(LOCK_AFTER_FAILURES) / 1000);
    }
    found.counted = await checkSecondStepLock(ctx, found.person.id);
  } catch (locked) {
    ctx.metrics.signIn('locked', method);
    throw locked;
  }
}

/** Counts a wrong second step: 401 `invalid_code`, or 429 once this pending sign-in had its 5. */
async function failed(ctx: AppContext, found: Found, method: SignInMethod, problem: Problem = invalidSecondFactorCode()): Promise<never> {
  ctx.metrics.signIn('failure', method);
  // Counted in the row (not in this copy of it): every instance sees the same count.
  found.entry.failures = Math.max(await countPendingFailure(ctx.db, found.key), found.entry.failures + 1);
  found.counted = true;
  const lockedUntil = await secondStepFailed(ctx, found.person.id);
  if (found.entry.failures >= PENDING_MAX_FAILURES) {
    const retryMs = (lockedUntil ?? ctx.clock.now().getTime() + lockDuration(LOCK_AFTER_FAILURES)) - ctx.clock.now().getTime();
    throw secondStepLocked(retryMs / 1000);
  }
  throw problem;
}

/**
 * Completes the pending sign-in with the second step's method: a new (or kept) session for a
 * sign-in, the same session raised to multi-factor for a step-up.
 */
async function complete(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  found: Found,
  second: AuthMethod,
  method: SignInMethod,
  client: ClientInfo,
): Promise<Completed> {
  const { entry, person } = found;
  const now = ctx.clock.now();
  const app = entry.applicationId ? await findApplication(ctx.db, entry.applicationId) : undefined;
  const amr = withSecondFactor(entry.firstFactor, second);
  let signedIn: SignedIn;
  if (entry.stepUpSessionId) {
    const current = await readSession(ctx, request);
    if (current?.session.id !== entry.stepUpSessionId || current.person.id !== person.id) throw secondFactorExpired();
    await transaction(ctx.db, async () => {
      if (!await claimPending(ctx.db, found.key, now)) throw secondFactorExpired();
      await setSessionAmr(ctx.db, current.session.id, amr);
      await markRealm(ctx.db, current.session.id, ACCOUNT_REALM, now);
      if (app) await markRealm(ctx.db, current.session.id, realmOf(app), now);
    });
    signedIn = { person, sessionId: current.session.id, token: undefined };
  } else {
    const started = await transaction(ctx.db, async () => {
      // Single use across instances: only the one whose DELETE removed the row goes on.
      if (!await claimPending(ctx.db, found.key, now)) throw secondFactorExpired();
      return signInPerson(ctx, now, person, app, client, amr);
    });
    signedIn = { person, ...started };
    if (app) ctx.wakeWebhooks();
  }
  if (found.counted !== false) await clearSecondStepBackOff(ctx.db, person.id);
  ctx.metrics.signIn('success', method);
  clearMfaCookie(reply, ctx.config);
  return { signedIn, next: entry.next, finishLink: entry.finishLink };
}

// --- The second step ---------------------------------------------------------------------------

export async function totpStep(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, code: string, client: ClientInfo): Promise<Completed> {
  const found = await pendingOf(ctx, request);
  await guard(ctx, found, 'totp');
  if (!await checkTotp(ctx, found.person.id, code)) await failed(ctx, found, 'totp');
  return complete(ctx, request, reply, found, 'otp', 'totp', client);
}

export async function recoveryCodeStep(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, code: string, client: ClientInfo): Promise<Completed> {
  const found = await pendingOf(ctx, request);
  await guard(ctx, found, 'recovery_code');
  const hash = recoveryCodeHash(secretBox(ctx), code);
  if (!hash || !await spendRecoveryCode(ctx.db, found.person.id, hash, ctx.clock.now())) await failed(ctx, found, 'recovery_code');
  // RFC 8176 has no value of its own for a one-time recovery code; `otp` is the closest.
  return complete(ctx, request, reply, found, 'otp', 'recovery_code', client);
}

/** WebAuthn request options listing the person's passkeys; the challenge is kept with the pending sign-in. */
export async function passkeyStepOptions(ctx: AppContext, request: FastifyRequest) {
  const found = await pendingOf(ctx, request);
  await guard(ctx, found, 'passkey');
  const keys = await passkeysOf(ctx.db, found.person.id);
  if (keys.length === 0) throw passkeyInvalid('You have no passkey yet: use another way to confirm it is you.');
  const options = await authenticationOptions(ctx.config, keys);
  await setPendingChallenge(ctx.db, found.key, options.challenge);
  return options;
}

export async function passkeyStep(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, response: unknown, client: ClientInfo): Promise<Completed> {
  const found = await pendingOf(ctx, request);
  await guard(ctx, found, 'passkey');
  const challenge = challengeOf(response);
  // One answer per challenge, on whichever instance it arrives.
  if (!challenge || !await takePendingChallenge(ctx.db, found.key, challenge)) throw passkeyInvalid('This passkey answer is not for the current request; try again.');
  const credentialId = credentialIdOf(response);
  const passkey = credentialId ? await passkeyByCredentialId(ctx.db, credentialId) : undefined;
  if (!passkey || passkey.personId !== found.person.id) return failed(ctx, found, 'passkey', passkeyNotRecognised());
  const use = await usePasskey(ctx, passkey, response, challenge);
  if (!use) return failed(ctx, found, 'passkey', new Problem(401, 'passkey_invalid', 'The passkey answer did not verify.'));
  // The pending sign-in may have ended while the signature was checked (another tab finished it):
  // complete() claims it, or answers second_factor_expired.
  return complete(ctx, request, reply, found, passkeyMethod(passkey), 'passkey', client);
}

/** Verifies an assertion and records the counter; false when a concurrent use of the same key won. */
async function usePasskey(ctx: AppContext, passkey: NonNullable<Awaited<ReturnType<typeof passkeyByCredentialId>>>, response: unknown, challenge: string): Promise<boolean> {
  const checked = await verifyAssertion(ctx.config, passkey, response, challenge);
  return recordPasskeyUse(ctx.db, passkey, { ...checked, now: ctx.clock.now() });
}

// --- Enrolment at sign-in (the application requires a second factor the person lacks) ----------

async function enrolling(ctx: AppContext, request: FastifyRequest, method: SignInMethod): Promise<Found> {
  const found = await pendingOf(ctx, request);
  await guard(ctx, found, method);
  if (await hasSecondFactor(ctx.db, found.person.id)) {
    throw new Problem(409, 'second_factor_enrolled', 'You already have a second factor: use it to finish signing in.');
  }
  return found;
}

export async function enrolTotpStart(ctx: AppContext, request: FastifyRequest) {
  const found = await enrolling(ctx, request, 'totp');
  return startTotpEnrolment(ctx, found.person, undefined);
}

export async function enrolTotpConfirm(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, code: string, client: ClientInfo): Promise<Completed> {
  const found = await enrolling(ctx, request, 'totp');
  let codes: string[] | undefined;
  try {
    codes = (await confirmTotp(ctx, found.person, code, `person:${found.person.id}`)).recoveryCodes;
  } catch (error) {
    if (error instanceof Problem && error.code === 'invalid_code') await failed(ctx, found, 'totp');
    throw error;
  }
  return { ...await complete(ctx, request, reply, found, 'otp', 'totp', client), recoveryCodes: codes };
}

export async function enrolPasskeyOptions(ctx: AppContext, request: FastifyRequest) {
  const found = await enrolling(ctx, request, 'passkey');
  const options = await registrationOptions(ctx.config, found.person, await checkPasskeyRoom(ctx, found.person.id));
  await setPendingChallenge(ctx.db, found.key, options.challenge);
  return options;
}

export async function enrolPasskey(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, name: string, response: unknown, client: ClientInfo): Promise<Completed> {
  const found = await enrolling(ctx, request, 'passkey');
  const answered = challengeOf(response);
  const challenge = await takePendingChallenge(ctx.db, found.key, answered) ? answered : undefined;
  const verified = await verifyRegistration(ctx.config, found.person.id, name, response, challenge);
  const { passkey, recoveryCodes } = await addPasskey(ctx, found.person, verified, `person:${found.person.id}`);
  return { ...await complete(ctx, request, reply, found, passkeyMethod(passkey), 'passkey', client), recoveryCodes };
}

// --- Step-up and passkey-first sign-in ---------------------------------------------------------

/**
 * Starts a step-up for a signed-in, password-only session (authorize with `acr_values` or an
 * application that requires MFA): the pending sign-in raises this session, with no password asked
 * again. Returns the cookie's token.
 */
export async function startStepUp(ctx: AppContext, request: FastifyRequest, session: { id: string; amr: AuthMethod[] }, person: Person, app: Application, next: string): Promise<string> {
  return startPending(ctx, request, {
    personId: person.id,
    applicationId: app.id,
    firstFactor: session.amr.length ? session.amr : ['pwd'],
    stepUpSessionId: session.id,
    next,
    finishLink: false,
  });
}

/**
 * Sends a signed-in, password-only browser through the second step (or enrolment when the person
 * has none) for `app`, coming back to `next` (authorize, the device page) once done.
 */
export async function redirectToStepUp(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  found: { session: { id: string; amr: AuthMethod[] }; person: Person },
  app: Application,
  next: string,
) {
  const token = await startStepUp(ctx, request, found.session, found.person, app, next);
  return redirectToSecondStep(reply, ctx.config, { pendingToken: token, secondFactor: { methods: await methodsOf(ctx.db, found.person.id) } });
}

/** Request options for passkey-first sign-in (no `allowCredentials`: the browser offers its passkeys). */
export async function passkeyFirstOptions(ctx: AppContext) {
  const options = await authenticationOptions(ctx.config, undefined);
  await rememberSignInChallenge(ctx, options.challenge);
  return options;
}

/**
 * Passkey-first sign-in: a passkey with user verification is a complete multi-factor sign-in on
 * its own. 401 `passkey_not_recognised` for an unknown or removed credential. With an
 * `applicationId`, the application must allow Gatehouse's own credentials (`email`), as for a password.
 */
export async function passkeyFirstSignIn(ctx: AppContext, response: unknown, applicationId: string | undefined, client: ClientInfo): Promise<SignedIn> {
  const app = applicationId === undefined ? undefined : await applicationForEmailSignIn(ctx, applicationId);
  const challenge = challengeOf(response);
  if (!challenge || !await takeSignInChallenge(ctx, challenge)) {
    throw passkeyInvalid('This passkey answer is not for a sign-in started here, or it expired; try again.');
  }
  const credentialId = credentialIdOf(response);
  const passkey = credentialId ? await passkeyByCredentialId(ctx.db, credentialId) : undefined;
  const person = passkey && await personOf(ctx.db, passkey.personId);
  if (!passkey || !person || !(await usePasskey(ctx, passkey, response, challenge))) {
    ctx.metrics.signIn('failure', 'passkey');
    throw !passkey || !person ? passkeyNotRecognised() : new Problem(401, 'passkey_invalid', 'The passkey answer did not verify.');
  }
  const now = ctx.clock.now();
  const started = await transaction(ctx.db, async () => signInPerson(ctx, now, person, app, client, [passkeyMethod(passkey), 'mfa']));
  if (app) ctx.wakeWebhooks();
  ctx.metrics.signIn('success', 'passkey');
  return { person, ...started };
}
