/**
 * A body that comes in one of two shapes, told apart by one property: an application is created
 * from its settings, or from an app preset (`{ preset, presetInputs, … }`). Described as an
 * `anyOf` (so the OpenAPI document and the panel's generated types show both) and marked with
 * `x-shape-by: <property>`; the validator then checks the body against the one shape its
 * property picks, so a refusal names the fields of the shape the caller meant instead of every
 * field of both.
 */
import type { Ajv, ValidateFunction } from 'ajv';

export const SHAPE_BY = 'x-shape-by';

interface ShapedSchema {
  anyOf: { properties?: Record<string, unknown> }[];
  [SHAPE_BY]: string;
}

const isShaped = (schema: unknown): schema is ShapedSchema =>
  typeof schema === 'object' && schema !== null && SHAPE_BY in schema && Array.isArray((schema as ShapedSchema).anyOf) && (schema as ShapedSchema).anyOf.length === 2;

/** Ajv's compiled validator, or for a shaped union one that validates against the shape the body picks. */
/**
 * Removes what compileBody (or Ajv's `compile`) put in Ajv's cache for `schema` — its shapes'
 * entries, for a shaped body — so a forgotten validator's code can be collected. A schema with an
 * `$id` stays: Ajv would forget its id too, and other schemas may refer to it.
 */
export function releaseBody(ajv: Ajv, schema: object): void {
  for (const one of isShaped(schema) ? schema.anyOf : [schema]) if (!('$id' in one)) ajv.removeSchema(one);
}

export function compileBody(ajv: Ajv, schema: object): ValidateFunction {
  if (!isShaped(schema)) return ajv.compile(schema);
  const property = schema[SHAPE_BY];
  const index = schema.anyOf.findIndex((shape) => shape.properties && property in shape.properties);
  if (index < 0) throw new Error(`${SHAPE_BY}: no shape of the union declares "${property}"`);
  const withProperty = ajv.compile(schema.anyOf[index]!);
  const without = ajv.compile(schema.anyOf[1 - index]!);
  const validate = ((data: unknown) => {
    const chosen = data !== null && typeof data === 'object' && !Array.isArray(data) && property in data ? withProperty : without;
    const valid = chosen(data);
    validate.errors = chosen.errors;
    return valid;
  }) as ValidateFunction;
  return validate;
}
