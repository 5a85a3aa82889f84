/**
 * The sections of a configuration file and how each is read and changed. Every change goes
 * through the feature's own service — the call the admin API makes — so its rules, audit entries
 * and webhook events are exactly those of the same change made in the panel.
 *
 * A section is a map from a key (an id, or an administrator's e-mail address) to an entry whose
 * schema is the API's create schema (fields.ts). What is *not* configuration, and so not here:
 * people and who is in which directory group (data that people and invitations create; a file
 * names people only as administrators, by e-mail), members, sessions, keys, the audit log.
 */
import { setImmediate as yieldLoop } from 'node:timers/promises';
import type { TObject, TSchema } from 'typebox';
import { Type } from 'typebox';
import type { AppContext } from '../context.js';
import type { Application, AppliedPreset } from '../db/schema.js';
import { badRequest, validationFailed, type FieldError } from '../http/problem.js';
import { findPreset } from '../presets/catalogue/index.js';
import { sha256 } from '../util/crypto.js';
import { openNullable } from '../db/secrets-at-rest.js';
import { applicationSchemas as apiSchemas, type ApplicationCreate, type ApplicationPatch } from '../applications/schemas.js';
import { applicationProblems, createApplication, deleteApplication, listApplications, updateApplication } from '../applications/service.js';
import { rotateClientSecret } from '../applications/secrets.js';
import type { ApplicationField } from '../plugin-api/application-fields.js';
import { findApplication } from '../applications/lookup.js';
import { SsoGroupCreateBody } from '../applications/sso-group-routes.js';
import { createGroup as createSsoGroup, deleteGroup as deleteSsoGroup, listGroups as listSsoGroups, renameGroup } from '../applications/sso-groups.js';
import { GroupCreateBody } from '../groups/schemas.js';
import { createGroup, deleteGroup, listGroups, updateGroup } from '../groups/service.js';
import { AdministratorPutSchema } from '../administrators/schemas.js';
import { deleteAdministrator, listAdministratorRecords, putAdministrator } from '../administrators/service.js';
import { changePasswordPolicy, PasswordPolicyPatchSchema, type PasswordPolicyPatch } from '../administrators/password-policy-routes.js';
import { passwordPolicy } from '../accounts/password-policy.js';
import { findPersonByEmail } from '../accounts/people.js';
import { webhookSecretPurpose } from '../webhooks/sign.js';
import { isEmailAddress } from '../util/email.js';
import { entrySchema, project } from './fields.js';
import { SecretReferenceSchema } from './references.js';
import { currentReference, readReferences } from './stored-references.js';
import { SourceCreateSchema, type SourceCreate, type SourcePatch } from '../directory-sources/schemas.js';
import { createSource, deleteSource, SOURCE_ID_PATTERN, sourceRecord, updateSource } from '../directory-sources/service.js';
import { bindPasswordOf } from '../directory-sources/sources.js';
import { allSources } from '../directory-sources/queries.js';

export type Entry = Record<string, unknown>;

/** A secret an answer shows once (a generated client secret, webhook secret, LDAP password). */
export interface ShownSecret {
  path: string;
  value: string;
}

/** A secret named in the file, resolved: its reference and value. */
export interface ResolvedSecret {
  reference: string;
  value: string;
}

/** What the server holds for one key: its entry as exported, and its secrets' references and fingerprints. */
export interface Current {
  entry: Entry;
  secrets: Record<string, { reference: string | null; fingerprint: string | null }>;
}

