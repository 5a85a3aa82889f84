/**
 * `gatehouse rotate-keys`: publishes a new signing key of every algorithm (RS256, ES256, EdDSA),
 * which take over after the JWKS cache lifetime (oauth/keys.ts); the current ones sign until then
 * and stay in the JWKS until every token they signed has expired (by the access-token lifetime the server
 * runs with, ops/token-lifetime.ts). Safe while the server runs: the server picks up the new key
 * within seconds (SQLite WAL, its key cache re-reads the store).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../config.js';
import { openDatabase } from '../db/client.js';
import { PG_ROTATE_ADVICE, postgresOptions } from '../db/postgres-options.js';
import { DATABASE_FILE } from '../main.js';
import { listKeys, rotateSigningKey } from '../oauth/keys.js';
import { MAX_ACCESS_TOKEN_TTL, retiringWindowSeconds } from '../ops/token-lifetime.js';
import { dataDirHelp, dataDirOption, type Command } from './command.js';

export const rotateKeysCommand: Command = {
  options: { ...dataDirOption },
  help: [dataDirHelp],
  async run(values) {
    // This command writes the embedded store directly; PostgreSQL's keys are sealed by the
    // instances' key secret and rotated by a running instance.
    if (postgresOptions()) throw new ConfigError(PG_ROTATE_ADVICE);
    const config = loadConfig(process.env, { dataDir: values['data-dir'] as string | undefined });
    const file = join(config.dataDir, DATABASE_FILE);
    if (!existsSync(file)) throw new ConfigError(`There is no database at ${file}; start the server once first.`);
    const db = openDatabase(file);
    try {
      const now = new Date();
      // The server's access-token lifetime (recorded at its start), not this process's own setting.
      const window = await retiringWindowSeconds(db, now, config.accessTokenTtl, MAX_ACCESS_TOKEN_TTL);
      const { keys, retired, activatesAt } = await rotateSigningKey(db, now, window, 'cli');
      // stdout: the new kids, one a line, RS256 first (scripts read the first line as before).
      for (const key of keys) console.log(key.kid);
      for (const key of (await listKeys(db, now)).filter((k) => retired.includes(k.kid))) {
        console.error(`Key ${key.kid} (${key.alg}) signs until ${key.retiredAt} and stays in the JWKS until ${key.expiresAt}.`);
      }
      for (const key of keys) console.error(`New ${key.alg} signing key ${key.kid} is published now and signs from ${activatesAt.toISOString()}.`);
    } finally {
      db.$client.close();
    }
  },
};
