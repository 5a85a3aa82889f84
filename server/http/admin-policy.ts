/**
 * Who may call which admin route: the ONE rule (spec administrators-and-people.md,
 * "Administrators"; DESIGN §4.7 for API keys). Every route under `/api/admin` is decided here by
 * its method and route pattern, before its handler runs (admin-auth.ts calls `decide`):
 *
 * | need            | admin token | owner | people_manager | app_manager         | API key                         |
 * |-----------------|-------------|-------|----------------|---------------------|---------------------------------|
 * | `owner`         | yes         | yes   | no             | no                  | no                              |
 * | `people`        | yes         | yes   | yes            | no                  | no                              |
 * | `administrator` | yes         | yes   | yes            | yes                 | no                              |
 * | `app`           | yes         | yes   | if `people`    | of that application | its own application, with scope |
 *
 * A route that is not in POLICY needs `owner`: routes added later are closed to everyone but the
 * owner (and the admin token) until they are listed here, never open by accident. An `app` route's
 * `area` is the API-key scope area it needs (`<area>:read` for GET, `<area>:write` otherwise); a
 * route without an area is closed to API keys (key management, client secrets, branding).
 * Refusals: a person gets 403 `forbidden`; an API key 403 `insufficient_scope` (as before).
 */
import type { AdminRole } from '../db/schema.js';

export type Need =
  | { kind: 'owner' }
  | { kind: 'people' }
  | { kind: 'administrator' }
  | { kind: 'app'; area?: string; people?: boolean };

const owner: Need = { kind: 'owner' };
const people: Need = { kind: 'people' };
const administrator: Need = { kind: 'administrator' };
/** An application's own routes; `area`: the API-key scope area; `people`: people managers too. */
const app = (area?: string, options: { people?: boolean } = {}): Need => ({ kind: 'app', area, people: options.people ?? false });

/**
 * Route patterns as Fastify registers them, without the `/api/admin` prefix; HEAD follows GET.
 * The routes of plugins (forward auth's snippets, the LDAP password, presets, configuration as
 * code, the administrators' own) bring their rules with them (`policyWith`).
 */
const POLICY: Record<string, Need> = {
  // Applications. Listing is open to every administrator: an app manager sees only theirs
  // (applications/routes.ts filters by `visibleApplications`).
  'GET /applications': administrator,
  'POST /applications': owner,
  'GET /applications/:id': app('application', { people: true }),
  'PATCH /applications/:id': app('application'),
  'DELETE /applications/:id': owner,
  'POST /applications/:id/client-secret': app(),
  'GET /applications/:id/auth-policy': app('application'),
  'PATCH /applications/:id/auth-policy': app('application'),
  'PUT /applications/:id/logo': app(),
  'DELETE /applications/:id/logo': app(),
  'GET /applications/:id/activity': app('application', { people: true }),
  'POST /applications/:id/test-sign-in': app(),
  'POST /applications/:id/test-sign-in/session': app(),
  // Members and invitations: the application's managers, and people managers in every application.
  'GET /applications/:id/users': app('users', { people: true }),
  'GET /applications/:id/users/:uid': app('users', { people: true }),
  'PATCH /applications/:id/users/:uid': app('users', { people: true }),
  'DELETE /applications/:id/users/:uid': app('users', { people: true }),
  'DELETE /applications/:id/users/:uid/second-factor': app(undefined, { people: true }),
  // What a member's tokens would say (the Claims tab's preview): read like the member's record.
  'GET /applications/:id/users/:uid/claims': app('users', { people: true }),
  'POST /applications/:id/invitations': app('invitations', { people: true }),
  'GET /applications/:id/invitations': app('invitations', { people: true }),
  'DELETE /applications/:id/invitations/:iid': app('invitations', { people: true }),
  'POST /applications/:id/invitations/:iid/resend': app('invitations', { people: true }),
  // API keys, webhooks and back-channel logout of one application.
  'POST /applications/:id/api-keys': app(),
  'GET /applications/:id/api-keys': app(),
  'GET /applications/:id/api-keys/:kid': app(),
  'DELETE /applications/:id/api-keys/:kid': app(),
  'GET /applications/:id/webhook-deliveries': app('webhooks'),
  'POST /applications/:id/webhook-deliveries/:did/retry': app('webhooks'),
  'POST /applications/:id/webhook-test': app('webhooks'),
  'GET /applications/:id/backchannel-logouts': app('webhooks'),
  // What every administrator's panel reads.
  'GET /overview': administrator,
  'GET /auth/providers': administrator,
  // People across applications.
  'GET /people': people,
  'POST /people': people,
  'GET /people/:id': people,
  'PATCH /people/:id': people,
  'DELETE /people/:id': people,
  'POST /people/:id/password-reset': people,
  'POST /people/:id/password-reset-link': people,
  'GET /people/:id/sessions': people,
  'POST /people/:id/sign-out': people,
  'GET /activity': people,
  // Directory groups (spec claims-and-groups.md): who is in the team, people managers' too.
  'GET /groups': people,
  'POST /groups': people,
  'GET /groups/:id': people,
  'PATCH /groups/:id': people,
  'DELETE /groups/:id': people,
  'GET /groups/:id/members': people,
  'PUT /groups/:id/members/:personId': people,
  'DELETE /groups/:id/members/:personId': people,
  // Everything else — administrators, password policy changes, SSO groups, signing keys, backups,
  // operations, TLS, the audit log — is the owner's (the default).
};

