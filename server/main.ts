/**
 * `start(config)`: open the store, apply migrations, build the app, listen, announce readiness.
 * Used by `gatehouse serve`, `npm start` and the Electron supervisor (which listens for the IPC
 * `{type: "ready", url}` message).
 */
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import { ConfigError, defaultIssuer, hasLocalCa, type Config } from './config.js';
import type { Db } from './db/client.js';
import { closeStore, openStore } from './db/open.js';
import { PG_ADMIN_TOKEN_REQUIRED, postgresOptions } from './db/postgres-options.js';
import { keySecretFromEnv, MISSING_KEY_SECRET } from './db/secrets-at-rest.js';
import { startCheckpointer } from './db/checkpointer.js';
import { fileAdminToken, fixedAdminToken } from './http/admin-token.js';
import { prepareDataDir } from './data-dir.js';
import { caStatus, certificateNames, ensureLocalTls, loadOwnTls, normalizeIp, servedMaterial, type TlsMaterial } from './ops/tls.js';
import { readAcmeCertificate } from './trust/acme/store.js';
import { answerCaRequest } from './ops/ca-page.js';
import { answerPlainHttpTrust } from './trust/plain-http.js';
import { backupIntoStore, configuredSecret, pruneBackups } from './ops/backup.js';
import { schemaState } from './ops/schema-version.js';
import { claimServerPidFile, removePidFile } from './ops/pid-file.js';
import { recordAccessTokenTtl } from './ops/token-lifetime.js';
import { recordServedIssuer } from './ops/served-issuer.js';
import { assignMissingUsernames } from './people/username-backfill.js';
import { LOW_MEMORY_NODE_ARGS, lowMemoryActive } from './cli/launch.js';
import { recordLdapOff, type LdapListener } from './ldap/running.js';
import { recordRadiusOff, type RadiusListener } from './radius/running.js';
import { eapMaterial } from './radius/credentials.js';

export const DATABASE_FILE = 'gatehouse.db';

export interface Running {
  app: FastifyInstance;
  db: Db;
  url: string;
  config: Config;
  /** The certificate being served, when HTTPS is on. */
  tls?: TlsMaterial;
  /** The plain-http redirect listener's URL, when configured. */
  redirectUrl?: string;
  /** The LDAP directory's listeners, when GATEHOUSE_LDAP=on (server/ldap/server.ts). */
  ldap?: LdapListener;
  /** The RADIUS listeners, when GATEHOUSE_RADIUS=on (server/radius/server.ts). */
  radius?: RadiusListener;
  /** Runs the periodic LAN-certificate check now; true when a new certificate is being served. */
  refreshTls(): boolean;
  stop(): Promise<void>;
}

/** How often a running server re-checks its LAN certificate (expiry, names, addresses). */
const TLS_CHECK_MS = 24 * 3600 * 1000;

function loadTls(config: Config, now: Date): TlsMaterial | undefined {
  if (config.tls.mode === 'auto') return ensureLocalTls(config.dataDir, config.tls.extraNames, now);
  // ACME: the local certificate serves until the first ACME one (server/trust/acme/), which then
  // serves from start-up on while it is valid; the local CA stays as the fallback.
  if (config.tls.mode === 'acme') return acmeMaterial(config, now) ?? ensureLocalTls(config.dataDir, config.tls.extraNames, now);
  if (config.tls.mode === 'files') return loadOwnTls(config.tls.certFile, config.tls.keyFile);
  return undefined;
}

/** The stored ACME certificate as the listener's material, when it is usable now. */
function acmeMaterial(config: Config, now: Date): TlsMaterial | undefined {
  if (config.tls.mode !== 'acme') return undefined;
  const stored = readAcmeCertificate(config.dataDir, config.env, config.tls.acme.domains, now);
  return stored ? servedMaterial(stored.key, stored.cert, false) : undefined;
}

/**
 * Before migrations touch an existing database: refuse one written by newer code, and back up one
 * that is about to be migrated (kept in `<data>/backups/` with the scheduled ones), through the
 * same streaming path as every backup. It is encrypted when a passphrase or key file is
 * configured; otherwise it is written unencrypted but stays inside the data directory (0600 in a
 * 0700 directory), where the live database holds the same secrets in the same clear form, and it
 * leaves the TLS keys out (docs/decisions/0056-streaming-encrypted-backups.md).
 */
