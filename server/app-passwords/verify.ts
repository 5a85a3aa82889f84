/**
 * Checking an app password presented with a name (spec ldap.md): the one function every protocol
 * that takes them calls — LDAP simple binds (server/ldap/bind.ts) and HTTP Basic on forward auth.
 *
 * The secret is looked up by its hash (one unique-index read), never the name: a name that does
 * not exist and a wrong password take the same path, so the answer and its timing say nothing
 * about who exists. The name must then be the owner's username or e-mail address (any case), the
 * owner not disabled, the password's application the one asked about (when one is), its
 * membership active, and the application must still take app passwords. `lastUsedAt` moves at most once a minute.
 */
import type { AppContext } from '../context.js';
import type { Application, Person } from '../db/schema.js';
import { appPasswordHash } from './secret.js';
import { findByHash, findById, touchAppPassword, type AppPasswordMatchRow } from './queries.js';
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
  person: Pick<Person, 'id' | 'email' | 'username' | 'name' | 'status'>;
  application: Pick<Application, 'id' | 'name' | 'ldap' | 'forwardAuth' | 'groupsFilter'> & { radius: boolean };
  membershipId: string;
  appPasswordId: string;
}

/** The person an app password signs in, or null (wrong password, wrong name, not allowed: one answer). */
export async function verifyAppPassword(ctx: AppContext, input: AppPasswordLogin): Promise<AppPasswordMatch | null> {
  const row = await findByHash(ctx.db, appPasswordHash(input.password));
  if (!row) return null;
  const login = input.login.trim().toLowerCase();
  const named = login === row.person.email || login === row.person.username;
  if (!named) return null;
  if (input.applicationId !== undefined && input.applicationId !== row.application.id) return null;
  if (!stillAllowed(row)) return null;
  const now = ctx.clock.now();
  const last = row.password.lastUsedAt;
  if (!last || now.getTime() - last.getTime() >= LAST_USED_GRANULARITY_MS) await touchAppPassword(ctx.db, row.password.id, now);
  return { person: row.person, application: row.application, membershipId: row.membership.id, appPasswordId: row.password.id };
}

/** Whether what an app password signs in to still lets it: the person not disabled, the membership active, the application taking them. */
function stillAllowed(row: AppPasswordMatchRow): boolean {
  return row.person.status === 'active' && row.membership.status === 'active' && acceptsAppPasswords(row.application);
}

/**
 * Whether a sign-in made with an app password still holds (a protocol that keeps a connection
 * signed in, LDAP, asks before each operation): the password not revoked, the rules above still met.
 */
export async function appPasswordStillValid(ctx: AppContext, appPasswordId: string): Promise<AppPasswordMatch | null> {
  const row = await findById(ctx.db, appPasswordId);
  if (!row || !stillAllowed(row)) return null;
  return { person: row.person, application: row.application, membershipId: row.membership.id, appPasswordId: row.password.id };
}
