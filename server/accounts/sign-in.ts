/**
 * E-mail and password sign-in (DESIGN §4.8, §5). Wrong e-mail and wrong password get the same
 * answer in about the same time, and so does the back-off: it is kept per e-mail address
 * (accounts/sign-in-back-off.ts), so an address without an account locks exactly like one with an
 * account, and while locked neither runs argon2.
 *
 * A right password is the whole sign-in only for a person without a second factor signing in to
 * an application that does not require one. Otherwise it starts a pending sign-in that waits for
 * the second step (spec second-factor.md, "Sign-in"; second-factor/pending.ts): no session yet.
 */
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import type { Db } from '../db/client.js';
import type { Application, AuthMethod, Person } from '../db/schema.js';
import type { Config } from '../config.js';
import { Problem } from '../http/problem.js';
import { findMembership, membershipEventData, touchMembership } from '../members/create.js';
import { recordEvent } from '../webhooks/outbox.js';
import { countFailedSignIn, countSignIn } from '../activity/record.js';
import { verifyPassword } from './passwords.js';
import { applicationForEmailSignIn, findPersonByEmail, findPersonByUsername, startSession, type ClientInfo, type SessionHost } from './people.js';
import { claimPasswordCheck, passwordCheckFailed, passwordCheckPassed, passwordCheckUncounted } from './sign-in-back-off.js';
import { methodsOf, mfaRequired, type SecondFactorMethod } from './second-factor/factors.js';
import { startPending } from './second-factor/pending.js';
import { transaction } from '../db/store.js';

export { LOCK_AFTER_FAILURES, lockDuration, SignInLocked } from './sign-in-back-off.js';

export interface SignInInput {
  email: string;
  password: string;
  applicationId?: string | undefined;
}

export interface SignedIn {
  person: Person;
  sessionId: string;
  /** Set when a new session was created and its cookie must be sent. */
  token: string | undefined;
}

/** A right first factor that waits for the second step: the `gatehouse_mfa` cookie's token. */
export interface SecondFactorNeeded {
  person: Person;
  secondFactor: { methods: SecondFactorMethod[] };
  pendingToken: string;
}

export type SignInOutcome = SignedIn | SecondFactorNeeded;

export const needsSecondFactor = (outcome: SignInOutcome): outcome is SecondFactorNeeded => 'secondFactor' in outcome;

/** Where a hosted flow goes after the second step, and what else it finishes then. */
export interface HostedNext {
  next: string;
  /**
   * Whether the second step, once done, also links the external identity waiting in this browser
   * (accounts/providers/link-on-sign-in.ts). Data, not a callback: the pending sign-in is stored
   * in the database and may be finished by another instance.
   */
  finishLink?: boolean | undefined;
}

export const invalidCredentials = () =>
  new Problem(401, 'invalid_credentials', 'The e-mail address (or username) or password is not correct.');

/**
 * A wrong password (or unknown address: the same answer), with what the back-off made of it, so a
 * page can warn on the attempt before the lock and say how long a lock lasts. The wire answer is
 * `invalidCredentials`' exactly.
 */
export class WrongPassword extends Problem {
  constructor(readonly failures: number, readonly lockedUntil: Date | undefined) {
    const plain = invalidCredentials();
    super(plain.status, plain.code, plain.detail);
  }
}

/** A username or an e-mail address: what the hosted page's one field takes. */
export type LoginKind = 'email' | 'username' | 'either';

export async function signInWithEmail(
  ctx: AppContext,
  input: SignInInput,
  client: ClientInfo,
  request: FastifyRequest,
  hosted: HostedNext = { next: '/account' },
): Promise<SignInOutcome> {
  return signInWithPassword(ctx, { login: input.email, password: input.password, applicationId: input.applicationId }, 'email', client, request, hosted);
}

/**
 * Password sign-in by e-mail address or username (spec directory-sources.md, "Signing in"): a
 * person a directory source keeps is checked by that source (plugin-api/registries.ts `signInSources`), a
 * login nobody has may be found in a source, everyone else against their stored hash. A source
 * that cannot be reached answers 503 `directory_unavailable`, and the attempt is not counted.
 */
