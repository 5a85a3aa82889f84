/**
 * The configuration document: its top-level shape, and the export — the server's configuration
 * as one YAML document that `apply` takes back. The export is stable: sections in a fixed order,
 * entries sorted by key, fields in the order of the admin API's schemas, and nothing that changes
 * by itself (no timestamps), so exporting twice, or export → apply to an empty server → export,
 * gives the same bytes.
 */
import { Type } from 'typebox';
import type { AppContext } from '../context.js';
import { transaction } from '../db/store.js';
import { configSections, passwordPolicySection, SECTION_NAMES, type Current, type Entry } from './sections.js';
import { project } from './fields.js';
import { writeYaml } from './source.js';

export const DOCUMENT_VERSION = 1;

const Section = Type.Record(Type.String(), Type.Unknown(), { description: 'entries by key' });

/** The top level; each entry is checked against its own section's schema (sections.ts). */
export const DocumentSchema = Type.Object(
  {
    version: Type.Literal(DOCUMENT_VERSION, { description: 'the format of this file' }),
    passwordPolicy: Type.Optional(Type.Object({}, { additionalProperties: true })),
    ...Object.fromEntries(SECTION_NAMES.map((name) => [name, Type.Optional(Section)])),
  },
  { additionalProperties: false },
);

const HEADER = [
  ' Gatehouse configuration (docs/configuration-as-code.md).',
  ' Apply with: gatehouse config apply FILE [--dry-run] [--prune]',
  ' Secrets are references, never values: ${ENV_NAME} or file:PATH.',
].join('\n');

/** One section's entries as the file writes them: key order, secrets as references. */
function entriesOf(current: Map<string, Current>): Record<string, Entry> {
  const out: Record<string, Entry> = {};
  for (const [key, { entry, secrets }] of current) {
    const references = Object.fromEntries(Object.entries(secrets).filter(([, s]) => s.reference !== null).map(([field, s]) => [field, s.reference]));
    out[key] = { ...entry, ...references };
  }
  return out;
}

/** The configuration as a plain value (read in one transaction: one consistent picture). */
export async function exportConfiguration(ctx: AppContext): Promise<Record<string, unknown>> {
  return await transaction(ctx.db, async () => {
    const document: Record<string, unknown> = {
      version: DOCUMENT_VERSION,
      passwordPolicy: project(await passwordPolicySection.current(ctx), passwordPolicySection.schema),
    };
    for (const section of configSections(ctx.registries.applicationFields.all)) document[section.name] = entriesOf(await section.current(ctx));
    return document;
  });
}

/** A configuration value as YAML text (written off the event loop: source.ts). */
export function toYaml(value: Record<string, unknown>): Promise<string> {
  return writeYaml(value, HEADER);
}
