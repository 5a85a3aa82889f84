/**
 * `gatehouse backup [--out FILE] [--passphrase-env VAR | --key-file FILE | --unencrypted]`: an
 * online backup of a data directory, streamed (ops/backup.ts). A backup holds the signing keys,
 * so it is encrypted: with the flag's secret, else the configured one (GATEHOUSE_BACKUP_PASSPHRASE,
 * GATEHOUSE_BACKUP_KEY_FILE); without any, only `--unencrypted` writes it (and leaves the TLS keys out).
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { ConfigError, loadConfig } from '../config.js';
import { BackupError, backupIntoStore, BACKUP_EXT, BACKUPS_DIR, checkOutputDirectory, configuredSecret, ENCRYPTION_REQUIRED, readKeyFile, writeBackup } from '../ops/backup.js';
import type { Secret } from '../ops/backup-crypto.js';
import { PG_BACKUP_ADVICE, postgresOptions } from '../db/postgres-options.js';
import { DATABASE_FILE } from '../ops/restore.js';
import { dataDirHelp, dataDirOption, type Command, type Values } from './command.js';

/** Reads a passphrase from the environment variable named by `--passphrase-env` (never from argv). */
export function passphraseFrom(variable: string | undefined): string | undefined {
  if (variable === undefined) return undefined;
  const value = process.env[variable];
  if (!value) throw new ConfigError(`The environment variable ${variable} named by --passphrase-env is empty or unset.`);
  return value;
}

export const secretOptions = { 'passphrase-env': { type: 'string' }, 'key-file': { type: 'string' } } as const;
export const secretHelp: [string, string][] = [
  ['--passphrase-env VAR', 'passphrase in environment variable VAR (default GATEHOUSE_BACKUP_PASSPHRASE)'],
  ['--key-file FILE', 'key file of at least 32 random bytes instead (default GATEHOUSE_BACKUP_KEY_FILE)'],
];

/** The secret the flags name, else the configured one; undefined when there is none. */
export function secretFrom(values: Values, config: Parameters<typeof configuredSecret>[0]): Secret | undefined {
  const passphrase = passphraseFrom(values['passphrase-env'] as string | undefined);
  const keyFile = values['key-file'] as string | undefined;
  if (passphrase !== undefined && keyFile !== undefined) throw new ConfigError('Give either --passphrase-env or --key-file, not both.');
  try {
    if (keyFile !== undefined) return { keyFile: readKeyFile(resolve(keyFile)) };
    if (passphrase !== undefined) return { passphrase };
    return configuredSecret(config);
  } catch (error) {
    if (error instanceof BackupError) throw new ConfigError(error.message);
    throw error;
  }
}

export const backupCommand: Command = {
  options: { ...dataDirOption, out: { type: 'string' }, ...secretOptions, unencrypted: { type: 'boolean' } },
  help: [
    dataDirHelp,
    ['--out FILE', 'write the backup here (default: <data>/backups/gatehouse-<time>.gatehouse-backup)'],
    ...secretHelp,
    ['--unencrypted', 'write it unencrypted, without the TLS keys (it still holds the signing keys)'],
  ],
  async run(values) {
    if (postgresOptions()) throw new ConfigError(PG_BACKUP_ADVICE);
    const config = loadConfig(process.env, { dataDir: values['data-dir'] as string | undefined });
    const unencrypted = values.unencrypted === true;
    if (unencrypted && (values['passphrase-env'] !== undefined || values['key-file'] !== undefined)) {
      throw new ConfigError('--unencrypted cannot be combined with --passphrase-env or --key-file.');
    }
    const secret = unencrypted ? null : secretFrom(values, config);
    if (secret === undefined) throw new ConfigError(`${ENCRYPTION_REQUIRED} Or give --passphrase-env VAR or --key-file FILE, or --unencrypted to write it in the clear.`);
    const file = join(config.dataDir, DATABASE_FILE);
    if (!existsSync(file)) throw new ConfigError(`There is no database at ${file}.`);
    // A plain connection (no migrations): a running server keeps writing through its own.
    const sqlite = new Database(file, { fileMustExist: true });
    sqlite.pragma('busy_timeout = 5000');
    const now = new Date();
    try {
      const common = { sqlite, dataDir: config.dataDir, now, secret, paced: false };
      if (values.out) {
        const out = resolve(values.out as string);
        checkOutputDirectory(out);
        await writeBackup({ ...common, dest: out });
        console.log(out);
      } else {
        const record = await backupIntoStore(common);
        console.log(join(config.dataDir, BACKUPS_DIR, `${record.id}${BACKUP_EXT}`));
      }
    } catch (error) {
      if (error instanceof BackupError) throw new ConfigError(error.message);
      throw error;
    } finally {
      sqlite.close();
    }
  },
};