async function guardMigrations(config: Config, file: string): Promise<void> {
  if (!existsSync(file)) return;
  const sqlite = new Database(file);
  try {
    sqlite.pragma('busy_timeout = 5000');
    const state = schemaState(sqlite);
    if (state.newer) {
      throw new ConfigError(`The database in ${config.dataDir} was written by a newer Gatehouse; upgrade Gatehouse to use it.`);
    }
    if (state.applied.length > 0 && state.pending.length > 0) {
      const now = new Date();
      // Nothing else writes now (the pid file is ours): one consistent step is fastest.
      await backupIntoStore({ sqlite, dataDir: config.dataDir, now, secret: configuredSecret(config) ?? null, paced: false });
      pruneBackups(config.dataDir, config.backupKeep, now);
    }
  } finally {
    sqlite.close();
  }
}

/**
 * A plain-http listener that answers 301 to the same path over https, except the local CA
 * (`/ca`, `/ca.pem`: ops/ca-page.ts) and the trust page (`/trust…`: trust/plain-http.ts), which
 * devices need before they can trust the https port.
 * The redirect goes to the host the browser asked for when the served certificate names it (so
 * the name keeps matching), and to the issuer otherwise: echoing any `Host` made it an open
 * redirect (issue 22 review).
 */
async function startRedirect(config: Config, httpsPort: number, served: () => TlsMaterial | undefined): Promise<Server> {
  const server = createServer((request, response) => {
    if (hasLocalCa(config.tls) && answerCaRequest(config.dataDir, request, response)) return;
    if (answerPlainHttpTrust(config, request, response)) return;
    const material = served();
    const asked = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(?::\d+)?$/.exec(request.headers.host ?? '')?.[1]?.toLowerCase();
    const names = material ? certificateNames(material.cert) : { dns: [], ips: [] };
    const known = asked !== undefined && (names.dns.includes(asked.replace(/\.$/, '')) || names.ips.includes(normalizeIp(asked.replace(/^\[|\]$/g, ''))));
    const base = known ? `https://${asked}:${httpsPort}` : config.issuer;
    response.writeHead(301, { location: `${base}${request.url ?? '/'}` }).end();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.httpRedirectPort, config.host, () => resolve());
  });
  return server;
}

function loggerOptions(config: Config) {
  const level = config.env.LOG_LEVEL ?? 'info';
  if (!config.prettyLogs) return { level };
  usePinoWorkerFiles();
  return { level, transport: { target: 'pino-pretty', options: { translateTime: 'SYS:standard', ignore: 'pid,hostname' } } };
}

/**
 * `serve --pretty` formats logs in a worker thread (a pino transport). pino and thread-stream find
 * their worker files from `__dirname`, which the bundle (dist/gatehouse.mjs, an ES module) does
 * not have: they are pointed at the installed files through pino's documented
 * `__bundlerPathsOverrides` (the same files `node_modules` gives the TypeScript sources).
 */
function usePinoWorkerFiles(): void {
  const require = createRequire(import.meta.url);
  const pino = dirname(require.resolve('pino/package.json'));
  const globals = globalThis as { __bundlerPathsOverrides?: Record<string, string> };
  globals.__bundlerPathsOverrides = {
    ...globals.__bundlerPathsOverrides,
    'pino-worker': join(pino, 'lib', 'worker.js'),
    'thread-stream-worker': createRequire(join(pino, 'package.json')).resolve('thread-stream/lib/worker.js'),
    'pino-pretty': require.resolve('pino-pretty'),
  };
}

export async function start(config: Config): Promise<Running> {
  prepareDataDir(config.dataDir);
  // Claimed before the database is opened, so of two servers started at once only one goes on.
  claimServerPidFile(config.dataDir);
  try {
    return await startClaimed(config);
  } catch (error) {
    removePidFile(config.dataDir);
    throw error;
  }
}

