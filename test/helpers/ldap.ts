/**
 * LDAP test helpers: the server's LDAP listener started on free ports beside an inject app
 * (`startLdapFor`), an ldapts client (a maintained LDAP client library, independent of the
 * server's codec), and a directory to read: an application with LDAP on, people signed up to it
 * with app passwords, groups.
 */
import { expect } from 'vitest';
import { perFile } from './per-file.js';
import { Client } from 'ldapts';
import type { TestApp } from './app.js';
import { createApplication } from './accounts.js';
import { me, signedUpCookie } from './self-service.js';
import { startLdap, type LdapListener } from '../../server/ldap/server.js';
import { eq } from 'drizzle-orm';
import { people } from '../../server/db/schema.js';
import { one } from '../../server/db/store.js';

const listeners: LdapListener[] = [];
const clients: Client[] = [];
perFile({
  afterAll: async () => {
    await Promise.all(clients.splice(0).map((c) => c.unbind().catch(() => {})));
    await Promise.all(listeners.splice(0).map((l) => l.stop()));
  },
});

/** Starts the LDAP listener of `t` (its config's `ldap` host; free ports), with `tls` when given. */
export async function startLdapFor(t: TestApp, tls?: { key: string; cert: string }) {
  t.config.ldap = { ...t.config.ldap, enabled: true, port: 0, ldapsPort: 0 };
  const listener = await startLdap(t.app.ctx, t.app.log, tls);
  listeners.push(listener);
  const state = listener.state();
  return { listener, url: state.url!, ldapsUrl: state.ldapsUrl, port: Number(new URL(state.url!).port) };
}

/** A client of `url`, unbound when the file's tests end. */
export function ldapClient(url: string, options: Partial<ConstructorParameters<typeof Client>[0]> = {}): Client {
  const client = new Client({ url, timeout: 10_000, connectTimeout: 5_000, ...options });
  clients.push(client);
  return client;
}

export const BASE = 'dc=gatehouse';
export const SERVICE_DN = (app: string, base = BASE) => `cn=${app},ou=services,${base}`;
export const PERSON_DN = (username: string, base = BASE) => `uid=${username},ou=people,${base}`;
export const GROUP_DN = (id: string, base = BASE) => `cn=${id},ou=groups,${base}`;

/** An application with LDAP on (open sign-up); its service account's password. */
export async function ldapApplication(t: TestApp, id = 'media'): Promise<string> {
  const app = await createApplication(t, {
    id, name: id, audience: `https://${id}.example.com`, redirectUris: [`https://${id}.example.com/cb`],
    authPolicy: { signup_policy: 'open' }, ldap: { enabled: true },
  });
  return app.ldapPassword as string;
}

/** Signs `email` up to `applicationId` and makes an app password for it; the person's session cookie too. */
export async function memberWithAppPassword(t: TestApp, email: string, applicationId: string) {
  const cookie = await signedUpCookie(t, email, applicationId);
  const res = await me(t, 'POST', '/api/me/app-passwords', cookie, { applicationId, name: 'test device' });
  expect(res.statusCode, res.body).toBe(201);
  return { cookie, password: res.json().password as string, id: res.json().id as string };
}

/** A directory group with these members (person ids), through the admin API. */
export async function insertGroup(t: TestApp, id: string, personIds: string[], description: string | null = null) {
  const created = await t.admin('POST', '/api/admin/groups', { id, name: id[0]!.toUpperCase() + id.slice(1), description });
  expect(created.statusCode, created.body).toBe(201);
  for (const personId of personIds) {
    expect((await t.admin('PUT', `/api/admin/groups/${id}/members/${personId}`)).statusCode).toBe(204);
  }
}

/** The person with this e-mail address. */
export async function personByEmail(t: TestApp, email: string) {
  return (await one(t.db.select().from(people).where(eq(people.email, email))))!;
}

/** Sets a person's names through the admin API. */
export async function setNames(t: TestApp, email: string, names: { name?: string | null; givenName?: string | null; familyName?: string | null }) {
  const person = await personByEmail(t, email);
  const res = await t.admin('PATCH', `/api/admin/people/${person.id}`, names);
  expect(res.statusCode, res.body).toBe(200);
}
