/**
 * Who is signed in to the panel and what their role covers (`GET /api/admin/me`), so the panel
 * hides what the role cannot do. The server decides on every call; this only keeps the screens
 * honest, and it asks the server's own rule: a screen or a button names the admin API call it
 * makes (`may('DELETE /applications/:id', id)`), and `may` answers with the route table the
 * server itself decides by (server/http/admin-policy.ts, imported: one table, never a copy to
 * drift) for the role `/api/admin/me` names. Every screen asks through `may`, so capabilities
 * listed by `/api/admin/me` are read in this one place once the server returns them.
 */
import { createResource } from 'solid-js';
import { client, ok, type Ok } from './api';
import { session } from './session';
import { needOf, personMay } from '../../server/http/admin-policy';

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
  const [method = 'GET', route] = call.split(' ');
  return personMay({ role: who.role, applications: who.applications }, needOf(method, route), appId);
}

export const isOwner = () => me()?.role === 'owner';
/** People managers and owners: the people, groups and installation-wide activity. */
export const managesPeople = () => may('GET /people');
/** Whether the caller may manage this application's settings (owner, or its app manager). */
export const managesApplication = (id: string) => may('PATCH /applications/:id', id);
