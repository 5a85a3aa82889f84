/**
 * The Ajv instances that check what the admin API is sent (app.ts hands them to Fastify), so
 * anything else read against the same TypeBox schemas — a configuration file
 * (config-as-code/) — is held to exactly the same rules, one rule per field.
 */
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { TEXT_FORMATS } from './schemas.js';

// ajv-formats is CommonJS with a default export; under NodeNext it arrives wrapped.
type AddFormats = (ajv: Ajv) => Ajv;
const addFormats: AddFormats =
  (addFormatsModule as unknown as { default?: AddFormats }).default ?? (addFormatsModule as unknown as AddFormats);

let shared: ReturnType<typeof makeValidators> | undefined;

/**
 * One pair of Ajv instances per process: Ajv caches compiled schemas by object, so every app
 * built after the first (tests build hundreds) reuses the compiled validators of the same routes.
 */
export function validators() {
  return (shared ??= makeValidators());
}

function makeValidators() {
  // Bodies are validated strictly (wrong type → 400, never coerced); query strings and path
  // parameters are text on the wire, so they are coerced to the declared types.
  const common = { removeAdditional: false, useDefaults: true, allErrors: true, strict: false } as const;
  // `verbose` keeps the refused value in an error, so a display-text refusal can say which rule it broke.
  const body = new Ajv({ ...common, coerceTypes: false, verbose: true });
  const query = new Ajv({ ...common, coerceTypes: 'array' });
  for (const ajv of [body, query]) {
    addFormats(ajv);
    for (const [name, problem] of Object.entries(TEXT_FORMATS)) ajv.addFormat(name, (text: string) => problem(text) === undefined);
  }
  return { body, query };
}
