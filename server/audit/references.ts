/**
 * Names for the ids an audit page mentions (issue 25): actors (`person:<id>`, `api_key:<id>`),
 * applications, and targets by their id prefix (`usr_` person, `mem_` membership, `key_` API
 * key, `inv_` invitation). Each kind is one primary-key `IN` lookup over the page's ids (at most
 * 2 × 200), so naming a page costs the same however long the log is. Ids of deleted rows simply
 * have no entry: the panel shows the id.
 */
import { eq, inArray } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { apiKeys, applications, invitations, memberships, people, type AuditLogEntry } from '../db/schema.js';
import { many } from '../db/store.js';

export interface AuditReference {
  kind: 'person' | 'membership' | 'application' | 'api_key' | 'invitation';
  label: string;
  personId?: string;
  applicationId?: string;
}

const personLabel = (p: { email: string; name: string | null }) => (p.name ? `${p.name} <${p.email}>` : p.email);

export async function auditReferences(db: Db, entries: Pick<AuditLogEntry, 'actor' | 'applicationId' | 'target'>[]): Promise<Record<string, AuditReference>> {
  const ids = { usr: new Set<string>(), mem: new Set<string>(), key: new Set<string>(), inv: new Set<string>(), app: new Set<string>() };
  for (const e of entries) {
    const actor = /^(person|api_key):(.+)$/.exec(e.actor);
    if (actor) (actor[1] === 'person' ? ids.usr : ids.key).add(actor[2]!);
    if (e.applicationId) ids.app.add(e.applicationId);
    const prefix = e.target?.slice(0, 4);
    if (prefix === 'usr_') ids.usr.add(e.target!);
    else if (prefix === 'mem_') ids.mem.add(e.target!);
    else if (prefix === 'key_') ids.key.add(e.target!);
    else if (prefix === 'inv_') ids.inv.add(e.target!);
  }
  const out: Record<string, AuditReference> = {};
  if (ids.usr.size) {
    for (const p of await many(db.select({ id: people.id, email: people.email, name: people.name }).from(people).where(inArray(people.id, [...ids.usr])))) {
      out[p.id] = { kind: 'person', label: personLabel(p), personId: p.id };
    }
  }
  if (ids.mem.size) {
    const rows = await many(db
      .select({ id: memberships.id, personId: memberships.personId, applicationId: memberships.applicationId, email: people.email, name: people.name })
      .from(memberships)
      .innerJoin(people, eq(people.id, memberships.personId))
      .where(inArray(memberships.id, [...ids.mem])));
    for (const m of rows) out[m.id] = { kind: 'membership', label: personLabel(m), personId: m.personId, applicationId: m.applicationId };
  }
  if (ids.key.size) {
    for (const k of await many(db.select({ id: apiKeys.id, name: apiKeys.name, applicationId: apiKeys.applicationId }).from(apiKeys).where(inArray(apiKeys.id, [...ids.key])))) {
      out[k.id] = { kind: 'api_key', label: k.name, applicationId: k.applicationId };
    }
  }
  if (ids.inv.size) {
    for (const i of await many(db.select({ id: invitations.id, email: invitations.email, applicationId: invitations.applicationId }).from(invitations).where(inArray(invitations.id, [...ids.inv])))) {
      out[i.id] = { kind: 'invitation', label: i.email, applicationId: i.applicationId };
    }
  }
  // Application targets (`application.created`, …) carry the id in `applicationId` too.
  if (ids.app.size) {
    for (const a of await many(db.select({ id: applications.id, name: applications.name }).from(applications).where(inArray(applications.id, [...ids.app])))) {
      out[a.id] = { kind: 'application', label: a.name, applicationId: a.id };
    }
  }
  return out;
}
