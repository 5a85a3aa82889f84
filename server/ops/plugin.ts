/**
 * Appliance operations over HTTP: `GET /ca.pem` (the local CA for devices to install), the admin
 * backup API (`/api/admin/backups`) and LAN TLS state (`/api/admin/tls`, CA renewal), plus, when
 * workers run, scheduled automatic backups and the signing-key rotation schedule.
 */
import { createReadStream, existsSync, readFileSync } from 'node:fs';
import type { Server as TlsServer } from 'node:tls';
import type { FastifyPluginAsync } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppContext, FeatureOptions } from '../context.js';
import { requireAdmin, actorName } from '../http/admin-auth.js';
import { conflict, notFound, sendProblem } from '../http/problem.js';
import { adminErrors, adminSecurity as security } from '../http/schemas.js';
import { recordAudit } from '../audit/record.js';
import { backupPath, createBackup, listBackups, pruneBackups, storeBackup, type BackupRecord } from './backup.js';
import { BackupIdParams, BackupListSchema, BackupRecordSchema } from './schemas.js';
import { caStatus, renewLocalCa, tlsPaths } from './tls.js';
import { KEY_CHECK_MS, rotateKeyIfDue } from './key-rotation.js';
import { opsStatusRoutes, tlsStatus, TlsStatusSchema } from './status-routes.js';
import { idleSchedule } from './backup-schedule.js';

const tags = ['operations'];

/** Takes a backup of the running database into `<data>/backups/`. */
export async function backupNow(ctx: AppContext, passphrase = ctx.config.backupPassphrase): Promise<BackupRecord> {
  if (ctx.config.dataDir === ':memory:') throw conflict('backups_unavailable', 'This server has no data directory to keep backups in.');
  const now = ctx.clock.now();
  const bytes = await createBackup({ sqlite: ctx.db.$client, dataDir: ctx.config.dataDir, now, passphrase });
  return storeBackup(ctx.config.dataDir, bytes, now);
}

const adminBackupRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { ctx } = app;
  app.addHook('onRequest', requireAdmin);

  app.post(
    '/backups',
    { schema: { tags, security, summary: 'Take a backup now', response: { 201: BackupRecordSchema, ...adminErrors } } },
    async (request, reply) => {
      const record = await backupNow(ctx);
      recordAudit(ctx.db, ctx.clock.now(), { actor: actorName(request.actor), action: 'backup.created', target: record.id, details: { encrypted: record.encrypted } });
      return reply.status(201).header('location', `/api/admin/backups/${record.id}/download`).send(record);
    },
  );

  app.get(
    '/backups',
    { schema: { tags, security, summary: 'List stored backups, newest first', response: { 200: BackupListSchema, ...adminErrors } } },
    async () => ({ backups: listBackups(ctx.config.dataDir), nextCursor: null }),
  );

  app.get(
    '/backups/:id/download',
    {
      schema: {
        tags, security, summary: 'Download a backup file',
        params: BackupIdParams,
        response: { 200: Type.Unknown(), ...adminErrors },
      },
    },
    async (request, reply) => {
      const path = backupPath(ctx.config.dataDir, request.params.id);
      if (!path) throw notFound('backup_not_found', `No backup with id ${request.params.id}.`);
      return reply
        .header('content-type', 'application/octet-stream')
        .header('content-disposition', `attachment; filename="${request.params.id}.gatehouse-backup"`)
        .send(createReadStream(path));
    },
  );
};

/** Renewing the local CA (issue 22); admin token only (API keys are refused outside their application's paths). */
const adminTlsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { ctx } = app;
  app.addHook('onRequest', requireAdmin);

  app.post(
    '/tls/ca/renew',
    {
      schema: {
        tags, security,
        summary: 'Replace the local CA (new key, current names, two years) and serve a certificate from it at once; devices install the new CA',
        response: { 200: TlsStatusSchema, ...adminErrors },
      },
    },
    async (request) => {
      const { tls, dataDir } = ctx.config;
      if (tls.mode !== 'auto' || dataDir === ':memory:') {
        throw conflict('tls_not_local', 'This server has no local certificate authority (GATEHOUSE_TLS is not auto).');
      }
      const now = ctx.clock.now();
      const previous = caStatus(dataDir, tls.extraNames, now)?.fingerprint ?? null;
      const material = renewLocalCa(dataDir, tls.extraNames, now);
      // Served from the next handshake on (the listener is TLS when the mode is auto).
      const server = app.server as unknown as Partial<TlsServer>;
      server.setSecureContext?.({ key: material.key, cert: material.cert });
      recordAudit(ctx.db, now, { actor: actorName(request.actor), action: 'tls.ca_renewed', details: { previousFingerprint: previous, fingerprint: material.fingerprint } });
      request.log.warn({ fingerprint: material.fingerprint }, 'local CA renewed: install the new CA on every device');
      return tlsStatus(ctx);
    },
  );
};

export const opsPlugin: FastifyPluginAsync<FeatureOptions> = async (app, options) => {
  const { ctx } = app;

  app.get('/ca.pem', { schema: { hide: true } }, async (request, reply) => {
    const path = tlsPaths(ctx.config.dataDir).ca;
    if (ctx.config.tls.mode !== 'auto' || !existsSync(path)) {
      return sendProblem(reply, notFound('ca_not_found', 'This server has no local certificate authority.'));
    }
    return reply
      .header('content-type', 'application/x-pem-file')
      .header('content-disposition', 'attachment; filename="gatehouse-ca.pem"')
      .send(readFileSync(path, 'utf8'));
  });

  await app.register(adminBackupRoutes, { prefix: '/api/admin' });
  const schedule = idleSchedule();
  await app.register(opsStatusRoutes, { prefix: '/api/admin', schedule, workers: options.startWorkers });
  await app.register(adminTlsRoutes, { prefix: '/api/admin' });

  if (options.startWorkers) {
    const check = () =>
      rotateKeyIfDue(ctx)
        .then((kid) => kid && app.log.info({ kid }, 'signing key rotated on schedule'))
        .catch((error: unknown) => app.log.error({ err: error }, 'scheduled key rotation failed'));
    // onReady: after the OAuth plugin has created the first key.
    app.addHook('onReady', async () => void check());
    const keyTimer = setInterval(() => void check(), KEY_CHECK_MS);
    keyTimer.unref();
    app.addHook('onClose', async () => clearInterval(keyTimer));
  }

  const { backupInterval, backupKeep, dataDir } = ctx.config;
  if (options.startWorkers && dataDir !== ':memory:' && backupInterval > 0) {
    let running = false;
    schedule.running = true;
    const every = backupInterval * 1000;
    schedule.nextRunAt = new Date(ctx.clock.now().getTime() + every);
    const timer = setInterval(() => {
      schedule.nextRunAt = new Date(ctx.clock.now().getTime() + every);
      if (running) return;
      running = true;
      const at = ctx.clock.now();
      backupNow(ctx)
        .then((record) => {
          pruneBackups(dataDir, backupKeep);
          schedule.lastRun = { at, ok: true };
          app.log.info({ backup: record.id, size: record.size }, 'scheduled backup written');
        })
        .catch((error: unknown) => {
          schedule.lastRun = { at, ok: false, error: error instanceof Error ? error.message : String(error) };
          app.log.error({ err: error }, 'scheduled backup failed');
        })
        .finally(() => {
          running = false;
        });
    }, every);
    timer.unref();
    app.addHook('onClose', async () => clearInterval(timer));
  }
};