export interface Section {
  /** The file's top-level key. */
  name: 'ssoGroups' | 'groups' | 'applications' | 'administrators' | 'directorySources';
  /** What the plan calls one entry. */
  kind: 'ssoGroup' | 'group' | 'application' | 'administrator' | 'directorySource';
  /** The field of the create schema the entry's key fills (none: the key is checked by `checkKey`). */
  keyField?: string;
  /** An entry's schema, with its key field when it has one. */
  schema: TObject;
  /** Fields holding secret references (resolved before the plan), each with the rule its value must meet. */
  secretFields: Readonly<Record<string, TSchema>>;
  /** A key that is not valid, as a message; the key as stored (administrators: lower-case). */
  checkKey?(key: string): { key: string } | { problem: string };
  current(ctx: AppContext): Promise<Map<string, Current>>;
  create(ctx: AppContext, key: string, entry: Entry, secrets: Map<string, ResolvedSecret>, actor: string): Promise<ShownSecret[]>;
  /** `changed`: the fields whose value differs; `secrets`: the secrets to set. */
  update(ctx: AppContext, key: string, changed: Entry, desired: Entry, current: Entry, secrets: Map<string, ResolvedSecret>, actor: string): Promise<ShownSecret[]>;
  remove(ctx: AppContext, key: string, actor: string): Promise<void>;
  /**
   * The rules' problems of an entry the schemas refused, checked without changing anything, so a
   * file gets every problem of an entry at once: `fields` are its fields that passed the schemas
   * (an update's: those that differ from `current`), `refused` the fields that did not.
   */
  check?(ctx: AppContext, key: string, fields: Entry, secrets: Map<string, ResolvedSecret>, current: Entry | undefined, refused: ReadonlySet<string>): Promise<FieldError[]>;
  /**
   * For entries that may name each other in a cycle (application A a resource server of B, B of
   * A): which of an entry's fields a create needs (the rest are set by an update once every entry
   * exists), and which of its secrets go with the create.
   */
  createFirst?: { fields: readonly string[]; secrets: readonly string[] };
}

/** Reads every page of a keyset-paginated list. */
async function allPages<T>(page: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor: string | null }>): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  do {
    const next = await page(cursor);
    items.push(...next.items);
    cursor = next.nextCursor ?? undefined;
    if (cursor) await yieldLoop();
  } while (cursor);
  return items;
}

