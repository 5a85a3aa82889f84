/**
 * Who RADIUS lets on (spec radius.md, "What people authenticate with"), read live at each
 * authentication through the same checks and query modules as LDAP and forward auth:
 * - a name and an app password: app-passwords/verify.ts, the one check LDAP binds and forward
 *   auth's Basic use (account passwords never work: a second factor cannot be bypassed); the
 *   password must be for the application the client belongs to;
 * - a network certificate (EAP-TLS): found by its fingerprint; refused when revoked, expired, of
 *   another application, or its person disabled or membership not active (suspended or deleted).
 * Either way, the person must pass the application's group rule (`allowedGroups`,
 * applications/group-rule.ts, the one every protocol honours): when it names groups, only a person
 * in one of them passes, read live like the rest.
 * And which VLAN: the first `vlans` rule (in order) whose group the person is in, else `defaultVlan`.
 */
import type { AppContext } from '../context.js';
import type { RadiusSettings } from '../db/schema.js';
import { verifyAppPassword } from '../app-passwords/verify.js';
import { personPassesGroupRule } from '../applications/group-rule.js';
import { claimQueries } from '../oauth/claims/queries.js';
import { findCertificate, touchCertificate } from './queries.js';

export interface Admitted {
  personId: string;
  username: string;
}

const LAST_USED_GRANULARITY_MS = 60_000;

export async function checkAppPassword(ctx: AppContext, applicationId: string, login: string, password: string): Promise<Admitted | undefined> {
  if (!login || !password || login.length > 253 || password.length > 256) return undefined;
  const match = await verifyAppPassword(ctx, { applicationId, login, password });
  if (!match || !(await personPassesGroupRule(ctx.db, match.application, match.person.id))) return undefined;
  return { personId: match.person.id, username: match.person.username };
}

export async function checkCertificate(ctx: AppContext, applicationId: string, fingerprint: string): Promise<Admitted | undefined> {
  const row = await findCertificate(ctx.db, fingerprint);
  const now = ctx.clock.now();
  if (!row || row.certificate.applicationId !== applicationId || row.certificate.revokedAt) return undefined;
  if (row.certificate.notAfter.getTime() <= now.getTime()) return undefined;
  if (row.person.status !== 'active' || row.membership.status !== 'active') return undefined;
  if (!(await personPassesGroupRule(ctx.db, row.application, row.person.id))) return undefined;
  const last = row.certificate.lastUsedAt;
  if (!last || now.getTime() - last.getTime() >= LAST_USED_GRANULARITY_MS) await touchCertificate(ctx.db, row.certificate.id, now);
  return { personId: row.person.id, username: row.person.username };
}

/**
 * The VLAN the person goes on, or null (no rule matches and no default). Which of the rules'
 * groups the person is in is one probe of group_members' (person_id, group_id) index per rule, the
 * group rule's statement (synchronous on SQLite), not a read of all their groups.
 */
export async function vlanFor(ctx: AppContext, settings: RadiusSettings, personId: string): Promise<number | null> {
  if (!settings.vlans.length) return settings.defaultVlan;
  const found = claimQueries(ctx.db).groupIdsAmong(personId, settings.vlans.map((rule) => rule.group));
  const groups = new Set(found instanceof Promise ? await found : found);
  return settings.vlans.find((rule) => groups.has(rule.group))?.vlan ?? settings.defaultVlan;
}