async function startClaimed(config: Config): Promise<Running> {
  const postgres = postgresOptions(config.env);
  // Several instances share one database: the token must be the operator's, not one instance's file.
  if (postgres && !config.adminToken) throw new ConfigError(PG_ADMIN_TOKEN_REQUIRED);
  // Refused before connecting: the sealed keys and secrets could not be read or written.
  if (postgres && !keySecretFromEnv(config.env)) throw new ConfigError(MISSING_KEY_SECRET);
  const databaseFile = join(config.dataDir, DATABASE_FILE);
  // PostgreSQL's migrations run once across instances, under an advisory lock (db/postgres.ts);
  // its backups are the operator's pg_dump.
  if (!postgres) await guardMigrations(config, databaseFile);
  let tls = loadTls(config, new Date());
  const db = await openStore({ sqliteFile: databaseFile, postgres });
  // Before anything reads a username: the people of an upgraded directory get theirs (decision 0100).
  const backfillStart = performance.now();
  const usernames = await assignMissingUsernames(db);
  // What `gatehouse rotate-keys` (another process) needs to keep retired keys published long enough.
  await recordAccessTokenTtl(db, config.accessTokenTtl, new Date());
  const adminToken = config.adminToken ? fixedAdminToken(config.adminToken) : fileAdminToken(config.dataDir);
  const app = await buildApp({
    db,
    config,
    adminToken,
    logger: loggerOptions(config),
    startWorkers: true,
    ...(tls ? { https: { key: tls.key, cert: tls.cert } } : {}),
  });
  // A certificate served while running (an ACME one, a renewed local one) goes to every TLS
  // listener and into `running.tls` (the LDAP listener and `running` exist from below on).
  let ldap: LdapListener | undefined;
  // RADIUS (spec radius.md): EAP runs over the appliance CA's own certificate, whatever HTTPS serves.
  let radius: RadiusListener | undefined;
  const served: { running?: Running } = {};
  const swapListener = app.ctx.serveCertificate;
  app.ctx.serveCertificate = (material) => {
    swapListener(material);
    const next = servedMaterial(material.key, material.cert, true);
    ldap?.setTls(next);
    tls = next;
    if (served.running) served.running.tls = next;
  };
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    await app.close();
    await closeStore(db);
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new ConfigError(`Port ${config.port} on ${config.host} is already in use.`);
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') throw new ConfigError(`Cannot listen on host ${config.host}: no such address on this machine.`);
    if (code === 'EACCES') throw new ConfigError(`Not allowed to listen on port ${config.port}; pick a port above 1023.`);
    throw error;
  }
  if (usernames.assigned > 0) {
    app.log.info({ people: usernames.assigned, batches: usernames.batches, ms: Math.round(performance.now() - backfillStart) }, 'usernames assigned to existing people');
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  if (!config.issuerConfigured) config.issuer = defaultIssuer(config.host, port, Boolean(tls));
  const url = defaultIssuer(config.host, port, Boolean(tls));
  await recordServedIssuer(db, config.issuer, new Date());
  // The LDAP directory (spec ldap.md) listens beside HTTP, with the same certificate.
  try {
    // The listeners' code (protocol, search, binds) is loaded only when LDAP is on (decision 0369).
    if (config.ldap.enabled) ldap = await (await import('./ldap/server.js')).startLdap(app.ctx, app.log, tls);
    else await recordLdapOff(app.ctx);
    // The listeners' code (access, sessions, EAP, limits) is loaded only when RADIUS is on (decision 0369).
    if (config.radius.enabled) radius = await (await import('./radius/server.js')).startRadius(app.ctx, app.log, eapMaterial(config, new Date()));
    else await recordRadiusOff(app.ctx);
  } catch (error) {
    await ldap?.stop();
    await app.close();
    await closeStore(db);
    throw error;
  }
  const checkpointer = postgres ? undefined : startCheckpointer(db, databaseFile);
  warnAboutCa(app, config);
  if (config.lowMemory && !lowMemoryActive()) {
    app.log.warn(`GATEHOUSE_LOW_MEMORY is set, but this process runs without ${LOW_MEMORY_NODE_ARGS.join(' ')}; \`gatehouse serve\` and \`npm start\` apply them to themselves.`);
  }

  // Re-issue the LAN certificate while running (expiry, a new address) without a restart.
  const refreshTls = (): boolean => {
    if (!hasLocalCa(config.tls)) return false;
    const now = new Date();
    const next = ensureLocalTls(config.dataDir, config.tls.extraNames, now);
    if (radius && next.caPem && next.issued) radius.setTls({ key: next.key, cert: next.cert, ca: next.caPem });
    // GATEHOUSE_TLS=acme: the local certificate is kept fresh, but serves only without a usable ACME one.
    if (acmeMaterial(config, now)) return false;
    if (!next.issued && running.tls?.cert === next.cert) return false;
    app.ctx.serveCertificate({ key: next.key, cert: next.cert });
    app.log.info({ notAfter: next.notAfter.toISOString() }, 'TLS certificate renewed');
    return true;
  };
  let tlsTimer: NodeJS.Timeout | undefined;
  if (hasLocalCa(config.tls)) {
    tlsTimer = setInterval(() => {
      try {
        refreshTls();
      } catch (error) {
        app.log.error({ err: error }, 'TLS certificate check failed');
      }
    }, TLS_CHECK_MS);
    tlsTimer.unref();
  }
  let redirect: Server | undefined;
  if (tls && config.httpRedirectPort !== undefined) redirect = await startRedirect(config, port, () => running.tls);
  const redirectAddress = redirect?.address();
  if (redirectAddress && typeof redirectAddress === 'object') {
    // Port 0 picked a free one: what the trust page and the panel link to is the real one.
    config.httpRedirectPort = redirectAddress.port;
    const listening = app.ctx.listenAddresses;
    app.ctx.listenAddresses = () => [...listening(), redirectAddress];
  }
  const redirectUrl =
    redirectAddress && typeof redirectAddress === 'object'
      ? defaultIssuer(config.host, redirectAddress.port)
      : undefined;

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      clearInterval(tlsTimer);
      if (redirect) await new Promise((resolve) => redirect!.close(resolve));
      await ldap?.stop();
      await radius?.stop();
      await app.close();
      await checkpointer?.stop();
      await closeStore(db);
      removePidFile(config.dataDir);
    })());
  const running: Running = { app, db, url, config, tls, redirectUrl, ldap, radius, refreshTls, stop };
  served.running = running;
  return running;
}

