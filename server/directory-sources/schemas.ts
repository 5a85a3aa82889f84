/** Wire schemas of the directory-sources admin API (spec directory-sources.md). */
import { Type, type Static } from 'typebox';
import { DisplayName, NullableTimestamp, Timestamp } from '../http/schemas.js';
import { MAX_FILTER_LENGTH } from './filter.js';

const Kind = Type.Union([Type.Literal('ldap'), Type.Literal('active_directory')], { description: 'the dialect: OpenLDAP-like or Active Directory (their defaults differ)' });
const Attr = Type.String({ minLength: 1, maxLength: 100 });
const Filter = Type.String({ minLength: 3, maxLength: MAX_FILTER_LENGTH, description: 'an RFC 4515 filter in parentheses' });
const Dn = Type.String({ minLength: 1, maxLength: 1000 });
const Interval = Type.Union([Type.Integer({ minimum: 5, maximum: 1440 }), Type.Null()], { description: 'minutes between scheduled runs (changes only where the source offers them, full daily); null: manual only' });

export const AttributesSchema = Type.Object(
  {
    id: Attr, username: Attr, email: Attr, name: Attr, givenName: Attr, familyName: Attr, groupName: Attr,
    members: Type.Array(Attr, { minItems: 1, maxItems: 5, description: 'group attributes naming members: DNs (member, uniqueMember) or usernames (memberUid)' }),
    nestedMembers: Type.Boolean({ description: "Active Directory: a group's people through the in-chain rule 1.2.840.113556.1.4.1941 (nesting included)" }),
  },
  { additionalProperties: false },
);
const AttributesInput = Type.Partial(AttributesSchema, { additionalProperties: false, description: 'any left out take the kind\'s defaults' });

const SourceFields = {
  name: DisplayName({ minLength: 1, maxLength: 200 }),
  kind: Kind,
  url: Type.String({ minLength: 8, maxLength: 500, description: 'ldaps://host[:port], or ldap://host[:port] with StartTLS (plain only to loopback or with allowPlain)' }),
  startTls: Type.Boolean({ description: 'upgrade ldap:// with StartTLS (default true)' }),
  allowPlain: Type.Boolean({ description: 'allow ldap:// without TLS to a host that is not this machine (default false)' }),
  caCertificate: Type.Union([Type.String({ minLength: 1, maxLength: 20000, description: 'PEM' }), Type.Null()], { description: "the CA that signed the source's certificate; null: the system's" }),
  bindDn: Type.Union([Dn, Type.Null()], { description: 'the service account; null: anonymous' }),
  peopleBase: Dn,
  peopleFilter: Filter,
  groupsBase: Type.Union([Dn, Type.Null()], { description: 'null: groups are not read' }),
  groupsFilter: Filter,
  disabledFilter: Type.Union([Filter, Type.Null()], { description: 'people matching it are disabled here' }),
  syncIntervalMinutes: Interval,
  applications: Type.Array(Type.String({ minLength: 1, maxLength: 63 }), { maxItems: 100, description: 'applications the source\'s people become active members of' }),
};

export const SourceCreateSchema = Type.Object(
  {
    name: SourceFields.name,
    kind: SourceFields.kind,
    url: SourceFields.url,
    startTls: Type.Optional(SourceFields.startTls),
    allowPlain: Type.Optional(SourceFields.allowPlain),
    caCertificate: Type.Optional(SourceFields.caCertificate),
    bindDn: Type.Optional(SourceFields.bindDn),
    bindPassword: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 1000 }), Type.Null()], { description: 'sealed at rest, never answered' })),
    peopleBase: SourceFields.peopleBase,
    peopleFilter: Type.Optional(SourceFields.peopleFilter),
    groupsBase: Type.Optional(SourceFields.groupsBase),
    groupsFilter: Type.Optional(SourceFields.groupsFilter),
    attributes: Type.Optional(AttributesInput),
    disabledFilter: Type.Optional(SourceFields.disabledFilter),
    syncIntervalMinutes: Type.Optional(SourceFields.syncIntervalMinutes),
    applications: Type.Optional(SourceFields.applications),
  },
  { additionalProperties: false },
);
export type SourceCreate = Static<typeof SourceCreateSchema>;

export const SourcePatchSchema = Type.Partial(SourceCreateSchema, { additionalProperties: false, minProperties: 1 });
export type SourcePatch = Static<typeof SourcePatchSchema>;

