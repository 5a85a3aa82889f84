/**
 * Who is signed in to the panel and what their role covers (`GET /api/admin/me`), so the panel
 * hides what the role cannot do. The server decides on every call (server/http/admin-policy.ts);
 * this only keeps the screens honest.
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

export const isOwner = () => me()?.role === 'owner';
export const managesPeople = () => me()?.role === 'owner' || me()?.role === 'people_manager';
/** Whether the caller may manage this application's settings (owner, or its app manager). */
export const managesApplication = (id: string) => isOwner() || (me()?.role === 'app_manager' && (me()?.applications ?? []).includes(id));
