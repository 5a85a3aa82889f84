/** `gatehouse restore FILE [--data-dir DIR] [--passphrase-env VAR | --key-file FILE]`: restore with the server stopped. */
import { ConfigError, loadConfig } from '../config.js';
import { BackupError } from '../ops/backup.js';
import { restoreBackup } from '../ops/restore.js';
import { PG_BACKUP_ADVICE, postgresOptions } from '../db/postgres-options.js';
import { secretFrom, secretHelp, secretOptions } from './backup.js';
import { dataDirHelp, dataDirOption, type Command } from './command.js';

export const restoreCommand: Command = {
  positionals: 'FILE',
  options: { ...dataDirOption, ...secretOptions },
  help: [dataDirHelp, ...secretHelp.map(([flag, text]): [string, string] => [flag, `of an encrypted backup: ${text}`])],
  async run(values, positionals) {
    if (postgresOptions()) throw new ConfigError(PG_BACKUP_ADVICE);
    if (positionals.length !== 1) throw new ConfigError('Give exactly one backup file: gatehouse restore FILE.');
    const config = loadConfig(process.env, { dataDir: values['data-dir'] as string | undefined });
    const secret = secretFrom(values, config);
    try {
      const result = await restoreBackup({ file: positionals[0]!, dataDir: config.dataDir, secret, now: new Date() });
      console.log(`Restored the backup of ${result.header.createdAt} into ${config.dataDir} (${result.files.join(', ')}).`);
      if (result.previous) console.log(`The previous database was kept as ${result.previous}.`);
    } catch (error) {
      if (error instanceof BackupError) throw new ConfigError(error.message);
      throw error;
    }
  },
};
