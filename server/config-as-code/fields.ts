/**
 * Which fields a configuration file carries, derived from the admin API's own TypeBox schemas so
 * a field added to an application (or a group, an administrator) is exported, planned and applied
 * without a change here:
 *
 * - an entry's schema is the API's create schema (its id is the entry's key in the file), plus
 *   the secrets it may name by reference (references.ts);
 * - an entry's exported value is the API's record projected onto that schema: what the record
 *   holds beyond it (timestamps, `webhookSecretSet`, the LDAP bind DN, the logo's URL) is dropped,
 *   and every dropped path must be listed in `excludedApplicationFields` with its reason
 *   (test/unit/config-as-code-fields.test.ts fails, naming the path, until it is).
 */
import { Type, type TObject, type TProperties, type TSchema } from 'typebox';
import type { ApplicationField } from '../plugin-api/application-fields.js';

/** A JSON-schema node as TypeBox builds it (plain JSON Schema underneath). */
interface SchemaNode {
  type?: string;
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  anyOf?: SchemaNode[];
  additionalProperties?: boolean | SchemaNode;
}

/**
 * An entry's schema: `create` (the API's create body, with the key field `key`) plus the secret
 * references. Validating `{ [key]: <entry key>, ...entry }` against it checks the key too.
 */
export function entrySchema(create: TObject, secrets: TProperties = {}): TObject {
  return Type.Object({ ...create.properties, ...secrets }, { additionalProperties: false });
}

/**
 * `value` projected onto `schema`: for an object schema only its properties (recursively), for an
 * array its items projected, anything else as it is. `dropped` collects the paths left out, with
 * `*` for array items (`authPolicy.profile_fields.*.x`).
 */
export function project(value: unknown, schema: TSchema, dropped: Set<string> = new Set(), at = ''): unknown {
  if (value === null || typeof value !== 'object') return value;
  const node = schema as SchemaNode;
  if (Array.isArray(value)) {
    const items = node.items ?? node.anyOf?.find((s) => s.type === 'array')?.items;
    return items ? value.map((item) => project(item, items as TSchema, dropped, join(at, '*'))) : value;
  }
  const object = node.properties ? node : (objectBranchOf(schema) as SchemaNode | undefined);
  // A free-form object (a claim's constant value, a preset's inputs): kept whole, its keys sorted,
  // since PostgreSQL's jsonb does not keep the order they were written in (and SQLite does).
  if (!object?.properties) return sortedKeys(value);
  const out: Record<string, unknown> = {};
  for (const [key, sub] of Object.entries(object.properties)) {
    const field = (value as Record<string, unknown>)[key];
    if (field !== undefined) out[key] = project(field, sub as TSchema, dropped, join(at, key));
  }
  for (const key of Object.keys(value)) if (!(key in object.properties)) dropped.add(join(at, key));
  return out;
}

const join = (at: string, key: string) => (at ? `${at}.${key}` : key);

function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.keys(value).sort().map((key) => [key, sortedKeys((value as Record<string, unknown>)[key])]));
}

/** Whether a schema node is an object with named properties (not a union, not free-form). */
export function isPlainObjectSchema(schema: TSchema): boolean {
  const node = schema as SchemaNode;
  return node.type === 'object' && node.properties !== undefined;
}

/** The object with named properties among a union's choices (`forwardAuth`: settings or null), if there is one. */
export function objectBranchOf(schema: TSchema): TSchema | undefined {
  return (schema as SchemaNode).anyOf?.find((s) => s.type === 'object' && s.properties !== undefined) as TSchema | undefined;
}

/** The properties of a plain object schema. */
export function propertiesOf(schema: TSchema): Record<string, TSchema> {
  return ((schema as SchemaNode).properties ?? {}) as Record<string, TSchema>;
}

/**
 * What an application's record holds that its configuration entry does not, and why. Paths are
 * the record's, dotted; `*` stands for any item of a list.
 */
const EXCLUDED_CORE_FIELDS: Record<string, string> = {
  id: 'the entry\'s key in the file',
  createdAt: 'history, not configuration',
  updatedAt: 'history, not configuration',
  webhookSecretSet: 'the secret itself is `webhookSecret`, a reference',
  'branding.logoUrl': 'the logo is an uploaded image (PUT …/logo), kept by backups, not in a text file',
};

/** The core's exclusions and the plugin fields' derived values (`ldap.bindDn`: plugin-api/application-fields.ts `derived`). */
export function excludedApplicationFields(fields: readonly Pick<ApplicationField<never>, 'name' | 'derived'>[]): Record<string, string> {
  return {
    ...EXCLUDED_CORE_FIELDS,
    ...Object.fromEntries(fields.flatMap((f) => Object.entries(f.derived ?? {}).map(([path, why]) => [`${f.name}.${path}`, why]))),
  };
}
