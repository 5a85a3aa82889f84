/**
 * Directory sources' rules (spec directory-sources.md, "Sources"): at most ten; a URL that is
 * `ldaps://`, or `ldap://` with StartTLS, plain only to loopback or with `allowPlain`; the
 * administrator's filters parsed when saved; attributes and filters default by kind; the bind
 * password sealed with the data directory's secret box and never answered, logged or exported.
 * Every change is audited (`directory_source.created|updated|deleted`). Deleting a source disables
 * its people (their sessions end) and leaves them and its groups as Gatehouse's own, disabled.
 */
import { X509Certificate } from 'node:crypto';
import type { AppContext } from '../context.js';
import type { DirectoryAttributes, DirectorySource } from '../db/schema.js';
import { recordAudit } from '../audit/record.js';
import { transaction } from '../db/store.js';
import { conflict, validationFailed, type FieldError } from '../http/problem.js';
import { iso } from '../http/schemas.js';
import { secretBox } from '../accounts/second-factor/secret-box.js';
import { newId } from '../util/ids.js';
import { ATTRIBUTE_PATTERN, checkFilter } from './filter.js';
import { KIND_DEFAULTS } from './defaults.js';
import { isLoopbackUrl } from './connection.js';
import {
  countSourcePeople,
  countSources,
  deleteSourceRow,
  existingApplicationIds,
  findSource,
  insertSource,
  listSourceRows,
  updateSourceRow,
} from './queries.js';
import type { SourceCreate, SourcePatch } from './schemas.js';
import { sourceOrNotFound } from './sources.js';

export const MAX_SOURCES = 10;
export const DEFAULT_SYNC_INTERVAL = 60;

export async function sourceRecord(ctx: AppContext, s: DirectorySource) {
  const counted = await countSourcePeople(ctx.db, s.id);
  return {
    id: s.id, name: s.name, kind: s.kind, url: s.url, startTls: s.startTls, allowPlain: s.allowPlain, caCertificate: s.caCertificate,
    bindDn: s.bindDn, bindPasswordSet: s.bindPasswordSealed !== null, peopleBase: s.peopleBase, peopleFilter: s.peopleFilter,
    groupsBase: s.groupsBase, groupsFilter: s.groupsFilter, attributes: s.attributes, disabledFilter: s.disabledFilter,
    syncIntervalMinutes: s.syncIntervalMinutes, applications: s.applications, status: s.status, lastSyncAt: iso(s.lastSyncAt),
    lastError: s.lastError, people: counted.active + counted.disabled, createdAt: iso(s.createdAt)!, updatedAt: iso(s.updatedAt)!,
  };
}

type Settings = Omit<DirectorySource, 'id' | 'createdAt' | 'updatedAt' | 'status' | 'lastError' | 'lastSyncAt' | 'lastFullSyncAt' | 'changeMark' | 'bindPasswordSealed'>;

/** Checks a source's settings as they will be saved; every mistake at once (400 validation_failed). */
async function checkSettings(ctx: AppContext, s: Settings): Promise<void> {
  const errors: FieldError[] = [];
  let url: URL | undefined;
  try {
    url = new URL(s.url);
  } catch {
    errors.push({ path: 'body.url', message: 'must be an ldaps:// or ldap:// URL' });
  }
  if (url) {
    if (url.protocol !== 'ldaps:' && url.protocol !== 'ldap:') errors.push({ path: 'body.url', message: 'must start with ldaps:// or ldap://' });
    else if (!url.hostname || (url.pathname && url.pathname !== '/') || url.search || url.hash || url.username || url.password) {
      errors.push({ path: 'body.url', message: 'must be scheme, host and port only (ldaps://host:636)' });
    } else if (url.protocol === 'ldap:' && !s.startTls && !s.allowPlain && !isLoopbackUrl(s.url)) {
      errors.push({ path: 'body.url', message: 'plain ldap:// is allowed only to this machine; use ldaps://, StartTLS (startTls: true), or allowPlain: true' });
    }
  }
  if (s.caCertificate !== null) {
    try {
      const cert = new X509Certificate(s.caCertificate);
      if (!cert.ca) errors.push({ path: 'body.caCertificate', message: 'is not a CA certificate' });
    } catch {
      errors.push({ path: 'body.caCertificate', message: 'must be a PEM certificate' });
    }
  }
  for (const [field, filter] of [['peopleFilter', s.peopleFilter], ['groupsFilter', s.groupsFilter], ['disabledFilter', s.disabledFilter]] as const) {
    if (filter === null) continue;
    const problem = checkFilter(filter);
    if (problem) errors.push({ path: `body.${field}`, message: problem });
  }
  for (const [key, value] of Object.entries(s.attributes)) {
    const names = Array.isArray(value) ? value : typeof value === 'string' ? [value] : [];
    for (const name of names) if (!ATTRIBUTE_PATTERN.test(name)) errors.push({ path: `body.attributes.${key}`, message: `"${name}" is not an attribute name` });
  }
  const apps = [...new Set(s.applications)];
  const found = await existingApplicationIds(ctx.db, apps);
  for (const id of apps) if (!found.has(id)) errors.push({ path: 'body.applications', message: `no application "${id}"` });
  if (errors.length) throw validationFailed(errors, 'The directory source is not valid.');
}