const PAGE = 200;
const byKey = (entries: [string, Current][]) => new Map(entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
const withoutKey = (schema: TObject, keyField: string): TSchema => Type.Object(
  Object.fromEntries(Object.entries(schema.properties).filter(([name]) => name !== keyField)),
  { additionalProperties: false },
);
const noSecrets = (entry: Entry): Current => ({ entry, secrets: {} });

// --- SSO groups -----------------------------------------------------------------------------

const ssoGroups: Section = {
  name: 'ssoGroups',
  kind: 'ssoGroup',
  keyField: 'id',
  schema: SsoGroupCreateBody,
  secretFields: {},
  async current(ctx) {
    const groups = await allPages(async (cursor) => {
      const page = await listSsoGroups(ctx, PAGE, cursor);
      return { items: page.ssoGroups, nextCursor: page.nextCursor };
    });
    return byKey(groups.map((g) => [g.id, noSecrets(project(g, withoutKey(SsoGroupCreateBody, 'id')) as Entry)]));
  },
  async create(ctx, id, entry, _secrets, actor) {
    await createSsoGroup(ctx, { id, name: entry.name as string }, actor);
    return [];
  },
  async update(ctx, id, changed, _desired, _current, _secrets, actor) {
    if (changed.name !== undefined) await renameGroup(ctx, id, changed.name as string, actor);
    return [];
  },
  remove: (ctx, id, actor) => deleteSsoGroup(ctx, id, actor),
};

// --- Directory groups -------------------------------------------------------------------------

const groups: Section = {
  name: 'groups',
  kind: 'group',
  keyField: 'id',
  schema: GroupCreateBody,
  secretFields: {},
  async current(ctx) {
    const all = await allPages(async (cursor) => {
      const page = await listGroups(ctx, { cursor }, PAGE);
      return { items: page.groups, nextCursor: page.nextCursor };
    });
    return byKey(all.map((g) => [g.id, noSecrets(project(g, withoutKey(GroupCreateBody, 'id')) as Entry)]));
  },
  async create(ctx, id, entry, _secrets, actor) {
    await createGroup(ctx, { ...entry, id } as Parameters<typeof createGroup>[1], actor);
    return [];
  },
  async update(ctx, id, changed, _desired, _current, _secrets, actor) {
    await updateGroup(ctx, id, changed, actor);
    return [];
  },
  remove: (ctx, id, actor) => deleteGroup(ctx, id, actor),
};

// --- Applications -----------------------------------------------------------------------------

/** The secrets an application entry may name, and how each one's current value is fingerprinted. */
const APPLICATION_SECRETS: Record<string, (db: AppContext['db'], app: Application) => string | null> = {
  clientSecret: (_db, app) => app.clientSecretHash,
  webhookSecret: (db, app) => {
    const secret = openNullable(db, app.webhookSecret, webhookSecretPurpose(app.id));
    return secret === null ? null : sha256(secret);
  },
};

/**
 * The app preset an application was made from (presets/apply.ts): id, version, the inputs given
 * and the settings it applied, so upgrades offered later compare like with like. Set at creation
 * by the presets API, so not in the create schema; a file carries it whole.
 */
const PresetOrigin = Type.Union([
  Type.Object(
    {
      id: Type.String({ minLength: 1, maxLength: 100 }),
      version: Type.Integer({ minimum: 1 }),
      inputs: Type.Record(Type.String(), Type.String({ maxLength: 2000 })),
      applied: Type.Record(Type.String(), Type.Unknown()),
    },
    { additionalProperties: false },
  ),
  Type.Null(),
], { description: 'the app preset the application was made from, or null' });

/** A preset origin names a preset this server has, at a version it has had. */
function presetProblem(origin: unknown): FieldError | undefined {
  if (!origin) return undefined;
  const { id, version } = origin as AppliedPreset;
  const preset = findPreset(id);
  const message = !preset ? `there is no preset "${id}" (GET /api/admin/presets lists them)` : version > preset.version ? `the ${preset.name} preset has no version ${version} (its latest is ${preset.version})` : undefined;
  return message ? { path: 'body.preset', message } : undefined;
}

/** Fields whose rules depend on the client type: not judged against a client type the file got wrong. */
const BY_CLIENT_TYPE = ['redirectUris', 'postLogoutRedirectUris', 'grantTypes', 'forwardAuth'];

/**
 * Every problem of an application entry at once (`current`: the server's, for an update): the
 * file's own rules (a client secret only for a web application, a known preset) and the
 * application service's (applicationProblems), so the file gets them all, not the first.
 */
async function applicationEntryProblems(ctx: AppContext, id: string, fields: Entry, secrets: Map<string, ResolvedSecret>, current: Entry | undefined): Promise<FieldError[]> {
  const errors: FieldError[] = [];
  const { preset, ...rest } = fields;
  if (secrets.has('clientSecret') && (fields.clientType ?? current?.clientType ?? 'web') !== 'web') {
    errors.push({ path: 'body.clientSecret', message: 'only a web (confidential) application has a client secret' });
  }
  const origin = presetProblem(preset);
  if (origin) errors.push(origin);
  const patch = { ...rest, ...(secrets.has('webhookSecret') ? { webhookSecret: secrets.get('webhookSecret')!.value } : {}) } as ApplicationPatch;
  // An update that changes only a secret or the preset origin is not held to the other rules.
  if (!current || Object.keys(patch).length) errors.push(...(await applicationProblems(ctx, id, patch, current ? await findApplication(ctx.db, id) : undefined)));
  return errors;
}

/** Refuses an entry with every problem it has, or lets it through to the service. */
async function refuseProblems(ctx: AppContext, id: string, fields: Entry, secrets: Map<string, ResolvedSecret>, current: Entry | undefined): Promise<void> {
  const errors = await applicationEntryProblems(ctx, id, fields, secrets, current);
  if (errors.length) throw validationFailed(errors);
}

/** The secrets an admin API answer showed once (`names`: clientSecret, webhookSecret and the plugin fields' own, such as ldapPassword). */
function shownSecrets(names: readonly string[], id: string, answer: Record<string, unknown>, skip: ReadonlySet<string> = new Set()): ShownSecret[] {
  return names
    .filter((field) => answer[field] !== undefined && !skip.has(field))
    .flatMap((field) => {
      const value = answer[field];
      if (typeof value === 'string') return [{ path: `applications.${id}.${field}`, value }];
      // A map of secrets (radiusSecrets: one per RADIUS client, by name).
      if (value && typeof value === 'object') return Object.entries(value as Record<string, string>).map(([key, v]) => ({ path: `applications.${id}.${field}.${key}`, value: v }));
      return [];
    });
}

/**
 * The applications section, for the application fields of this app (the plugins' fields are in
 * the admin API's schemas, so a file carries them too).
 */
function applicationsSection(fields: readonly ApplicationField<never>[]): { section: Section; schemas: { entry: TObject; exported: TObject; secrets: string[] } } {
  const api = apiSchemas(fields);
  const ApplicationEntry = entrySchema(api.create, {
    preset: Type.Optional(PresetOrigin),
    // Both replace the admin API's generated-and-shown-once secret by the value a reference names.
    clientSecret: Type.Optional(SecretReferenceSchema),
    webhookSecret: Type.Optional(SecretReferenceSchema),
  });
  /** The exported form: every field the API takes and the preset origin, secrets (references) apart. */
  const ApplicationExport = Type.Object({
    ...Object.fromEntries(Object.entries(api.create.properties).filter(([name]) => name !== 'id' && !(name in APPLICATION_SECRETS))),
    preset: PresetOrigin,
  });
  const section: Section = {
    name: 'applications',
    kind: 'application',
    keyField: 'id',
    schema: ApplicationEntry,
    secretFields: {
      // A value from a file is random material, never a password someone chose.
      clientSecret: Type.String({ minLength: 32, maxLength: 200 }),
      // The admin API's own rule for a webhook secret.
      webhookSecret: api.create.properties.webhookSecret!,
    },
    async current(ctx) {
      const records = await allPages(async (cursor) => {
        const page = await listApplications(ctx, PAGE, cursor);
        return { items: page.applications, nextCursor: page.nextCursor };
      });
      const references = await readReferences(ctx.db);
      const entries: [string, Current][] = [];
      for (const [i, record] of records.entries()) {
        if (i > 0 && i % 25 === 0) await yieldLoop();
        const secrets: Current['secrets'] = {};
        const row = references[record.id] ? await findApplication(ctx.db, record.id) : undefined;
        for (const [field, fingerprintOf] of Object.entries(APPLICATION_SECRETS)) {
          const fingerprint = row ? fingerprintOf(ctx.db, row) : null;
          secrets[field] = { fingerprint, reference: currentReference(ctx.db, references, record.id, field, fingerprint) };
        }
        const entry = project(record, ApplicationExport) as Entry;
        // The whole origin (the record shows only its id and version).
        if (record.preset) entry.preset = project((row ?? (await findApplication(ctx.db, record.id)))?.preset ?? null, PresetOrigin);
        entries.push([record.id, { entry, secrets }]);
      }
      return byKey(entries);
    },
    async create(ctx, id, entry, secrets, actor) {
      await refuseProblems(ctx, id, entry, secrets, undefined);
      const { preset, ...fields } = entry;
      const input = { ...fields, id, ...(secrets.has('webhookSecret') ? { webhookSecret: secrets.get('webhookSecret')!.value } : {}) } as ApplicationCreate;
      const answer = await createApplication(ctx, input, actor, preset as AppliedPreset | null | undefined, { clientSecret: secrets.get('clientSecret')?.value });
      return shownSecrets(api.secrets, id, answer);
    },
    async update(ctx, id, changed, _desired, current, secrets, actor) {
      await refuseProblems(ctx, id, changed, secrets, current);
      const { preset, ...fields } = changed;
      const patch = { ...fields, ...(secrets.has('webhookSecret') ? { webhookSecret: secrets.get('webhookSecret')!.value } : {}) } as ApplicationPatch;
      const shown: ShownSecret[] = [];
      if (Object.keys(patch).length || preset !== undefined) {
        const answer = await updateApplication(ctx, id, patch, actor, preset !== undefined ? { preset: preset as AppliedPreset | null } : {});
        // A client secret named in the file replaces one the update would generate (public → web).
        shown.push(...shownSecrets(api.secrets, id, answer, new Set(secrets.has('clientSecret') ? ['clientSecret'] : [])));
      }
      const clientSecret = secrets.get('clientSecret');
      if (clientSecret) await rotateClientSecret(ctx, id, actor, clientSecret.value);
      return shown;
    },
    remove: (ctx, id, actor) => deleteApplication(ctx, id, actor),
    check(ctx, id, fields, secrets, current, refused) {
      const judged = refused.has('clientType') ? Object.fromEntries(Object.entries(fields).filter(([field]) => !BY_CLIENT_TYPE.includes(field))) : fields;
      return applicationEntryProblems(ctx, id, judged, secrets, current);
    },
    // What a create needs and may not name another application: the required fields and the client
    // type (which the redirect URIs and grant types are checked against), and its client secret.
    createFirst: { fields: [...(api.create.required ?? []).filter((f) => f !== 'id'), 'clientType'], secrets: ['clientSecret'] },
  };
  return { section, schemas: { entry: ApplicationEntry, exported: ApplicationExport, secrets: Object.keys(APPLICATION_SECRETS) } };
}

// --- Administrators ---------------------------------------------------------------------------

const administrators: Section = {
  name: 'administrators',
  kind: 'administrator',
  schema: AdministratorPutSchema,
  secretFields: {},
  checkKey(key) {
    const email = key.trim().toLowerCase();
    return isEmailAddress(email) ? { key: email } : { problem: 'must be an e-mail address' };
  },
  async current(ctx) {
    const { administrators: all } = await listAdministratorRecords(ctx);
    // An app manager's applications; other roles have none, so the file need not say so.
    return byKey(all.map((a) => [a.email, noSecrets(a.role === 'app_manager' ? { role: a.role, applications: a.applications } : { role: a.role })]));
  },
  async create(ctx, email, entry, _secrets, actor) {
    await putAdministrator(ctx, await personIdOf(ctx, email), entry as unknown as Parameters<typeof putAdministrator>[2], actor);
    return [];
  },
  async update(ctx, email, _changed, desired, current, _secrets, actor) {
    const grant = { ...current, ...desired } as { role: string; applications?: string[] };
    if (grant.role !== 'app_manager') delete grant.applications;
    await putAdministrator(ctx, await personIdOf(ctx, email), grant as Parameters<typeof putAdministrator>[2], actor);
    return [];
  },
  async remove(ctx, email, actor) {
    await deleteAdministrator(ctx, await personIdOf(ctx, email), actor);
  },
};

/** People are data, not configuration: an administrator's e-mail must name someone already here. */
async function personIdOf(ctx: AppContext, email: string): Promise<string> {
  const person = await findPersonByEmail(ctx.db, email);
  if (!person) {
    throw badRequest('person_not_found', `Nobody has the e-mail address ${email} on this server: people are not created by a configuration file; invite or add them first (gatehouse invite, POST /api/admin/people).`);
  }
  return person.id;
}

// --- Directory sources (spec directory-sources.md) -------------------------------------------
// Keyed by the source's id (a file may choose it when it creates one); the bind password only as a
// reference (`bindPassword: ${env:CORP_AD_PASSWORD}`), like an application's client secret.

const DirectorySourceEntry = entrySchema(SourceCreateSchema, { bindPassword: Type.Optional(SecretReferenceSchema) });
const DirectorySourceExport = Type.Object(Object.fromEntries(Object.entries(SourceCreateSchema.properties).filter(([name]) => name !== 'bindPassword')));

const directorySources: Section = {
  name: 'directorySources',
  kind: 'directorySource',
  schema: DirectorySourceEntry,
  secretFields: { bindPassword: Type.String({ minLength: 1, maxLength: 1000 }) },
  checkKey(key) {
    return SOURCE_ID_PATTERN.test(key) ? { key } : { problem: 'must be 2–63 letters, digits, _ and -, starting with a letter or digit' };
  },
  async current(ctx) {
    const references = await readReferences(ctx.db);
    const entries: [string, Current][] = [];
    for (const source of await allSources(ctx.db)) {
      const password = bindPasswordOf(ctx, source);
      const fingerprint = password === null ? null : sha256(password);
      const entry = project(await sourceRecord(ctx, source), DirectorySourceExport) as Entry;
      entries.push([source.id, { entry, secrets: { bindPassword: { fingerprint, reference: currentReference(ctx.db, references, referenceKey('directorySources', source.id), 'bindPassword', fingerprint) } } }]);
    }
    return byKey(entries);
  },
  async create(ctx, id, entry, secrets, actor) {
    await createSource(ctx, { ...(entry as SourceCreate), ...(secrets.has('bindPassword') ? { bindPassword: secrets.get('bindPassword')!.value } : {}) }, actor, id);
    return [];
  },
  async update(ctx, id, changed, _desired, _current, secrets, actor) {
    const patch = { ...changed, ...(secrets.has('bindPassword') ? { bindPassword: secrets.get('bindPassword')!.value } : {}) };
    if (Object.keys(patch).length) await updateSource(ctx, id, patch as SourcePatch, actor);
    return [];
  },
  remove: (ctx, id, actor) => deleteSource(ctx, id, actor),
};

/** Where a section's secret references are kept: an application's under its id (as before), others' under `<section>:<key>`. */
export const referenceKey = (section: Section['name'], key: string) => (section === 'applications' ? key : `${section}:${key}`);

const built = new WeakMap<readonly ApplicationField<never>[], ReturnType<typeof applicationsSection>>();
const applicationsOf = (fields: readonly ApplicationField<never>[]) => {
  let made = built.get(fields);
  if (!made) built.set(fields, (made = applicationsSection(fields)));
  return made;
};

/** The file's sections by name, in the order changes are made. */
export const SECTION_NAMES = ['ssoGroups', 'groups', 'applications', 'directorySources', 'administrators'] as const;

/**
 * The sections, in the order changes are made: what others refer to first (groups before the
 * applications naming them, applications before their managers). `fields`: the app's application
 * fields (`ctx.registries.applicationFields.all`).
 */
export function configSections(fields: readonly ApplicationField<never>[]): readonly Section[] {
  return [ssoGroups, groups, applicationsOf(fields).section, directorySources, administrators];
}

/** The application entry's schemas, for the test that every field of the record is in the file or excluded. */
export const applicationSchemas = (fields: readonly ApplicationField<never>[]) => applicationsOf(fields).schemas;

// --- The password policy: one entry, no key ---------------------------------------------------

export const passwordPolicySection = {
  name: 'passwordPolicy' as const,
  schema: PasswordPolicyPatchSchema,
  async current(ctx: AppContext): Promise<Entry> {
    return { ...(await passwordPolicy(ctx.db)) };
  },
  async update(ctx: AppContext, changed: Entry, actor: string): Promise<void> {
    await changePasswordPolicy(ctx, changed as PasswordPolicyPatch, actor);
  },
};
