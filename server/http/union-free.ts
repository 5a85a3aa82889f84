/**
 * Response schemas without unions, for the serializer only (issue 45, decision 0365).
 *
 * fast-json-stringify serialises an `anyOf` by validating the value against each branch with its
 * own Ajv, and Ajv compiles the whole response schema to resolve a branch's pointer: after the
 * panel's calls the application and applications-list responses held three such validators of
 * ~0.2 MB of generated source each. Most of the unions are a field that may be null
 * (`Type.Union([X, Type.Null()])`), a set of literals, or a few primitive types; each is written
 * here as the one schema fast-json-stringify serialises the same way without a validator: a type
 * list (`type: ['string', 'null']`, which it serialises by `typeof`), the literals' type, or the
 * branch's own schema with `'null'` added to its type; objects with no property in common (the
 * sign-in answer) are one object with all their properties.
 *
 * Only the serializer sees the rewritten copy: the route keeps its schema, so the OpenAPI
 * document and the request validators are unchanged. For every value a branch accepts, the output
 * is the same bytes; what no longer happens is the 500 for a value no branch accepts (a server
 * bug the serializer would otherwise report). A union this cannot write as one schema (two
 * objects sharing a property, a string or an object) stays a union.
 */

type Schema = Record<string, unknown>;

/** Keywords that say nothing to the serializer about how a value is written. */
const ANNOTATIONS = new Set(['description', 'title', 'examples', 'deprecated', 'default', '$comment']);
/** Keywords whose value is data, not a schema: never rewritten. */
const DATA = new Set(['const', 'enum', 'default', 'examples', 'required']);
const COMBINATORS = ['anyOf', 'oneOf', 'allOf', 'not', 'if', '$ref'];

const isSchema = (value: unknown): value is Schema => typeof value === 'object' && value !== null && !Array.isArray(value);

/** `schema` (a deep copy) with every union that can be one schema written as one. */
export function unionFree<T>(schema: T): T {
  return rewrite(schema) as T;
}

function rewrite(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(rewrite);
  if (!isSchema(node)) return node;
  const out: Schema = {};
  for (const [key, value] of Object.entries(node)) out[key] = DATA.has(key) ? value : rewrite(value);
  return Array.isArray(out.anyOf) ? (oneSchema(out) ?? oneObject(out) ?? out) : out;
}

const OBJECT_KEYS = new Set(['type', 'properties', 'required', 'additionalProperties']);

/**
 * A union of objects with no property in common, each with a property it requires (the sign-in
 * answer: `{ user }` or `{ secondFactor }`), as one object with all their properties: a value one
 * branch accepts has only that branch's properties, which the object writes in the same order.
 */
function oneObject(node: Schema): Schema | undefined {
  const { anyOf, ...siblings } = node as Schema & { anyOf: unknown[] };
  if (Object.keys(siblings).some((key) => !ANNOTATIONS.has(key))) return undefined;
  const properties: Schema = {};
  for (const branch of anyOf) {
    if (!isSchema(branch) || branch.type !== 'object' || !isSchema(branch.properties)) return undefined;
    if (Object.keys(branch).some((key) => !OBJECT_KEYS.has(key) && !ANNOTATIONS.has(key))) return undefined;
    if (branch.additionalProperties !== undefined && branch.additionalProperties !== false) return undefined;
    const own = Object.keys(branch.properties);
    const required = Array.isArray(branch.required) ? branch.required : [];
    if (!own.some((key) => required.includes(key)) || own.some((key) => key in properties)) return undefined;
    Object.assign(properties, branch.properties);
  }
  return { ...siblings, type: 'object', properties };
}

/** A literal (`{ const, type }`) as its type; any other branch as it is. */
function widen(branch: Schema): Schema {
  if (!('const' in branch) || typeof branch.type !== 'string') return branch;
  const { const: _literal, ...rest } = branch;
  return rest;
}

/** Whether a branch says more than its type (then it must be the only one that does). */
const rich = (branch: Schema) => Object.keys(branch).some((key) => key !== 'type' && !ANNOTATIONS.has(key));

/** The union `node` as one schema with a type list, or undefined when it cannot be one. */
function oneSchema(node: Schema): Schema | undefined {
  const { anyOf, ...siblings } = node as Schema & { anyOf: unknown[] };
  if (Object.keys(siblings).some((key) => !ANNOTATIONS.has(key))) return undefined;
  const branches: Schema[] = [];
  for (const branch of anyOf) {
    // A branch's type may already be a list (a union inside a union, rewritten first).
    const typed = isSchema(branch) && (typeof branch.type === 'string' || (Array.isArray(branch.type) && branch.type.every((t) => typeof t === 'string')));
    if (!typed || COMBINATORS.some((key) => key in branch)) return undefined;
    branches.push(widen(branch));
  }
  const types: string[] = [];
  let detailed: Schema | undefined;
  for (const branch of branches) {
    if (rich(branch)) {
      // Two detailed branches (two objects, a string pattern and an object) cannot share one schema.
      if (detailed) return undefined;
      detailed = branch;
    }
    for (const type of ([] as string[]).concat(branch.type as string | string[])) {
      if (!types.includes(type)) {
        types.push(type);
        continue;
      }
      // The same type twice is one only when both are that bare type (literals of one type).
      if (branches.some((other) => ([] as string[]).concat(other.type as string | string[]).includes(type) && rich(other))) return undefined;
    }
  }
  // `integer` and `number` both: fast-json-stringify's type list tests `Number.isInteger` and
  // `typeof`, Ajv the same; strings and objects with `toString` differ, so no mixed string/object.
  if (types.includes('string') && (types.includes('object') || types.includes('array'))) return undefined;
  const annotations = Object.fromEntries(Object.entries(detailed ?? {}).filter(([key]) => ANNOTATIONS.has(key)));
  const body = Object.fromEntries(Object.entries(detailed ?? {}).filter(([key]) => !ANNOTATIONS.has(key)));
  return { ...annotations, ...siblings, ...body, type: types.length === 1 ? types[0] : types };
}