function settingsOf(input: SourceCreate, base?: DirectorySource): Settings {
  const kind = input.kind ?? base?.kind ?? 'ldap';
  const defaults = KIND_DEFAULTS[kind];
  // A changed kind takes the new kind's defaults for what the body does not name.
  const keep = base !== undefined && base.kind === kind;
  const attributes: DirectoryAttributes = { ...(keep ? base.attributes : defaults.attributes), ...(input.attributes ?? {}) };
  return {
    name: input.name?.trim() ?? base!.name,
    kind,
    url: input.url ?? base!.url,
    startTls: input.startTls ?? base?.startTls ?? true,
    allowPlain: input.allowPlain ?? base?.allowPlain ?? false,
    caCertificate: input.caCertificate !== undefined ? input.caCertificate?.trim() || null : base?.caCertificate ?? null,
    bindDn: input.bindDn !== undefined ? input.bindDn : base?.bindDn ?? null,
    peopleBase: input.peopleBase ?? base!.peopleBase,
    peopleFilter: input.peopleFilter?.trim() ?? (keep ? base.peopleFilter : defaults.peopleFilter),
    groupsBase: input.groupsBase !== undefined ? input.groupsBase : base?.groupsBase ?? null,
    groupsFilter: input.groupsFilter?.trim() ?? (keep ? base.groupsFilter : defaults.groupsFilter),
    attributes,
    disabledFilter: input.disabledFilter !== undefined ? input.disabledFilter?.trim() || null : base?.disabledFilter ?? null,
    syncIntervalMinutes: input.syncIntervalMinutes !== undefined ? input.syncIntervalMinutes : base ? base.syncIntervalMinutes : DEFAULT_SYNC_INTERVAL,
    applications: input.applications ? [...new Set(input.applications)] : base?.applications ?? [],
  };
}

/** What an audit entry says about settings: names of fields, never the password. */
const changedFields = (before: Settings, after: Settings) =>
  (Object.keys(after) as (keyof Settings)[]).filter((k) => JSON.stringify(before[k]) !== JSON.stringify(after[k]));

/** A source id a configuration file may choose (the API makes `dsrc_…` ones). */
export const SOURCE_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{1,62}$/;

export async function createSource(ctx: AppContext, input: SourceCreate, actor: string, chosenId?: string): Promise<DirectorySource> {
  const settings = settingsOf(input);
  await checkSettings(ctx, settings);
  const now = ctx.clock.now();
  const id = chosenId ?? newId('dsrc');
  const sealed = input.bindPassword ? secretBox(ctx).encrypt(input.bindPassword) : null;
  await transaction(ctx.db, async (tx) => {
    if ((await countSources(tx)) >= MAX_SOURCES) throw conflict('source_limit_reached', `There are already ${MAX_SOURCES} directory sources, the most Gatehouse keeps.`);
    if (chosenId !== undefined && (await findSource(tx, chosenId))) throw conflict('directory_source_exists', `A directory source with id "${chosenId}" already exists.`);
    await insertSource(tx, { id, ...settings, bindPasswordSealed: sealed, status: 'ok', lastError: null, createdAt: now, updatedAt: now });
    await recordAudit(tx, now, { actor, action: 'directory_source.created', target: id, details: { name: settings.name, kind: settings.kind, url: settings.url, bindPasswordSet: sealed !== null } });
  });
  return (await findSource(ctx.db, id))!;
}

export async function updateSource(ctx: AppContext, id: string, patch: SourcePatch, actor: string): Promise<DirectorySource> {
  const current = await sourceOrNotFound(ctx, id);
  const settings = settingsOf(patch as SourceCreate, current);
  await checkSettings(ctx, settings);
  const now = ctx.clock.now();
  const before = settingsOf({} as SourceCreate, current);
  const changed: string[] = changedFields(before, settings);
  const passwordChanged = patch.bindPassword !== undefined;
  if (passwordChanged) changed.push('bindPassword');
  if (!changed.length) return current;
  await transaction(ctx.db, async (tx) => {
    await updateSourceRow(tx, id, {
      ...settings,
      ...(passwordChanged ? { bindPasswordSealed: patch.bindPassword ? secretBox(ctx).encrypt(patch.bindPassword) : null } : {}),
      // What the source is changed; the next scheduled run reads everything again.
      ...(changed.some((f) => f !== 'name' && f !== 'syncIntervalMinutes' && f !== 'applications') ? { changeMark: null } : {}),
      updatedAt: now,
    });
    await recordAudit(tx, now, { actor, action: 'directory_source.updated', target: id, details: { changed } });
  });
  return (await findSource(ctx.db, id))!;
}

export async function listSources(ctx: AppContext, cursor: string | undefined, limit: number) {
  const page = await listSourceRows(ctx.db, cursor, limit);
  const items = [];
  for (const s of page.items) items.push(await sourceRecord(ctx, s));
  return { directorySources: items, nextCursor: page.nextCursor };
}

/** Deletes a source: its people are disabled (sessions ended) and released, its groups released, then the row goes. */
export async function deleteSource(ctx: AppContext, id: string, actor: string): Promise<void> {
  const source = await sourceOrNotFound(ctx, id);
  // Releasing its people and groups is the sync engine's (engine.ts), loaded on first use (decision 0369).
  const released = await (await import('./engine.js')).releaseSource(ctx, source, actor);
  const now = ctx.clock.now();
  await transaction(ctx.db, async (tx) => {
    await deleteSourceRow(tx, id);
    await recordAudit(tx, now, { actor, action: 'directory_source.deleted', target: id, details: { name: source.name, peopleDisabled: released.disabled, people: released.people, groups: released.groups } });
  });
  ctx.wakeWebhooks();
}
