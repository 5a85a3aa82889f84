/** Shape of a `gatehouse` sub-command; each lives in its own file under `server/cli/`. */
import type { ParseArgsConfig } from 'node:util';

export type Options = NonNullable<ParseArgsConfig['options']>;
export type Values = Record<string, string | boolean | undefined>;

export interface Command {
  name: string;
  summary: string;
  /** One line per flag for `--help`: `['--data-dir DIR', 'data directory (GATEHOUSE_DATA_DIR)']`. */
  help: [string, string][];
  options: Options;
  /** Whether the command takes positional arguments (e.g. `restore FILE`). */
  positionals?: string;
  run(values: Values, positionals: string[]): Promise<number | void>;
}

/** Flags shared by commands that work on a data directory. */
export const dataDirOption: Options = { 'data-dir': { type: 'string' } };
export const dataDirHelp: [string, string] = ['--data-dir DIR', 'data directory (GATEHOUSE_DATA_DIR, default ./data)'];
