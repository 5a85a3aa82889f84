/**
 * Appliance operations over HTTP: `GET /ca.pem` (the local CA for devices to install), the admin
 * backup API (`/api/admin/backups`), LAN TLS state (`/api/admin/tls`, CA renewal) and the data
 * lifecycle (`/api/admin/operations`: sweeper, deletes under way), plus, when workers run, the
 * background jobs: scheduled backups, the signing-key rotation schedule, the retention sweeper
 * and the purge of big deletes.
 */
import { hasLocalCa } from '../config.js';
import { engineOf, singleton } from '../db/store.js';
import { createReadStream, existsSync, readFileSync } from 'node:fs';
import type { FastifyPluginAsync } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { FeatureOptions } from '../context.js';
import { requireAdmin, actorName } from '../http/admin-auth.js';
import { conflict, notFound, sendProblem } from '../http/problem.js';
import { adminErrors, adminSecurity as security, NoQuery } from '../http/schemas.js';
import { recordAudit } from '../audit/record.js';
import { Sweeper } from '../data-lifecycle/sweeper.js';
import { pendingPurges, Purger } from '../data-lifecycle/purge.js';
import { backupPath, listBackups } from './backup.js';
import { backupNow, backupsUsePgDump, idleSchedule, startBackupSchedule } from './backup-schedule.js';
import { BackupIdParams, BackupListSchema, BackupRecordSchema, OperationsSchema, SweeperStatusSchema } from './schemas.js';
import { caStatus, renewLocalCa, tlsPaths } from './tls.js';
import { KEY_CHECK_MS, rotateKeyIfDue } from './key-rotation.js';
import { opsStatusRoutes, tlsStatus, TlsStatusSchema } from './status-routes.js';
import { registerStateGauges } from './state-gauges.js';

const tags = ['operations'];

/** The 409s of the backup actions, named in the OpenAPI document. */
const backupConflict = Type.Ref('Problem', {
  description:
    '`backup_encryption_required`: no GATEHOUSE_BACKUP_PASSPHRASE or GATEHOUSE_BACKUP_KEY_FILE is set (the server writes no unencrypted backup); ' +
    '`backups_unavailable`: the server has no data directory; ' +
    '`backups_use_pg_dump`: PostgreSQL mode (GATEHOUSE_DATABASE_URL), where the database is backed up with pg_dump and the server takes no backups of its own.',
});

