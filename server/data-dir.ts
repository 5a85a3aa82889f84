/** The data directory (DESIGN §2): created on demand with mode 0700, and checked to be writable. */
import { accessSync, constants, mkdirSync } from 'node:fs';
import { ConfigError } from './config.js';

/** Creates `dir` if missing; a directory that cannot be created or written is a configuration error. */
export function prepareDataDir(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    accessSync(dir, constants.W_OK);
  } catch {
    throw new ConfigError(`The data directory ${dir} cannot be created or is not writable.`);
  }
}