export async function signInWithPassword(
  ctx: AppContext,
  input: { login: string; password: string; applicationId?: string | undefined },
  kind: LoginKind,
  client: ClientInfo,
  request: FastifyRequest,
  hosted: HostedNext = { next: '/account' },
): Promise<SignInOutcome> {
  const app = input.applicationId === undefined ? undefined : await applicationForEmailSignIn(ctx, input.applicationId);
  const login = input.login.trim();
  const byEmail = kind === 'email' || (kind === 'either' && login.includes('@'));
  let person = byEmail ? await findPersonByEmail(ctx.db, login) : await findPersonByUsername(ctx.db, login);
  // Claimed for every login, known or not, before the password is checked; a username is counted
  // under its person's address (so both ways in share one count), an unknown one under itself.
  let check: Awaited<ReturnType<typeof claimPasswordCheck>>;
  try {
    check = await claimPasswordCheck(ctx, person?.email ?? (byEmail ? login : `username:${login.toLowerCase()}`), { deviceCookie: client.deviceCookie, sessionToken: client.currentToken });
  } catch (locked) {
    await countFailedSignIn(ctx.db, ctx.clock.now(), app?.id);
    ctx.metrics.signIn('locked', 'password');
    throw locked;
  }
  let ok: boolean;
  try {
    // The sign-in sources plugins registered (plugin-api/registries.ts `signInSources`: a directory source binds as the person).
    const sources = ctx.registries.signInSources.all;
    const owner = person ? sources.find((s) => s.owns(person!)) : undefined;
    if (person && owner) ok = (await owner.verify(person, input.password)) === 'valid';
    else if (person) ok = await verifyPassword(person.passwordHash, input.password);
    else {
      ok = false;
      for (const source of sources) {
        const found = await source.discover?.(login, input.password);
        if (found) {
          person = found;
          ok = true;
          break;
        }
      }
      // The same time as a wrong password for a login nobody has.
      if (!ok) await verifyPassword(undefined, input.password);
    }
  } catch (error) {
    // The source could not answer: not a guess, so not counted.
    await passwordCheckUncounted(ctx.db, check);
    throw error;
  }
  const now = ctx.clock.now();
  if (!person || !ok) {
    await passwordCheckFailed(ctx, person, check, client.log);
    await countFailedSignIn(ctx.db, now, app?.id);
    ctx.metrics.signIn('failure', 'password');
    throw new WrongPassword(check.failures, check.lockedUntil);
  }
  const signedIn = person;
  const pending = await secondStepFor(ctx, request, signedIn, app, ['pwd'], hosted);
  if (pending) {
    await passwordCheckPassed(ctx.db, check);
    ctx.metrics.signIn('second_factor_required', 'password');
    return pending;
  }
  const result = await transaction(ctx.db, async () => {
    await passwordCheckPassed(ctx.db, check);
    return signInPerson(ctx, now, signedIn, app, client, ['pwd']);
  });
  if (app) ctx.wakeWebhooks();
  ctx.metrics.signIn('success', 'password');
  return { person: signedIn, ...result };
}

/**
 * After a right first factor: a pending sign-in when the person has a second factor or the
 * application requires one (an empty `methods` list then means "enrol one first"), else nothing.
 */
export async function secondStepFor(
  ctx: AppContext,
  request: FastifyRequest,
  person: Person,
  app: Application | undefined,
  firstFactor: AuthMethod[],
  hosted: HostedNext,
): Promise<SecondFactorNeeded | undefined> {
  const methods = await methodsOf(ctx.db, person.id);
  if (methods.length === 0 && !mfaRequired(app)) return undefined;
  const pendingToken = await startPending(ctx, request, {
    personId: person.id,
    applicationId: app?.id ?? null,
    firstFactor,
    stepUpSessionId: null,
    next: hosted.next,
    finishLink: hosted.finishLink ?? false,
  });
  return { person, secondFactor: { methods }, pendingToken };
}

/**
 * Signs an authenticated person in on this browser (any method: password, external provider,
 * passkey, a completed second step): starts or keeps the session, records `amr`, marks the
 * application's realm, and for an active member updates `lastActiveAt` and emits
 * `membership.signed_in`. Runs inside the caller's transaction, opened on `db` (its statements are
 * prepared there, db/prepared.ts). The caller wakes the webhook worker.
 */
export async function signInPerson(
  ctx: SessionHost,
  now: Date,
  person: Person,
  app: Application | undefined,
  client: ClientInfo,
  amr: AuthMethod[],
) {
  const { db } = ctx;
  const started = await startSession(ctx, now, person, app, client, amr);
  const membership = app ? await findMembership(db, app.id, person.id) : undefined;
  // A suspended member signs in to Gatehouse (the account pages) but not to the application.
  const member = app && membership?.status === 'active' ? membership : undefined;
  await countSignIn(db, now, member && app?.id);
  if (app && member) {
    await touchMembership(db, member.id, now);
    await recordEvent(db, now, app.id, 'membership.signed_in', membershipEventData(member, person));
  }
  return started;
}
