/**
 * Admin API calls made with a panel access token (spec administrators-and-people.md): a token
 * of ours (the one verification, oauth/access-tokens.ts, through `ctx.readAccessToken`) issued to
 * the built-in panel client for the panel audience, whose session is still live, whose person is
 * active and still an administrator. The answer is the person's grant, which admin-policy.ts
 * weighs against the route.
 *
 * "Ending the session or removing the role ends panel access within a minute": the session and
 * grant check is a primary-key read, remembered per token for GRANT_CACHE_MS (30 s), so a change
 * made by another instance (PostgreSQL mode) takes effect within 30 seconds; one made by this
 * process clears the memory at once (`forgetPanelGrants`). Between two reads a request costs
 * two map look-ups (bench `admin`).
 */
import type { AppContext } from '../context.js';
import type { Db } from '../db/client.js';
import type { AdminRole } from '../db/schema.js';
import type { Grant } from '../http/admin-policy.js';
import { isAccessTokenRevoked } from '../oauth/revoked-access-tokens.js';
import { liveGrant } from './queries.js';
import { PANEL_AUDIENCE, PANEL_CLIENT_ID } from './panel-client.js';

export interface PersonActor {
  type: 'person';
  personId: string;
  role: AdminRole;
  applications: readonly string[];
  /** The Gatehouse session the panel token came from (`sid`). */
  sessionId: string;
}

export const GRANT_CACHE_MS = 30_000;
const MAX_REMEMBERED = 1_000;

interface Remembered {
  actor: PersonActor | undefined;
  until: number;
}

const remembered = new WeakMap<Db, Map<string, Remembered>>();

/** Forgets every remembered grant of this process (a role changed, a person was disabled, a session ended). */
export function forgetPanelGrants(db: Db): void {
  remembered.get(db)?.clear();
}

/** The administrator behind a panel access token, or undefined (not a panel token, or access has ended). */
export async function panelActor(ctx: AppContext, token: string): Promise<PersonActor | undefined> {
  const claims = await ctx.readAccessToken(token);
  if (!claims || claims.client_id !== PANEL_CLIENT_ID || claims.aud !== PANEL_AUDIENCE) return undefined;
  const { sub, sid, jti } = claims;
  if (typeof sub !== 'string' || typeof sid !== 'string' || typeof jti !== 'string') return undefined;
  let memory = remembered.get(ctx.db);
  if (!memory) remembered.set(ctx.db, (memory = new Map()));
  const now = ctx.clock.now();
  // By token (its jti is its family's, so a refreshed token shares the entry of its family).
  const key = `${jti} ${sid}`;
  const known = memory.get(key);
  if (known && known.until > now.getTime()) return known.actor;
  const grant: Grant | undefined = (await isAccessTokenRevoked(ctx.db, jti, now)) ? undefined : await liveGrant(ctx.db, sub, sid, now);
  const actor: PersonActor | undefined = grant && { type: 'person', personId: sub, role: grant.role, applications: grant.applications, sessionId: sid };
  if (memory.size >= MAX_REMEMBERED) memory.delete(memory.keys().next().value!);
  memory.set(key, { actor, until: now.getTime() + GRANT_CACHE_MS });
  return actor;
}