const adminOpsRoutes = (sweeper: Sweeper): FastifyPluginAsyncTypebox => async (app) => {
  const { ctx } = app;
  app.addHook('onRequest', requireAdmin);

  app.post(
    '/backups',
    {
      schema: {
        tags, security, summary: 'Take a backup now (needs GATEHOUSE_BACKUP_PASSPHRASE or GATEHOUSE_BACKUP_KEY_FILE; not in PostgreSQL mode)',
        response: { 201: BackupRecordSchema, ...adminErrors, 409: backupConflict },
      },
    },
    async (request, reply) => {
      const record = await backupNow(ctx);
      await recordAudit(ctx.db, ctx.clock.now(), { actor: actorName(request.actor), action: 'backup.created', target: record.id, details: { encrypted: record.encrypted } });
      return reply.status(201).header('location', `/api/admin/backups/${record.id}/download`).send(record);
    },
  );

  app.get(
    '/backups',
    { schema: { tags, security, summary: 'List stored backups, newest first (none in PostgreSQL mode: pg_dump takes them)', response: { 200: BackupListSchema, ...adminErrors } } },
    async () => ({ backups: engineOf(ctx.db) === 'postgres' ? [] : listBackups(ctx.config.dataDir), nextCursor: null }),
  );

  app.get(
    '/backups/:id/download',
    {
      schema: {
        tags, security, summary: 'Download a backup file',
        params: BackupIdParams,
        response: { 200: Type.Unknown(), ...adminErrors, 409: backupConflict },
      },
    },
    async (request, reply) => {
      if (engineOf(ctx.db) === 'postgres') throw backupsUsePgDump();
      const path = backupPath(ctx.config.dataDir, request.params.id);
      if (!path) throw notFound('backup_not_found', `No backup with id ${request.params.id}.`);
      return reply
        .header('content-type', 'application/octet-stream')
        .header('content-disposition', `attachment; filename="${request.params.id}.gatehouse-backup"`)
        .send(createReadStream(path));
    },
  );

  const sweeperStatus = async () => ({ ...await sweeper.status(), retentionDays: ctx.config.retention });

  app.get(
    '/operations',
    {
      schema: {
        tags, security, summary: 'Retention sweeper and deletes under way (backups: GET /api/admin/backups/status)',
        querystring: NoQuery, response: { 200: OperationsSchema, ...adminErrors },
      },
    },
    async () => ({
      sweeper: await sweeperStatus(),
      deletions: (await pendingPurges(ctx.db)).map((job) => ({
        kind: job.kind, target: job.target, requestedAt: job.requestedAt.toISOString(), requestedBy: job.actor, removed: job.removed,
      })),
    }),
  );

  app.post(
    '/operations/sweep',
    {
      schema: {
        tags, security, summary: 'Start a retention sweep now (or join the one under way); poll GET /api/admin/operations',
        querystring: NoQuery, response: { 202: SweeperStatusSchema, ...adminErrors },
      },
    },
    async (_request, reply) => {
      void sweeper.runNow();
      return reply.status(202).header('location', '/api/admin/operations').send(await sweeperStatus());
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
      if (!hasLocalCa(tls) || dataDir === ':memory:') {
        throw conflict('tls_not_local', 'This server has no local certificate authority (GATEHOUSE_TLS is not auto).');
      }
      const now = ctx.clock.now();
      const previous = caStatus(dataDir, tls.extraNames, now)?.fingerprint ?? null;
      const material = renewLocalCa(dataDir, tls.extraNames, now);
      // Served from the next handshake on (the listener is TLS when the mode is auto), unless an
      // ACME certificate serves (GATEHOUSE_TLS=acme): the local one is then only the fallback.
      if (tls.mode === 'auto' || !ctx.lanTrust.acmeCertificate()) ctx.serveCertificate({ key: material.key, cert: material.cert });
      await recordAudit(ctx.db, now, { actor: actorName(request.actor), action: 'tls.ca_renewed', details: { previousFingerprint: previous, fingerprint: material.fingerprint } });
      request.log.warn({ fingerprint: material.fingerprint }, 'local CA renewed: install the new CA on every device');
      return tlsStatus(ctx);
    },
  );
};

export const opsPlugin: FastifyPluginAsync<FeatureOptions> = async (app, options) => {
  const { ctx } = app;
  const sweeper = new Sweeper(ctx.db, ctx.config, ctx.clock, app.log);
  registerStateGauges(ctx);

  app.get('/ca.pem', { schema: { hide: true } }, async (request, reply) => {
    const path = tlsPaths(ctx.config.dataDir).ca;
    if (!hasLocalCa(ctx.config.tls) || !existsSync(path)) {
      return sendProblem(reply, notFound('ca_not_found', 'This server has no local certificate authority.'));
    }
    return reply
      .header('content-type', 'application/x-pem-file')
      .header('content-disposition', 'attachment; filename="gatehouse-ca.pem"')
      .send(readFileSync(path, 'utf8'));
  });

  await app.register(adminOpsRoutes(sweeper), { prefix: '/api/admin' });
  const schedule = idleSchedule();
  await app.register(opsStatusRoutes, { prefix: '/api/admin', schedule, workers: options.startWorkers });
  await app.register(adminTlsRoutes, { prefix: '/api/admin' });
  // A sweep started on demand (even without the schedule) ends before the database closes.
  app.addHook('onClose', async () => sweeper.stop());

  if (!options.startWorkers) return;

  // One instance at a time on a shared database (db/store.ts `singleton`).
  const check = () =>
    singleton(ctx.db, 'key-rotation', () => rotateKeyIfDue(ctx))
      .then((job) => job.ran && job.value && app.log.info({ kid: job.value }, 'signing key rotated on schedule'))
      .catch((error: unknown) => app.log.error({ err: error }, 'scheduled key rotation failed'));
  // onReady: after the OAuth plugin has created the first key.
  app.addHook('onReady', async () => void check());
  const keyTimer = setInterval(() => void check(), KEY_CHECK_MS);
  keyTimer.unref();

  const purger = new Purger(ctx, app.log);
  ctx.wakePurger = () => purger.wake();
  let stopBackups = async () => {};
  app.addHook('onReady', async () => {
    await purger.start(); // resumes deletes a crash interrupted
    sweeper.start();
    stopBackups = await startBackupSchedule(ctx, app.log, schedule);
  });
  app.addHook('onClose', async () => {
    clearInterval(keyTimer);
    await Promise.all([purger.stop(), stopBackups()]);
  });
};
