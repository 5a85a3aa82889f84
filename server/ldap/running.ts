/**
 * What the rest of the server knows of the LDAP directory's listeners without loading them
 * (issue 45, docs/decisions/0369-lazy-feature-code.md): the listener's interface, the one running
 * for an app context (the overview asks: plugin.ts), and the state recorded when LDAP is off.
 * The listeners themselves (server.ts, with the protocol, search and binds) are loaded by main.ts
 * with `import()` only when GATEHOUSE_LDAP=on.
 */
import type { AppContext } from '../context.js';
import { writeMeta } from '../db/meta.js';
import { LDAP_STATE_KEY, type LdapState } from './status.js';

export interface LdapListener {
  state(): LdapState & { connections: number };
  /** The certificate served from now on (LDAPS and StartTLS), after a renewal. */
  setTls(material: { key: string; cert: string }): void;
  stop(): Promise<void>;
}

/** The listener an app's process runs (the overview shows it: plugin.ts). */
const listeners = new WeakMap<AppContext, LdapListener>();
export const runningListener = (ctx: AppContext): LdapListener | undefined => listeners.get(ctx);
/** Called by the listener itself: as it starts (`listener`) and as it stops (undefined). */
export function setRunningListener(ctx: AppContext, listener: LdapListener | undefined): void {
  if (listener) listeners.set(ctx, listener);
  else listeners.delete(ctx);
}

/** The state recorded when LDAP is off, so `gatehouse status` says so. */
export async function recordLdapOff(ctx: AppContext): Promise<void> {
  await writeMeta(ctx.db, LDAP_STATE_KEY, { enabled: false, url: null, ldapsUrl: null, startTls: false, baseDn: null, allowPlain: false } satisfies LdapState, ctx.clock.now());
}
