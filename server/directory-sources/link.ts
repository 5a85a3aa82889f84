/**
 * `POST /api/admin/people/:id/directory-link` `{ sourceId }` (spec directory-sources.md,
 * "Conflicts"): an administrator's word that a person Gatehouse keeps is the source entry with
 * their e-mail address or username. The entry is looked up in the source now (one entry, or 409
 * `directory_entry_not_found`), the person takes its values, their own password is deleted (they
 * sign in with the source's from now on), and they join the source's applications. Audited as
 * `person.directory_linked`.
 */
import { and, eq } from 'drizzle-orm';
import type { AppContext } from '../context.js';
import { directoryEntries, linkedAccounts, people } from '../db/schema.js';
import { recordAudit } from '../audit/record.js';
import { exec, transaction } from '../db/store.js';
import { conflict, notFound, Problem } from '../http/problem.js';
import { findPersonRow } from '../people/queries.js';
import { SourceError } from './connection.js';
import { and as andFilter, equals, or } from './filter.js';
import { KIND_DEFAULTS } from './defaults.js';
import { mapPerson, personAttributes, type MappedPerson } from './mapping.js';
import { entryByKey, peopleHolding } from './queries.js';
import { serviceConnection } from './sync.js';
import { joinApplications } from './writes.js';
import { directoryUnavailable, sourceOrNotFound } from './sources.js';

export async function linkPerson(ctx: AppContext, personId: string, sourceId: string, actor: string): Promise<void> {
  const person = await findPersonRow(ctx.db, personId);
  if (!person) throw notFound('person_not_found', `There is no person with id "${personId}".`);
  const source = await sourceOrNotFound(ctx, sourceId);
  if (person.sourceId !== null) throw conflict('managed_by_source', `${person.email} is already kept by a directory source.`);
  const attrs = source.attributes;
  const changeAttribute = KIND_DEFAULTS[source.kind].changeAttribute;
  let entries: MappedPerson[] = [];
  try {
    const connection = await serviceConnection(ctx, source, 10_000);
    try {
      const filter = andFilter(source.peopleFilter, or(equals(attrs.email, person.email), equals(attrs.username, person.username)));
      for await (const page of connection.search(source.peopleBase, filter, personAttributes(attrs, source.kind, changeAttribute), { sizeLimit: 10 })) {
        for (const entry of page) {
          const mapped = mapPerson(entry, attrs, source.kind, changeAttribute);
          if (mapped.ok) entries.push(mapped.value);
        }
      }
    } finally {
      await connection.close();
    }
  } catch (error) {
    if (error instanceof SourceError && error.unreachable) throw directoryUnavailable(source.name);
    if (error instanceof SourceError) throw new Problem(502, 'directory_error', error.message);
    throw error;
  }
  entries = entries.filter((e) => e.email === person.email || e.username === person.username);
  if (entries.length !== 1) {
    throw conflict('directory_entry_not_found', entries.length
      ? `${source.name} has ${entries.length} entries with ${person.email} or ${person.username}; link needs exactly one.`
      : `${source.name} has no entry with the e-mail address ${person.email} or the username ${person.username}.`);
  }
  const entry = entries[0]!;
  const now = ctx.clock.now();
  await transaction(ctx.db, async (tx) => {
    if (await entryByKey(tx, source.id, 'person', entry.key)) throw conflict('directory_entry_linked', `${entry.dn} is already linked to another person.`);
    const others = (await peopleHolding(tx, [entry.email], [entry.username])).filter((h) => h.id !== person.id);
    if (others.length) throw conflict('directory_entry_conflict', `${entry.dn} has the e-mail address or username of another person (${others.map((o) => o.email).join(', ')}).`);
    await exec(tx.update(people).set({
      email: entry.email, username: entry.username, name: entry.name ?? person.name, givenName: entry.givenName, familyName: entry.familyName,
      emailVerified: true, passwordHash: null, sourceId: source.id, sourceDn: entry.dn, status: entry.disabledAtSource ? 'disabled' : person.status, updatedAt: now,
    }).where(eq(people.id, person.id)));
    await exec(tx.delete(linkedAccounts).where(and(eq(linkedAccounts.personId, person.id), eq(linkedAccounts.provider, 'credential'))));
    await exec(tx.insert(directoryEntries).values({ sourceId: source.id, kind: 'person', entryKey: entry.key, targetId: person.id, digest: entry.digest, disabled: entry.disabledAtSource, updatedAt: now }));
    await joinApplications(tx, now, source, [{ id: person.id, email: entry.email, name: entry.name ?? person.name }]);
    await recordAudit(tx, now, { actor, action: 'person.directory_linked', target: person.id, details: { sourceId: source.id, dn: entry.dn, email: entry.email } });
  });
  ctx.wakeWebhooks();
}