/**
 * The table with the rules of the admin routes plugins added (plugin-api/registries.ts
 * `adminRoutes`): one table still, refusing by default. A plugin may not loosen a core route.
 */
export function policyWith(added: readonly Record<string, Need>[]): Record<string, Need> {
  const table = { ...POLICY };
  for (const rules of added) {
    for (const [route, need] of Object.entries(rules)) {
      if (route in table) throw new Error(`the admin route ${route} has a rule already`);
      table[route] = need;
    }
  }
  return table;
}

/** The rule for one route: HEAD as GET; an unlisted route needs `owner`. */
export function needOf(method: string, routeUrl: string | undefined, table: Record<string, Need> = POLICY): Need {
  if (routeUrl === undefined) return owner;
  const path = routeUrl.startsWith('/api/admin') ? routeUrl.slice('/api/admin'.length) : routeUrl;
  return table[`${method === 'HEAD' ? 'GET' : method} ${path}`] ?? owner;
}

/** Every listed route (the route-by-role test checks that each is a registered route). */
export const listedRoutes = (table: Record<string, Need> = POLICY): string[] => Object.keys(table);

/** The rule kinds, for plugins' route tables (plugin-api/registries.ts `AdminRoutes`). */
export const needs = { owner, people, administrator, app };

/** A named administrator acting through the admin API (admin-auth.ts `Actor`; a plugin's credential names one: plugin-api/registries.ts `adminCredentials`). */
export interface AdminPerson {
  type: 'person';
  personId: string;
  role: AdminRole;
  applications: readonly string[];
  /** The Gatehouse session the credential came from (`sid`). */
  sessionId: string;
}

/** What a named administrator holds (administrators/queries.ts reads it). */
export interface Grant {
  role: AdminRole;
  /** For `app_manager`: the applications managed. */
  applications: readonly string[];
}

/** Whether a person's grant covers a need; `appId`: the route's `:id` for `app` needs. */
export function personMay(grant: Grant, need: Need, appId: string | undefined): boolean {
  if (grant.role === 'owner') return true;
  switch (need.kind) {
    case 'owner':
      return false;
    case 'people':
      return grant.role === 'people_manager';
    case 'administrator':
      return true;
    case 'app':
      if (grant.role === 'people_manager') return need.people === true;
      return appId !== undefined && grant.applications.includes(appId);
  }
}

/**
 * How far each role reaches, for acting on a person who is an administrator themselves (issue 49,
 * H3 and H5): an owner outranks a people manager, who outranks an app manager. A second-factor
 * reset, signing out everywhere, and changing or deleting the person are refused (403 `forbidden`)
 * when the person's role ranks above the caller's: owners are members of every application, so
 * without this an app manager could reset an owner's factors and a people manager disable one.
 */
const RANK: Record<AdminRole, number> = { app_manager: 1, people_manager: 2, owner: 3 };

/** Whether a holder of `caller` may act on a person holding `target` (undefined: no role). */
export function mayActOn(caller: AdminRole, target: AdminRole | undefined): boolean {
  return target === undefined || RANK[target] <= RANK[caller];
}

/**
 * What a caller may call, from the route table (`GET /api/admin/me`'s `capabilities`, which the
 * panel reads instead of a copy of this table): `everything` for an owner or the admin token (every
 * route, listed or not); otherwise each listed route it may call, for every application (`all`)
 * or for its own (`listed`: an app manager's applications, an API key's one).
 */
export interface Capabilities {
  everything: boolean;
  routes: { route: string; applications: 'all' | 'listed' }[];
}

export function capabilitiesOf(caller: { role: AdminRole } | { scopes: readonly string[] }, table: Record<string, Need> = POLICY): Capabilities {
  if ('role' in caller && caller.role === 'owner') return { everything: true, routes: [] };
  const routes: Capabilities['routes'] = [];
  for (const [route, need] of Object.entries(table)) {
    let applications: 'all' | 'listed' | undefined;
    if ('scopes' in caller) {
      const scope = keyScopeFor(need, route.slice(0, route.indexOf(' ')));
      if (scope && caller.scopes.includes(scope)) applications = 'listed';
    } else if (need.kind === 'administrator' || (need.kind === 'people' && caller.role === 'people_manager')) applications = 'all';
    else if (need.kind === 'app') applications = caller.role === 'people_manager' ? (need.people ? 'all' : undefined) : 'listed';
    if (applications) routes.push({ route, applications });
  }
  return { everything: false, routes };
}

/** The scope an API key of `appId` needs for this route, or undefined when no key may call it. */
export function keyScopeFor(need: Need, method: string): string | undefined {
  if (need.kind !== 'app' || need.area === undefined) return undefined;
  return `${need.area}:${method === 'GET' || method === 'HEAD' ? 'read' : 'write'}`;
}