export const SourceSchema = Type.Object(
  {
    id: Type.String(),
    ...SourceFields,
    bindPasswordSet: Type.Boolean(),
    attributes: AttributesSchema,
    status: Type.Union([Type.Literal('ok'), Type.Literal('unreachable')]),
    lastSyncAt: NullableTimestamp,
    lastError: Type.Union([Type.String(), Type.Null()]),
    people: Type.Integer({ description: 'people kept by this source' }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { additionalProperties: false },
);

export const SourceListSchema = Type.Object({ directorySources: Type.Array(SourceSchema), nextCursor: Type.Union([Type.String(), Type.Null()]) }, { additionalProperties: false });

export const SourceParams = Type.Object({ id: Type.String({ maxLength: 200 }) }, { additionalProperties: false });
export const RunParams = Type.Object({ id: Type.String({ maxLength: 200 }), runId: Type.String({ maxLength: 200 }) }, { additionalProperties: false });

const MappedPersonSchema = Type.Object(
  {
    key: Type.String(), dn: Type.String(), username: Type.String(), email: Type.String(),
    name: Type.Union([Type.String(), Type.Null()]), givenName: Type.Union([Type.String(), Type.Null()]), familyName: Type.Union([Type.String(), Type.Null()]),
    disabled: Type.Boolean({ description: 'disabled at the source' }),
  },
  { additionalProperties: false },
);

export const TestBodySchema = Type.Object({ username: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })) }, { additionalProperties: false });

export const TestResultSchema = Type.Object(
  {
    ok: Type.Boolean(),
    steps: Type.Array(Type.Object({
      step: Type.Union(['connect', 'tls', 'bind', 'people', 'groups', 'lookup'].map((s) => Type.Literal(s))),
      ok: Type.Boolean(),
      error: Type.Optional(Type.String()),
    }, { additionalProperties: false })),
    people: Type.Union([Type.Integer(), Type.Null()], { description: 'entries the people filter finds' }),
    groups: Type.Union([Type.Integer(), Type.Null()]),
    sample: Type.Array(Type.Object({ dn: Type.String(), person: Type.Union([MappedPersonSchema, Type.Null()]), skipped: Type.Union([Type.String(), Type.Null()]) }, { additionalProperties: false }), { description: 'the first few people as they would be mapped' }),
    lookup: Type.Optional(Type.Object({ found: Type.Boolean(), person: Type.Optional(MappedPersonSchema) }, { additionalProperties: false })),
  },
  { additionalProperties: false },
);

const CountsSchema = Type.Object(
  { created: Type.Integer(), updated: Type.Integer(), disabled: Type.Integer(), enabled: Type.Integer(), skipped: Type.Integer(), conflicts: Type.Integer() },
  { additionalProperties: false },
);

export const RunSchema = Type.Object(
  {
    id: Type.String(),
    sourceId: Type.String(),
    state: Type.Union([Type.Literal('running'), Type.Literal('succeeded'), Type.Literal('failed')]),
    full: Type.Boolean({ description: 'every entry read (false: changes only)' }),
    trigger: Type.Union([Type.Literal('manual'), Type.Literal('scheduled')]),
    counts: CountsSchema,
    conflicts: Type.Array(Type.Object({ dn: Type.String(), email: Type.Union([Type.String(), Type.Null()]), username: Type.Union([Type.String(), Type.Null()]) }, { additionalProperties: false }), { description: 'the first 1,000' }),
    skipped: Type.Array(Type.Object({ dn: Type.String(), reason: Type.String() }, { additionalProperties: false }), { description: 'the first 1,000' }),
    error: Type.Union([Type.String(), Type.Null()]),
    startedAt: Timestamp,
    finishedAt: NullableTimestamp,
  },
  { additionalProperties: false },
);

export const RunListSchema = Type.Object({ runs: Type.Array(RunSchema), nextCursor: Type.Union([Type.String(), Type.Null()]) }, { additionalProperties: false });
export const SyncBodySchema = Type.Object({ full: Type.Optional(Type.Boolean({ description: 'read every entry (default true for a manual run)' })) }, { additionalProperties: false });
export const SyncAnswerSchema = Type.Object({ run: RunSchema }, { additionalProperties: false });

export const LinkBodySchema = Type.Object({ sourceId: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });
