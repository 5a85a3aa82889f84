/**
 * One table of flags per command: each row gives the parser's option, the `--help` line and, for
 * admin commands, the request-body field the flag sets. Adding a flag (say `--grant-type` for a new
 * application field) is one row; parsing, help and the request body follow from it.
 */
import type { Options, Values } from './command.js';

export interface Flag {
  type: 'string' | 'boolean';
  /** May be given more than once (`--redirect-uri A --redirect-uri B`); the field gets an array. */
  multiple?: boolean;
  short?: string;
  /** The value's placeholder in `--help` (`--name NAME`). */
  value?: string;
  help: string;
  /** The request-body field (a top-level JSON property) this flag sets. */
  field?: string;
}

export type FlagTable = Record<string, Flag>;

/** node:util parseArgs options for a table. */
export function flagOptions(table: FlagTable): Options {
  const options: Options = {};
  for (const [name, flag] of Object.entries(table)) {
    options[name] = { type: flag.type, ...(flag.multiple ? { multiple: true } : {}), ...(flag.short ? { short: flag.short } : {}) };
  }
  return options;
}

/** `--help` lines for a table. */
export function flagHelp(table: FlagTable): [string, string][] {
  return Object.entries(table).map(([name, flag]) => [`--${name}${flag.value ? ` ${flag.value}` : ''}`, flag.help]);
}

/** The request body the given flags describe (flags without a field, or not given, are left out). */
export function bodyFromFlags(table: FlagTable, values: Values): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [name, flag] of Object.entries(table)) {
    if (flag.field && values[name] !== undefined) body[flag.field] = values[name];
  }
  return body;
}

/** The flag that sets `field`, to name it in an error about that field. */
export function flagForField(table: FlagTable, field: string): string | undefined {
  const entry = Object.entries(table).find(([, flag]) => flag.field === field);
  return entry ? `--${entry[0]}` : undefined;
}
