/**
 * Authentication for `/api/admin/...` (spec §5, DESIGN §4.7).
 *
 * - The admin token (`Authorization: Bearer <ADMIN_TOKEN>`) may do everything.
 * - An API key may act only on `/api/admin/applications/<its app>` and below, per scope:
 *   GET → `<area>:read`, other methods → `<area>:write`. Anything else is 403 `insufficient_scope`.
 *   Some writes on the application itself need more than `application:write` (see
 *   applications/key-limits.ts): what the key could otherwise use to reach past its scopes.
 * - Missing, unknown, revoked or expired credentials → 401 with `WWW-Authenticate: Bearer`.
 */
import type { FastifyRequest } from 'fastify';
import { authenticateApiKey, type ApiKeyActor } from '../api-keys/authenticate.js';
import { forbidden, unauthorized } from './problem.js';

export type Actor = { type: 'admin' } | ApiKeyActor;

declare module 'fastify' {
  interface FastifyRequest {
    actor: Actor;
  }
}

/** How an actor is written in the audit log. */
export function actorName(actor: Actor): string {
  return actor.type === 'admin' ? 'admin' : `api_key:${actor.keyId}`;
}

/** Reads `Authorization: Bearer <token>`; undefined when absent or of another scheme. */
export function bearerToken(request: Pick<FastifyRequest, 'headers'>): string | undefined {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return undefined;
  const match = /^Bearer[ ]+([\x21-\x7e]+)[ ]*$/i.exec(header);
  return match?.[1];
}

/**
 * The API-key scope area of an application sub-path (the part after `/applications/:id`), or
 * undefined when no API key may touch it (API-key management, client-secret rotation).
 */
export function scopeArea(subPath: string): string | undefined {
  const first = subPath.split('/').filter(Boolean)[0];
  switch (first) {
    case undefined:
    case 'auth-policy':
    case 'activity':
      return 'application';
    case 'users':
      return 'users';
    case 'invitations':
      return 'invitations';
    case 'webhook-deliveries':
    case 'webhook-test':
    case 'backchannel-logouts':
      return 'webhooks';
    default:
      return undefined;
  }
}

/**
 * For routes that decide by what a write touches, not by its path: 403 `insufficient_scope`
 * unless the actor is the admin or a key holding `scope`; `scope` undefined means admin only.
 */
export function requireActorScope(actor: Actor, scope: string | undefined, what: string): void {
  if (actor.type === 'admin') return;
  if (scope === undefined) throw forbidden('insufficient_scope', `An API key may not ${what}; that needs the admin token.`);
  if (!actor.scopes.includes(scope)) throw forbidden('insufficient_scope', `This API key lacks the ${scope} scope, needed to ${what}.`);
}

const APP_PATH = /^\/api\/admin\/applications\/([^/?]+)(\/[^?]*)?/;

/** preHandler for every admin route. */
export async function requireAdmin(request: FastifyRequest): Promise<void> {
  const token = bearerToken(request);
  if (!token) throw unauthorized('This endpoint needs Authorization: Bearer <admin token or API key>.');
  const { ctx } = request.server;
  if (ctx.adminToken.verify(token)) {
    request.actor = { type: 'admin' };
    return;
  }
  const key = authenticateApiKey(ctx, token);
  if (!key) throw unauthorized('The bearer token is not a valid admin token or API key.');
  request.actor = key;

  const match = APP_PATH.exec(request.url);
  const appId = match?.[1] ? decodeURIComponent(match[1]) : undefined;
  const area = match ? scopeArea(match[2] ?? '') : undefined;
  // Creating applications (POST /applications) or anything outside the key's own app is out of scope.
  if (!appId || appId !== key.applicationId || !area) {
    throw forbidden('insufficient_scope', 'This API key may only be used on its own application.');
  }
  const needed = `${area}:${request.method === 'GET' || request.method === 'HEAD' ? 'read' : 'write'}`;
  if (!key.scopes.includes(needed)) {
    throw forbidden('insufficient_scope', `This API key lacks the ${needed} scope.`);
  }
}
