/**
 * Shape of a `gatehouse` sub-command. Each lives in its own module under `server/cli/`, loaded
 * only when it runs; its name and one-line summary are in the list in ./commands.ts, which is all
 * that `gatehouse --help` loads.
 */
import type { ParseArgsConfig } from 'node:util';

export type Options = NonNullable<ParseArgsConfig['options']>;
export type Values = Record<string, string | boolean | string[] | undefined>;

export interface Command {
  /** One line per flag for `--help`: `['--data-dir DIR', 'data directory (GATEHOUSE_DATA_DIR)']`. */
  help: [string, string][];
  options: Options;
  /** Whether the command takes positional arguments, and how `--help` names them (e.g. `FILE`). */
  positionals?: string;
  run(values: Values, positionals: string[]): Promise<number | void>;
}

/** An entry of the command list: what `--help` shows, and how to load the command. */
export interface CommandEntry {
  /** One or more words: `serve`, `app create`. */
  name: string;
  summary: string;
  load(): Promise<Command>;
}

/** Flags shared by commands that work on a data directory. */
export const dataDirOption: Options = { 'data-dir': { type: 'string' } };
export const dataDirHelp: [string, string] = ['--data-dir DIR', 'data directory (GATEHOUSE_DATA_DIR, default ./data)'];
