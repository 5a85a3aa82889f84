/** `gatehouse backup [--out FILE] [--passphrase-env VAR]`: an online backup of a data directory. */
import { existsSync, writeFileSync, chmodSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { ConfigError, loadConfig } from '../config.js';
import { createBackup, storeBackup } from '../ops/backup.js';
import { DATABASE_FILE } from '../ops/restore.js';
import { dataDirHelp, dataDirOption, type Command } from './command.js';

/** Reads a passphrase from the environment variable named by `--passphrase-env` (never from argv). */
export function passphraseFrom(variable: string | undefined): string | undefined {
  if (variable === undefined) return undefined;
  const value = process.env[variable];
  if (!value) throw new ConfigError(`The environment variable ${variable} named by --passphrase-env is empty or unset.`);
  return value;
}

export const backupCommand: Command = {
  options: { ...dataDirOption, out: { type: 'string' }, 'passphrase-env': { type: 'string' } },
  help: [
    dataDirHelp,
    ['--out FILE', 'write the backup here (default: <data>/backups/gatehouse-<time>.gatehouse-backup)'],
    ['--passphrase-env VAR', 'encrypt with the passphrase in environment variable VAR (AES-256-GCM, scrypt)'],
  ],
  async run(values) {
    const config = loadConfig(process.env, { dataDir: values['data-dir'] as string | undefined });
    const passphrase = passphraseFrom(values['passphrase-env'] as string | undefined);
    const file = join(config.dataDir, DATABASE_FILE);
    if (!existsSync(file)) throw new ConfigError(`There is no database at ${file}.`);
    // A plain connection (no migrations): a running server keeps writing through its own.
    const sqlite = new Database(file, { fileMustExist: true });
    sqlite.pragma('busy_timeout = 5000');
    const now = new Date();
    try {
      const bytes = await createBackup({ sqlite, dataDir: config.dataDir, now, passphrase });
      if (values.out) {
        const out = resolve(values.out as string);
        writeFileSync(out, bytes, { mode: 0o600 });
        chmodSync(out, 0o600);
        console.log(out);
      } else {
        const record = storeBackup(config.dataDir, bytes, now);
        console.log(join(config.dataDir, 'backups', `${record.id}.gatehouse-backup`));
      }
    } finally {
      sqlite.close();
    }
  },
};
