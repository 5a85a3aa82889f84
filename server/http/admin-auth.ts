/**
 * Authentication for `/api/admin/...` (spec administrators-and-people.md, DESIGN §4.7), and the
 * one place where the route's rule (admin-policy.ts) is applied to whoever called:
 * - the admin token (`Authorization: Bearer <ADMIN_TOKEN>`) may do everything;
 * - a credential a plugin knows (plugin-api/registries.ts `adminCredentials`: the panel access
 *   token of a named administrator signed in through the built-in client,
 *   administrators/panel-access.ts) may do what the person's role covers;
 * - an API key may act only on its own application's routes that name a scope area, per scope:
 *   GET → `<area>:read`, other methods → `<area>:write`. Some writes on the application itself
 *   need more than `application:write` (see applications/key-limits.ts).
 * - Missing, unknown, revoked or expired credentials → 401 with `WWW-Authenticate: Bearer`;
 *   a role that does not cover the route → 403 `forbidden`; a key → 403 `insufficient_scope`.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { authenticateApiKey, API_KEY_PREFIX, type ApiKeyActor } from './api-key-auth.js';
import { forbidden, notFound, unauthorized } from './problem.js';
import { keyScopeFor, mayActOn, needOf, personMay, policyWith, type AdminPerson, type Need } from './admin-policy.js';
import { bearerToken } from './bearer-token.js';
import { isPanelClient } from './schemas.js';

/** A named administrator (a plugin's credential: the panel's access tokens). */
export type PersonActor = AdminPerson;

/** The admin routes plugins added, with their rules (plugin-api/registries.ts `adminRoutes`). */
type AddedRoutes = readonly { policy: Record<string, Need> }[];
export type Actor = { type: 'admin' } | ApiKeyActor | PersonActor;

declare module 'fastify' {
  interface FastifyRequest {
    actor: Actor;
  }
}

/** How an actor is written in the audit log. */
export function actorName(actor: Actor): string {
  switch (actor.type) {
    case 'admin':
      return 'admin';
    case 'person':
      return `person:${actor.personId}`;
    case 'api_key':
      return `api_key:${actor.keyId}`;
  }
}

/**
 * For routes that decide by what a write touches, not by its path: 403 `insufficient_scope`
 * unless the actor is the admin, a named administrator (their route was already allowed), or a
 * key holding `scope`; `scope` undefined means no API key may.
 */
export function requireActorScope(actor: Actor, scope: string | undefined, what: string): void {
  if (actor.type !== 'api_key') return;
  if (scope === undefined) throw forbidden('insufficient_scope', `An API key may not ${what}; that needs the admin token.`);
  if (!actor.scopes.includes(scope)) throw forbidden('insufficient_scope', `This API key lacks the ${scope} scope, needed to ${what}.`);
}

/** Only the owner (or the admin token) may `what`: for writes whose reach goes past one application. */
export function requireOwner(actor: Actor, what: string): void {
  if (actor.type === 'admin' || (actor.type === 'person' && actor.role === 'owner')) return;
  if (actor.type === 'api_key') throw forbidden('insufficient_scope', `An API key may not ${what}; that needs the admin token.`);
  throw forbidden('forbidden', `Only an owner may ${what}.`);
}

/** Only the owner, a people manager (or the admin token) may `what`: writes that reach directory-wide things (groups). */
export function requirePeopleManager(actor: Actor, what: string): void {
  if (actor.type === 'admin' || (actor.type === 'person' && (actor.role === 'owner' || actor.role === 'people_manager'))) return;
  if (actor.type === 'api_key') throw forbidden('insufficient_scope', `An API key may not ${what}; that needs the admin token.`);
  throw forbidden('forbidden', `Only an owner or a people manager may ${what}.`);
}

/**
 * For writes that reach a whole person — their second factors, their sessions everywhere, their
 * status, record or deletion: 403 `forbidden` when `personId` holds an administrator role above
 * the caller's (admin-policy.ts `mayActOn`). So only an owner (or the admin token) changes an
 * owner, and an app manager cannot reset a people manager's factors. API keys never reach a whole
 * person (their routes refuse them first); the admin token may do everything.
 */
