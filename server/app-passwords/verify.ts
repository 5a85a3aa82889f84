/**
 * Checking an app password presented with a name (spec ldap.md): the one function every protocol
 * that takes them calls — LDAP simple binds (server/ldap/bind.ts) and HTTP Basic on forward auth.
 *
 * The secret is looked up by its hash (one unique-index read), never the name: a name that does
 * not exist and a wrong password take the same path, so the answer and its timing say nothing
 * about who exists. The name must then be the owner's username or e-mail address (any case), the
 * password's application the one asked about (when one is), its membership active, and the
 * application must still take app passwords. `lastUsedAt` moves at most once a minute.
 */
import type { AppContext } from '../context.js';
import type { Application, Person } from '../db/schema.js';
import { appPasswordHash } from './secret.js';
import { findByHash, touchAppPassword } from './queries.js';
import { acceptsAppPasswords } from './service.js';

const LAST_USED_GRANULARITY_MS = 60_000;

export interface AppPasswordLogin {
  /** The application the password must belong to; omitted: any (the password says which). */
  applicationId?: string | undefined;
  /** A username or an e-mail address, as typed. */
  login: string;
  password: string;
}

export interface AppPasswordMatch {
  person: Person;
  application: Application;
  membershipId: string;
  appPasswordId: string;
}

/** The person an app password signs in, or null (wrong password, wrong name, not allowed: one answer). */
export async function verifyAppPassword(ctx: AppContext, input: AppPasswordLogin): Promise<AppPasswordMatch | null> {
  const row = await findByHash(ctx.db, appPasswordHash(input.password));
  if (!row) return null;
  const login = input.login.trim().toLowerCase();
  const named = login === row.person.email || login === usernameOf(row.person);
  if (!named) return null;
  if (input.applicationId !== undefined && input.applicationId !== row.application.id) return null;
  if (row.membership.status !== 'active' || !acceptsAppPasswords(row.application)) return null;
  const now = ctx.clock.now();
  const last = row.password.lastUsedAt;
  if (!last || now.getTime() - last.getTime() >= LAST_USED_GRANULARITY_MS) await touchAppPassword(ctx.db, row.password.id, now);
  return { person: row.person, application: row.application, membershipId: row.membership.id, appPasswordId: row.password.id };
}

/** The person's username (spec claims-and-groups.md), once people have one. */
function usernameOf(person: Person): string | undefined {
  return (person as Person & { username?: string }).username;
}
