/**
 * Who is signed in to the panel and what their role covers (`GET /api/admin/me`), so the panel
 * hides what the role cannot do. The server decides on every call; this only keeps the screens
 * honest, and it asks the server's own rule: a screen or a button names the admin API call it
 * makes (`may('DELETE /applications/:id', id)`), and `may` answers with the `capabilities` the
 * server lists for the caller, made from the route table it decides by (server/http/admin-policy.ts
 * `capabilitiesOf`, the plugins' routes included: one table, never a copy to drift).
 */
import { createResource } from 'solid-js';
import { client, ok, type Ok } from './api';
import { session } from './session';

export type Me = Ok<'/api/admin/me', 'get'>;

const [me] = createResource(
  () => session.token(),
  () => ok(client.GET('/api/admin/me')),
);

export { me };

/**
 * Whether the signed-in administrator may make an admin API call: `call` is the method and the
 * route as the server registers it under /api/admin (`'PATCH /applications/:id'`), `appId` the
 * application of an `:id` route. False while nobody is known.
 */
export function may(call: string, appId?: string): boolean {
  const who = me();
  if (!who?.role) return false;
  if (who.capabilities.everything) return true;
  const [method = 'GET', route] = call.split(' ');
  const allowed = who.capabilities.routes.find((r) => r.route === `${method === 'HEAD' ? 'GET' : method} ${route}`);
  if (!allowed) return false;
  return allowed.applications === 'all' || (appId !== undefined && who.applications.includes(appId));
}

export const isOwner = () => me()?.role === 'owner';
/** People managers and owners: the people, groups and installation-wide activity. */
export const managesPeople = () => may('GET /people');
/** Whether the caller may manage this application's settings (owner, or its app manager). */
export const managesApplication = (id: string) => may('PATCH /applications/:id', id);