/** A local CA that should be renewed says so in the log at every start (issue 22). */
function warnAboutCa(app: FastifyInstance, config: Config): void {
  if (!hasLocalCa(config.tls)) return;
  const ca = caStatus(config.dataDir, config.tls.extraNames, new Date());
  if (!ca?.renewalDue) return;
  const why = !ca.nameConstraints
    ? 'it was made by an older Gatehouse without name constraints and can vouch for any site'
    : ca.uncovered.length
      ? `it does not cover ${ca.uncovered.join(', ')}`
      : `it expires at ${ca.notAfter}`;
  app.log.warn(
    { fingerprint: ca.fingerprint },
    `The local CA should be renewed: ${why}. Renew it (POST /api/admin/tls/ca/renew), install the new CA from /ca.pem on every device and remove the old one.`,
  );
}

/** The one human line printed at start-up. */
export function readyLine(running: Running): string {
  const token = running.config.adminTokenSource ? `from ${running.config.adminTokenSource}` : `in ${join(running.config.dataDir, 'admin-token')}`;
  const mode = lowMemoryActive() ? ', low-memory mode' : '';
  const ldapState = running.ldap?.state();
  const ldap = ldapState ? `, LDAP ${[ldapState.url, ldapState.ldapsUrl].filter(Boolean).join(' and ')} (base ${ldapState.baseDn})` : '';
  const radiusState = running.radius?.state();
  const radius = radiusState ? `, RADIUS udp ${radiusState.auth} (accounting ${radiusState.accounting})` : '';
  const line = `Gatehouse listening on ${running.url} — issuer ${running.config.issuer}, control panel ${running.config.issuer}/admin/, data ${running.config.dataDir}, admin token ${token}${mode}${ldap}${radius}`;
  if (!running.tls) return line;
  const ca = running.tls.caPem ? `local CA SHA-256 ${running.tls.fingerprint} (install from ${running.url}/ca.pem)` : `certificate SHA-256 ${running.tls.fingerprint}`;
  return `${line}, ${ca}`;
}
