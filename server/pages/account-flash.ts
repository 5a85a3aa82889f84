/**
 * One-shot messages for the account page's post/redirect/get (issue 25, item 5): a refused form
 * leaves its message (and the values typed into a profile form) here for the browser's session,
 * and the redirect's GET takes it. In memory: a restart loses at most a message a reader is about
 * to see; bounded in size and kept a minute.
 */
import type { AppContext } from '../context.js';

/** Where a refusal is shown: next to the form that caused it. */
export type ErrorTarget = `profile:${string}` | 'sessions' | 'accounts' | 'password' | 'security' | 'verify' | 'general';

export interface AccountFlash {
  error?: { target: ErrorTarget; message: string };
  values?: { applicationId: string; profile: Record<string, string> } | undefined;
}

const KEEP_MS = 60_000;
const MAX_ENTRIES = 10_000;

class FlashStore {
  private readonly entries = new Map<string, { flash: AccountFlash; at: number }>();

  put(sessionId: string, flash: AccountFlash, now: number): void {
    this.entries.delete(sessionId);
    // Oldest first (insertion order): beyond the bound the oldest message goes.
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(sessionId, { flash, at: now });
  }

  take(sessionId: string, now: number): AccountFlash | undefined {
    const entry = this.entries.get(sessionId);
    if (!entry) return undefined;
    this.entries.delete(sessionId);
    return now - entry.at <= KEEP_MS ? entry.flash : undefined;
  }
}

const stores = new WeakMap<AppContext, FlashStore>();

/** The account page's flash store of this app. */
export function accountFlash(ctx: AppContext): FlashStore {
  let store = stores.get(ctx);
  if (!store) stores.set(ctx, (store = new FlashStore()));
  return store;
}
