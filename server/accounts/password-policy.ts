/**
 * The password policy (spec administrators-and-people.md, "Password policy"): a minimum length
 * (8–128, default 10), a minimum zxcvbn score (0–4, default 2) and the common-password list
 * (`rejectBreached`, default on; the list ships with Gatehouse, no network). Every path that sets
 * a password calls `checkNewPassword` — sign-up, reset, invitation acceptance, the account page,
 * an administrator creating a person, first-run set-up — and a refusal is 400 `weak_password`
 * with the reason in words.
 *
 * The policy lives in `meta` (`password_policy`), read at most every POLICY_FRESH_MS per database
 * handle (so another instance's change reaches this one within seconds) and at once after a
 * change made here. The length checks run first and cost nothing; the list and zxcvbn run in
 * their worker (password-strength.ts).
 */
import type { Db, Tx } from '../db/client.js';
import { readMeta, writeMeta } from '../db/meta.js';
import { Problem } from '../http/problem.js';
import { PASSWORD_MAX_LENGTH } from './passwords.js';
import { estimateStrength } from './password-strength.js';

export interface PasswordPolicy {
  minLength: number;
  minStrength: 0 | 1 | 2 | 3 | 4;
  rejectBreached: boolean;
}

export const DEFAULT_PASSWORD_POLICY: PasswordPolicy = { minLength: 10, minStrength: 2, rejectBreached: true };
export const POLICY_MIN_LENGTH = 8;
export const POLICY_MAX_LENGTH = 128;
const KEY = 'password_policy';
const POLICY_FRESH_MS = 5_000;

/** zxcvbn's scores in words (the panel and the hosted pages use the same). */
export const STRENGTH_WORDS = ['very weak', 'weak', 'fair', 'strong', 'very strong'] as const;

const cached = new WeakMap<object, { policy: PasswordPolicy; at: number }>();

function normalised(stored: Partial<PasswordPolicy> | undefined): PasswordPolicy {
  return { ...DEFAULT_PASSWORD_POLICY, ...(stored ?? {}) };
}

export async function passwordPolicy(db: Db | Tx): Promise<PasswordPolicy> {
  const known = cached.get(db);
  if (known && performance.now() - known.at < POLICY_FRESH_MS) return known.policy;
  const policy = normalised(await readMeta<Partial<PasswordPolicy>>(db, KEY));
  cached.set(db, { policy, at: performance.now() });
  return policy;
}

/**
 * The policy as last read (the default before any read), for page hints that must not wait; a
 * stale one is read again in the background for the next page.
 */
export function knownPasswordPolicy(db: Db): PasswordPolicy {
  const known = cached.get(db);
  if (!known || performance.now() - known.at >= POLICY_FRESH_MS) void passwordPolicy(db).catch(() => undefined);
  return known?.policy ?? DEFAULT_PASSWORD_POLICY;
}

export async function writePasswordPolicy(db: Db | Tx, policy: PasswordPolicy, now: Date): Promise<void> {
  await writeMeta(db, KEY, policy, now);
  cached.set(db, { policy, at: performance.now() });
}

/**
 * Drops the remembered policy, so the next read goes to the database: after a transaction that
 * wrote one was rolled back (a configuration dry run: config-as-code/apply.ts).
 */
export function forgetPasswordPolicy(db: Db | Tx): void {
  cached.delete(db);
}

/** The hint shown beside every new-password field, in words. */
export function policyHint(policy: PasswordPolicy): string {
  const parts = [`At least ${policy.minLength} characters`];
  if (policy.minStrength > 0) parts.push(`rated at least “${STRENGTH_WORDS[policy.minStrength]}”`);
  if (policy.rejectBreached) parts.push('not one of the most common passwords');
  return `${parts.join(', ')}. A few unrelated words work well.`;
}

export const weakPassword = (reason: string, path: string) =>
  new Problem(400, 'weak_password', reason, [{ path, message: reason }]);

/**
 * Refuses a new password that the policy does not allow: 400 `weak_password` naming the reason.
 * `userInputs`: the person's e-mail and name, which zxcvbn counts as easy to guess.
 */
export async function checkNewPassword(db: Db | Tx, password: string, options: { path?: string; userInputs?: (string | null | undefined)[] } = {}): Promise<void> {
  const path = options.path ?? 'body.password';
  const policy = await passwordPolicy(db);
  const length = [...password].length;
  if (length < policy.minLength) throw weakPassword(`The password is too short: use at least ${policy.minLength} characters.`, path);
  if (length > PASSWORD_MAX_LENGTH) throw weakPassword(`The password is too long: use at most ${PASSWORD_MAX_LENGTH} characters.`, path);
  if (!policy.rejectBreached && policy.minStrength === 0) return;
  const estimate = await estimateStrength(password, (options.userInputs ?? []).filter((x): x is string => typeof x === 'string' && x.length > 0));
  if (policy.rejectBreached && estimate.common) {
    throw weakPassword('This password is one of the most common passwords, which attackers try first: choose another.', path);
  }
  if (estimate.score < policy.minStrength) {
    const advice = [estimate.warning, ...estimate.suggestions].filter(Boolean).join(' ');
    throw weakPassword(
      `This password is too easy to guess: it is rated “${STRENGTH_WORDS[estimate.score]}”, and this server asks for at least “${STRENGTH_WORDS[policy.minStrength]}”.${advice ? ` ${advice}` : ''}`,
      path,
    );
  }
}
