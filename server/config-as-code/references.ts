/**
 * Secrets in a configuration file are references, never values (spec presets-and-operations.md,
 * "Configuration as code"): `${NAME}`, an environment variable, or `file:PATH`, a file whose
 * content (without its final line break) is the secret. Who resolves them:
 *
 * - `gatehouse config apply` resolves every reference it can from its own environment, and files
 *   relative to the configuration file (or absolute), and sends the values beside the document;
 * - the server resolves the rest itself, from its own environment but only for names starting
 *   with `GATEHOUSE_SECRET_` (not ADMIN_TOKEN, DATABASE_URL or GATEHOUSE_KEY_SECRET, which would
 *   otherwise become a webhook's signing key at the request of anyone who may apply a file), and
 *   files only inside `<data>/secrets/` (not any file the service may read).
 *
 * The CLI imports this module too: one syntax, one place.
 */
import { readFileSync } from 'node:fs';
import { isAbsolute, join, normalize, resolve, sep } from 'node:path';
import { Type } from 'typebox';

export const ENV_REFERENCE = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$/;
export const FILE_REFERENCE = /^file:(.+)$/;
/** Environment variables the server itself resolves references from. */
export const SERVER_ENV_PREFIX = 'GATEHOUSE_SECRET_';
/** Where, under the data directory, the server reads `file:` references. */
export const SERVER_SECRETS_DIR = 'secrets';
/** A secret read from a file or the environment is refused beyond this size. */
const MAX_SECRET_LENGTH = 10_000;

export const SecretReferenceSchema = Type.String({
  pattern: `${ENV_REFERENCE.source}|${FILE_REFERENCE.source}`,
  maxLength: 1000,
  description: 'A reference to a secret, never the secret: `${NAME}` (an environment variable) or `file:PATH` (a file holding it)',
});

export const isReference = (text: string) => ENV_REFERENCE.test(text) || FILE_REFERENCE.test(text);

/** Every string in `value` that is a reference (the CLI resolves these before it sends a file). */
export function referencesIn(value: unknown, found = new Set<string>()): Set<string> {
  if (typeof value === 'string' && isReference(value)) found.add(value);
  else if (Array.isArray(value)) for (const item of value) referencesIn(item, found);
  else if (value && typeof value === 'object') for (const item of Object.values(value)) referencesIn(item, found);
  return found;
}

/** A file's content as a secret: its text without the final line break. */
function readSecretFile(path: string): string {
  const text = readFileSync(path, 'utf8');
  if (text.length > MAX_SECRET_LENGTH + 2) throw new Error(`is longer than ${MAX_SECRET_LENGTH} characters`);
  return text.replace(/\r?\n$/, '');
}

/**
 * What the CLI resolves itself: environment variables of its own environment, files relative to
 * `baseDir` (the configuration file's folder) or absolute. What it cannot resolve is sent as
 * `unresolved`, with the reason, so the server reports it by path and line with every other problem.
 */
export function resolveLocally(
  references: Iterable<string>,
  env: Record<string, string | undefined>,
  baseDir: string,
): { secrets: Record<string, string>; unresolved: Record<string, string> } {
  const secrets: Record<string, string> = {};
  const unresolved: Record<string, string> = {};
  for (const reference of references) {
    const name = ENV_REFERENCE.exec(reference)?.[1];
    if (name !== undefined) {
      const value = env[name];
      if (value) secrets[reference] = value;
      else unresolved[reference] = `the environment variable ${name} is not set (in the environment of gatehouse config apply)`;
      continue;
    }
    const path = FILE_REFERENCE.exec(reference)![1]!;
    const full = isAbsolute(path) ? path : resolve(baseDir, path);
    try {
      const value = readSecretFile(full);
      if (value) secrets[reference] = value;
      else unresolved[reference] = `${full} is empty`;
    } catch (error) {
      unresolved[reference] = fileProblem(full, error);
    }
  }
  return { secrets, unresolved };
}

function fileProblem(full: string, error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' ? `there is no file ${full}` : `${full} cannot be read (${code ?? (error as Error).message})`;
}

/** Where the server looks: values sent with the file, then its own environment and secrets folder. */
export interface ServerSecrets {
  given: Readonly<Record<string, string>>;
  /** What the sender could not resolve, and why (gatehouse config apply). */
  unresolved: Readonly<Record<string, string>>;
  env: Readonly<Record<string, string | undefined>>;
  dataDir: string;
}

/** A reference's value, or why it has none (one sentence, naming the reference, never a value). */
export function resolveOnServer(reference: string, secrets: ServerSecrets): { value: string } | { problem: string } {
  const given = secrets.given[reference];
  if (given !== undefined) return given === '' ? { problem: `${reference} is empty` } : { value: given };
  const why = secrets.unresolved[reference];
  if (why !== undefined) return { problem: why };
  const name = ENV_REFERENCE.exec(reference)?.[1];
  if (name !== undefined) {
    if (!name.startsWith(SERVER_ENV_PREFIX)) {
      return { problem: `${reference} was not sent with the file, and the server reads only ${SERVER_ENV_PREFIX}* variables itself (gatehouse config apply sends the ones of its own environment)` };
    }
    const value = secrets.env[name];
    return value ? { value } : { problem: `the environment variable ${name} is not set` };
  }
  const path = FILE_REFERENCE.exec(reference)?.[1] ?? '';
  const folder = join(secrets.dataDir, SERVER_SECRETS_DIR);
  const full = normalize(join(folder, path));
  if (isAbsolute(path) || !full.startsWith(folder + sep)) {
    return { problem: `${reference} was not sent with the file, and the server reads files only inside ${folder} (a relative path there)` };
  }
  try {
    const value = readSecretFile(full);
    return value ? { value } : { problem: `${full} is empty` };
  } catch (error) {
    return { problem: fileProblem(full, error) };
  }
}
