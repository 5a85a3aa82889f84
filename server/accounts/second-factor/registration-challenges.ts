/**
 * Challenges of passkey registrations started from the account page, one per session, in memory
 * for 5 minutes (like the pending sign-ins, pending.ts): the answer must come from the session
 * that asked, and each challenge is good once.
 */
import type { AppContext } from '../../context.js';
import { CHALLENGE_TTL_MS } from './pending.js';

const MAX_ENTRIES = 10_000;

export class RegistrationChallenges {
  private readonly bySession = new Map<string, { challenge: string; expiresAt: number }>();

  remember(sessionId: string, challenge: string, now: number): void {
    this.bySession.delete(sessionId);
    this.bySession.set(sessionId, { challenge, expiresAt: now + CHALLENGE_TTL_MS });
    for (const [id, entry] of this.bySession) {
      if (this.bySession.size <= MAX_ENTRIES && entry.expiresAt > now) break;
      this.bySession.delete(id);
    }
  }

  /** The session's challenge, spent; undefined when none is live. */
  take(sessionId: string, now: number): string | undefined {
    const entry = this.bySession.get(sessionId);
    this.bySession.delete(sessionId);
    return entry && entry.expiresAt > now ? entry.challenge : undefined;
  }
}

const stores = new WeakMap<AppContext, RegistrationChallenges>();

export function registrationChallenges(ctx: AppContext): RegistrationChallenges {
  let store = stores.get(ctx);
  if (!store) stores.set(ctx, (store = new RegistrationChallenges()));
  return store;
}
