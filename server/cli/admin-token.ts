/** `gatehouse admin-token [--rotate]`: print (or replace) the generated admin token. */
import { loadConfig } from '../config.js';
import { adminTokenPath, readOrCreateAdminToken, writeNewAdminToken } from '../http/admin-token.js';
import { ConfigError } from '../config.js';
import { PG_ADMIN_TOKEN_REQUIRED, postgresOptions } from '../db/postgres-options.js';
import { prepareDataDir } from '../data-dir.js';
import { dataDirHelp, dataDirOption, type Command } from './command.js';

export const adminTokenCommand: Command = {
  options: { ...dataDirOption, rotate: { type: 'boolean' } },
  help: [dataDirHelp, ['--rotate', 'write a new token; a running server accepts only the new one within a second']],
  async run(values) {
    const config = loadConfig(process.env, { dataDir: values['data-dir'] as string | undefined });
    // The token the server would use is the operator's own: say which one, and how to change it.
    if (config.adminTokenSource === 'ADMIN_TOKEN') {
      throw new ConfigError('ADMIN_TOKEN is set in the environment; that is the admin token, and it is rotated by changing it there.');
    }
    if (config.adminToken !== undefined) {
      throw new ConfigError(
        `ADMIN_TOKEN_FILE names ${config.adminTokenSource}; the admin token is that file's content, and it is rotated by writing a new one there and restarting the server.`,
      );
    }
    if (postgresOptions()) throw new ConfigError(PG_ADMIN_TOKEN_REQUIRED);
    prepareDataDir(config.dataDir);
    const token = values.rotate ? writeNewAdminToken(config.dataDir) : readOrCreateAdminToken(config.dataDir);
    console.log(token);
    if (values.rotate) console.error(`New admin token written to ${adminTokenPath(config.dataDir)}.`);
  },
};
