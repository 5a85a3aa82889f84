/**
 * Signing in with the source's password (spec directory-sources.md, "Signing in"): Gatehouse
 * binds as the person's DN (RFC 4511 §4.2 simple bind, over TLS, 5 s at most) and keeps nothing
 * of the password. A login nobody has here is looked for in each source
 * (`(&<peopleFilter>(<username attribute>=<login>))`, RFC 4515-escaped: filter.ts), and one entry
 * whose bind succeeds becomes a person then, as a sync would make them, so someone new to the
 * source signs in before the next run. A source that cannot be reached answers 503
 * `directory_unavailable` with `Retry-After`, naming it; that is not a failed attempt.
 * The second factor, passkeys and per-application rules stay Gatehouse's (accounts/sign-in.ts).
 */
import type { AppContext } from '../context.js';
import type { DirectorySource, Person } from '../db/schema.js';
import { Problem } from '../http/problem.js';
import { transaction } from '../db/store.js';
import type { SignInSource } from '../plugin-api/registries.js';
import { findPersonByEmail } from '../accounts/people.js';
import { SourceConnection, SourceError } from './connection.js';
import { allSources, entryByKey, findSource, peopleHolding, updateSourceRow } from './queries.js';
import { countBind } from './metrics.js';
import { directoryUnavailable } from './sources.js';

/** How long a sign-in waits for the source (spec: 5 s). */
export const SIGN_IN_TIMEOUT_MS = 5000;

/** Marks the source unreachable (what the panel shows) and answers 503. */
async function unavailable(ctx: AppContext, source: DirectorySource, error: SourceError): Promise<Problem> {
  countBind(ctx, 'unavailable');
  await transaction(ctx.db, async (tx) => {
    await updateSourceRow(tx, source.id, { status: 'unreachable', lastError: error.message });
  });
  return directoryUnavailable(source.name);
}

async function markReachable(ctx: AppContext, source: DirectorySource): Promise<void> {
  if (source.status === 'ok') return;
  await updateSourceRow(ctx.db, source.id, { status: 'ok', lastError: null });
}

/** Binds as `dn` with `password`: valid, invalid, or a SourceError when the source cannot answer. */
async function bindAs(source: DirectorySource, dn: string, password: string): Promise<'valid' | 'invalid'> {
  const connection = await SourceConnection.open(source, { timeoutMs: SIGN_IN_TIMEOUT_MS });
  try {
    return (await connection.bind(dn, password)) === 'ok' ? 'valid' : 'invalid';
  } finally {
    await connection.close();
  }
}

export function directorySignInSource(ctx: AppContext): SignInSource {
  return {
    name: 'directory-sources',
    owns: (person: Person) => person.sourceId !== null,
    async verify(person, password) {
      const source = await findSource(ctx.db, person.sourceId!);
      if (!source || !person.sourceDn) return 'invalid';
      try {
        const verdict = await bindAs(source, person.sourceDn, password);
        countBind(ctx, verdict);
        await markReachable(ctx, source);
        return verdict;
      } catch (error) {
        if (error instanceof SourceError && error.unreachable) throw await unavailable(ctx, source, error);
        // Anything else the source says about this bind (unwilling to perform, a locked account): not signed in.
        return 'invalid';
      }
    },
    async discover(login, password) {
      if (!login || login.length > 256 || !password) return undefined;
      for (const source of await allSources(ctx.db)) {
        try {
          const person = await discoverIn(ctx, source, login, password);
          if (person) return person;
        } catch (error) {
          if (error instanceof SourceError && error.unreachable) throw await unavailable(ctx, source, error);
          if (!(error instanceof SourceError)) throw error;
        }
      }
      return undefined;
    },
  };
}

/** One source: the single entry for `login`, its bind with `password`, then the person made from it. */
async function discoverIn(ctx: AppContext, source: DirectorySource, login: string, password: string): Promise<Person | undefined> {
  // The sync engine's lookup and writes (engine.ts), loaded on first use (decision 0369).
  const { createPeople, findEntry, serviceConnection } = await import('./engine.js');
  const connection = await serviceConnection(ctx, source, SIGN_IN_TIMEOUT_MS);
  let found: Awaited<ReturnType<typeof findEntry>>;
  try {
    found = await findEntry(connection, source, login);
  } finally {
    await connection.close();
  }
  const entry = found?.mapped;
  if (!entry || entry.disabledAtSource) return undefined;
  const verdict = await bindAs(source, entry.dn, password);
  countBind(ctx, verdict);
  if (verdict !== 'valid') return undefined;
  await markReachable(ctx, source);
  const now = ctx.clock.now();
  const created = await transaction(ctx.db, async (tx) => {
    // Someone here already has the address or username: a conflict, linked only by an administrator.
    if ((await peopleHolding(tx, [entry.email], [entry.username])).length) return undefined;
    if (await entryByKey(tx, source.id, 'person', entry.key)) return undefined;
    await createPeople(tx, now, source, [{ ...entry, disabled: false }]);
    return entry.email;
  });
  ctx.wakeWebhooks();
  return created ? findPersonByEmail(ctx.db, created) : undefined;
}