export async function requireMayActOn(ctx: FastifyInstance['ctx'], actor: Actor, personId: string, what: string): Promise<void> {
  if (actor.type !== 'person') return;
  // The role a person holds is known to the plugin whose credential names administrators (administrators/plugin.ts).
  let target: AdminPerson['role'] | undefined;
  for (const credential of ctx.registries.adminCredentials.all) target ??= await credential.roleOf?.(personId);
  if (mayActOn(actor.role, target)) return;
  const role = target === 'owner' ? 'an owner' : target === 'people_manager' ? 'a people manager' : 'an app manager';
  throw forbidden('forbidden', `This person is ${role}, above your administrator role (${actor.role}): you may not ${what}.`);
}

/** The applications an actor may see in lists: undefined for all of them. */
export function visibleApplications(actor: Actor): readonly string[] | undefined {
  if (actor.type === 'person' && actor.role === 'app_manager') return actor.applications;
  if (actor.type === 'api_key') return [actor.applicationId];
  return undefined;
}

/** Whether an actor administers an application (an app manager theirs, a key its own; everyone else all). */
export function managesOf(actor: Actor): (applicationId: string) => boolean {
  const visible = visibleApplications(actor);
  return visible ? (applicationId) => visible.includes(applicationId) : () => true;
}

/** The route's application id (`:id` under `/applications/`), when it has one. */
function routeApplicationId(request: FastifyRequest): string | undefined {
  const url = request.routeOptions.url;
  if (!url?.startsWith('/api/admin/applications/:id')) return undefined;
  const id = (request.params as { id?: unknown } | undefined)?.id;
  return typeof id === 'string' ? id : undefined;
}

/** The route table with the rules of the routes plugins added (read once per app). */
const tables = new WeakMap<AddedRoutes, Record<string, Need>>();
export function routeTable(added: AddedRoutes): Record<string, Need> {
  let table = tables.get(added);
  if (!table) tables.set(added, (table = policyWith(added.map((entry) => entry.policy))));
  return table;
}

/** The administrator behind a credential a plugin knows (the panel's access tokens), if any. */
async function pluginActor(request: FastifyRequest, token: string): Promise<PersonActor | undefined> {
  for (const credential of request.server.ctx.registries.adminCredentials.all) {
    const actor = await credential.authenticate(token);
    if (actor) return actor;
  }
  return undefined;
}

/** onRequest hook of every admin route: who is calling, and whether the route's rule lets them. */
export async function requireAdmin(request: FastifyRequest): Promise<void> {
  const token = bearerToken(request);
  if (!token) throw unauthorized('This endpoint needs Authorization: Bearer <admin token, panel access token or API key>.');
  const { ctx } = request.server;
  const actor: Actor | undefined = ctx.adminToken.verify(token)
    ? { type: 'admin' }
    : token.startsWith(API_KEY_PREFIX)
      ? await authenticateApiKey(ctx, token)
      : await pluginActor(request, token);
  if (!actor) throw unauthorized('The bearer token is not a valid admin token or API key.');
  request.actor = actor;
  // Under the not-found handler there is no route: any authenticated caller gets the 404.
  if (request.routeOptions.url === undefined || request.is404) return;
  const appId = routeApplicationId(request);
  // The panel's built-in client is no application to administer (administrators/panel-client.ts).
  if (isPanelClient(appId)) throw notFound('application_not_found', `There is no application with id "${appId}".`);
  if (actor.type === 'admin') return;
  const need = needOf(request.method, request.routeOptions.url, routeTable(ctx.registries.adminRoutes.all));
  if (actor.type === 'person') {
    if (!personMay(actor, need, appId)) throw forbidden('forbidden', `Your administrator role (${actor.role}) does not cover ${request.method} ${request.routeOptions.url}.`);
    return;
  }
  const needed = keyScopeFor(need, request.method);
  if (appId !== actor.applicationId) throw forbidden('insufficient_scope', 'This API key may only be used on its own application.');
  if (!needed) throw forbidden('insufficient_scope', `An API key may not call ${request.method} ${request.routeOptions.url}; that needs the admin token.`);
  if (!actor.scopes.includes(needed)) {
    throw forbidden('insufficient_scope', `This API key lacks the ${needed} scope.`);
  }
}
