/**
 * `start(config)`: open the store, apply migrations, build the app, listen, announce readiness.
 * Used by `gatehouse serve`, `npm start` and the Electron supervisor (which listens for the IPC
 * `{type: "ready", url}` message).
 */
import { accessSync, constants, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import { ConfigError, defaultIssuer, type Config } from './config.js';
import { openDatabase, type Db } from './db/client.js';
import { fileAdminToken, fixedAdminToken } from './http/admin-token.js';

export const DATABASE_FILE = 'gatehouse.db';

export interface Running {
  app: FastifyInstance;
  db: Db;
  url: string;
  config: Config;
  stop(): Promise<void>;
}

function prepareDataDir(dir: string) {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    accessSync(dir, constants.W_OK);
  } catch {
    throw new ConfigError(`The data directory ${dir} cannot be created or is not writable.`);
  }
}

function loggerOptions(config: Config) {
  const level = config.env.LOG_LEVEL ?? 'info';
  if (!config.prettyLogs) return { level };
  return { level, transport: { target: 'pino-pretty', options: { translateTime: 'SYS:standard', ignore: 'pid,hostname' } } };
}

export async function start(config: Config): Promise<Running> {
  prepareDataDir(config.dataDir);
  const db = openDatabase(join(config.dataDir, DATABASE_FILE));
  const adminToken = config.adminToken ? fixedAdminToken(config.adminToken) : fileAdminToken(config.dataDir);
  const app = await buildApp({ db, config, adminToken, logger: loggerOptions(config), startWorkers: true });
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    await app.close();
    db.$client.close();
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new ConfigError(`Port ${config.port} on ${config.host} is already in use.`);
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') throw new ConfigError(`Cannot listen on host ${config.host}: no such address on this machine.`);
    if (code === 'EACCES') throw new ConfigError(`Not allowed to listen on port ${config.port}; pick a port above 1023.`);
    throw error;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  if (!config.issuerConfigured) config.issuer = defaultIssuer(config.host, port);
  const url = defaultIssuer(config.host, port);

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      await app.close();
      db.$client.close();
    })());
  return { app, db, url, config, stop };
}

/** The one human line printed at start-up. */
export function readyLine(running: Running): string {
  const token = running.config.adminToken ? 'from ADMIN_TOKEN' : `in ${join(running.config.dataDir, 'admin-token')}`;
  return `Gatehouse listening on ${running.url} — issuer ${running.config.issuer}, data ${running.config.dataDir}, admin token ${token}`;
}
