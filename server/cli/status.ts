/** `gatehouse status [--json]`: what a data directory holds, read without a server. */
import { ConfigError, loadConfig } from '../config.js';
import { formatStatus, readStatus } from '../ops/status.js';
import { postgresOptions } from '../db/postgres-options.js';
import { dataDirHelp, dataDirOption, type Command } from './command.js';

export const statusCommand: Command = {
  options: { ...dataDirOption, json: { type: 'boolean' } },
  help: [dataDirHelp, ['--json', 'print one JSON object instead of text']],
  async run(values) {
    const pg = postgresOptions();
    if (pg) {
      const { formatPostgresStatus, readPostgresStatus } = await import('../ops/postgres-status.js');
      const status = await readPostgresStatus(pg);
      console.log(values.json ? JSON.stringify(status) : formatPostgresStatus(status));
      return;
    }
    const config = loadConfig(process.env, { dataDir: values['data-dir'] as string | undefined });
    const status = await readStatus(config.dataDir, [], config.issuer);
    if (!status) throw new ConfigError(`There is no Gatehouse database in ${config.dataDir}.`);
    console.log(values.json ? JSON.stringify(status) : formatStatus(status));
  },
};
