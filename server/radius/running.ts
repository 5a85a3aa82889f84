/**
 * What the rest of the server knows of the RADIUS listeners without loading them (issue 45,
 * docs/decisions/0369-lazy-feature-code.md): the listener's interface, the one running for an app
 * context (the plugin's routes and overview ask), and the state recorded when RADIUS is off.
 * The listeners themselves (server.ts, with access, sessions, EAP and the limits) are loaded by
 * main.ts with `import()` only when GATEHOUSE_RADIUS=on.
 */
import type { AppContext } from '../context.js';
import { writeMeta } from '../db/meta.js';
import { RADIUS_STATE_KEY, type RadiusState } from './status.js';
import type { TunnelMaterial } from './tls-tunnel.js';

export interface RadiusListener {
  state(): RadiusState & { conversations: number };
  /** Reads the clients again (an application changed). */
  reloadClients(): Promise<void>;
  /** The EAP server certificate from now on (a renewal). */
  setTls(material: TunnelMaterial): void;
  /** Writes the audit rows still queued (they are written every FLUSH_MS anyway). */
  flushAudit(): Promise<void>;
  stop(): Promise<void>;
}

const listeners = new WeakMap<AppContext, RadiusListener>();
export const runningRadius = (ctx: AppContext): RadiusListener | undefined => listeners.get(ctx);
/** Called by the listener itself: as it starts (`listener`) and as it stops (undefined). */
export function setRunningRadius(ctx: AppContext, listener: RadiusListener | undefined, stopping?: RadiusListener): void {
  if (listener) listeners.set(ctx, listener);
  else if (listeners.get(ctx) === stopping) listeners.delete(ctx);
}

/** The state recorded when RADIUS is off, so `gatehouse status` says so. */
export async function recordRadiusOff(ctx: AppContext): Promise<void> {
  await writeMeta(ctx.db, RADIUS_STATE_KEY, { enabled: false, auth: null, accounting: null } satisfies RadiusState, ctx.clock.now());
}
