/** `gatehouse status [--json] [--env-file FILE]`: what a data directory (or PostgreSQL database) holds, read without a server. */
import { ConfigError, hasLocalCa, loadConfig } from '../config.js';
import { formatStatus, readStatus } from '../ops/status.js';
import { postgresOptions } from '../db/postgres-options.js';
import { dataDirHelp, dataDirOption, type Command } from './command.js';
import { withEnvFile } from './env-file.js';
import { ldapStatus } from '../ldap/status.js';
import { radiusStatus } from '../radius/status.js';

/** The plugins' lines (plugin-api/registries.ts `RecordedStatus`): the LDAP directory's and RADIUS's. */
const recordedStatuses = [ldapStatus, radiusStatus];

/** Settings status never needs, left out so that a token file it may not read does not stop it. */
const SECRETS_NOT_READ = { ADMIN_TOKEN: undefined, ADMIN_TOKEN_FILE: undefined, GATEHOUSE_METRICS_TOKEN: undefined, GATEHOUSE_METRICS_TOKEN_FILE: undefined };

export const statusCommand: Command = {
  options: { ...dataDirOption, json: { type: 'boolean' }, 'env-file': { type: 'string' } },
  help: [
    dataDirHelp,
    ['--json', 'print one JSON object instead of text'],
    ['--env-file FILE', "read the service's environment file (NAME=value lines, as systemd's EnvironmentFile) over this shell's environment"],
  ],
  async run(values) {
    const envFile = values['env-file'] as string | undefined;
    const env = withEnvFile(envFile, process.env);
    const source = envFile ? envFile : "this shell's environment";
    const pg = postgresOptions(env);
    if (pg) {
      const { formatPostgresStatus, readPostgresStatus } = await import('../ops/postgres-status.js');
      const status = await readPostgresStatus(pg, env, source, recordedStatuses);
      console.log(values.json ? JSON.stringify(status) : formatPostgresStatus(status, recordedStatuses));
      return;
    }
    const config = loadConfig({ ...env, ...SECRETS_NOT_READ }, { dataDir: values['data-dir'] as string | undefined });
    const extraNames = hasLocalCa(config.tls) ? config.tls.extraNames : [];
    const status = await readStatus(config.dataDir, extraNames, { configured: config.issuerConfigured ? config.issuer : undefined, fallback: config.issuer }, recordedStatuses);
    if (!status) {
      throw new ConfigError(
        `There is no Gatehouse database in ${config.dataDir}, and GATEHOUSE_DATABASE_URL is not set in ${source}: ` +
          "for a server in PostgreSQL mode give --env-file with the service's environment file (or set GATEHOUSE_DATABASE_URL); " +
          'for the embedded store give --data-dir (or GATEHOUSE_DATA_DIR).',
      );
    }
    console.log(values.json ? JSON.stringify(status) : formatStatus(status, recordedStatuses));
  },
};
