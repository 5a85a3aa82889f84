/**
 * `--env-file FILE`: the settings of a service's environment file (a systemd `EnvironmentFile`, a
 * `.env` file), so an operator's command sees what the service sees. The format is Node's
 * `util.parseEnv` (the dotenv rules of `node --env-file`): one `NAME=value` a line, `#` starts a
 * comment, a value may be in single, double or back quotes (double quotes expand `\n`), an
 * `export ` prefix is allowed, lines without `=` are ignored. The file's settings win over the
 * shell's.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseEnv } from 'node:util';
import { ConfigError } from '../config.js';

export function withEnvFile(file: string | undefined, env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  if (file === undefined) return env;
  const path = resolve(file);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'does not exist' : code === 'EACCES' ? 'cannot be read by this user (run as the service user, or with sudo)' : code === 'EISDIR' ? 'is a directory' : 'cannot be read';
    throw new ConfigError(`--env-file names ${path}, which ${why}.`);
  }
  return { ...env, ...parseEnv(text) };
}
