/**
 * Read-only status of the appliance's operations for the control panel (issue 25):
 * - `GET /api/admin/keys/schedule`: the signing key's rotation schedule;
 * - `GET /api/admin/backups/status`: the backup schedule, its last and next run, and how backups
 *   are encrypted (a passphrase or key file; without one the server takes none, and says why);
 * - `GET /api/admin/tls`: LAN TLS: the local CA's fingerprint and expiry, what its name constraints
 *   let it vouch for and whether it is due for renewal (issue 22), the served certificate's names
 *   and expiry, and where devices fetch the CA (also over plain http). Renewing the CA is
 *   `POST /api/admin/tls/ca/renew` (ops/plugin.ts), which answers this same document.
 * Admin token only (outside every application's path). Nothing here writes.
 */
import { hasLocalCa } from '../config.js';
import { existsSync, readFileSync } from 'node:fs';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requireAdmin } from '../http/admin-auth.js';
import { adminErrors, iso, NoQuery, NullableTimestamp, Timestamp, adminSecurity as security } from '../http/schemas.js';
import { encryptionSetting, listBackups } from './backup.js';
import { caStatus, certificateSummary, RENEW_BEFORE_DAYS, tlsPaths, type CertificateSummary } from './tls.js';
import type { AppContext } from '../context.js';
import { engineOf } from '../db/store.js';
import { blockedReason, type BackupSchedule } from './backup-schedule.js';
import { activeKey, newestKey, nextRotationAt } from './key-rotation.js';
import { AcmeStatusSchema, TrustLinkSchema } from '../http/lan-trust-wire.js';

const DAY_MS = 24 * 3600 * 1000;
const tags = ['operations'];

const KeyScheduleSchema = Type.Object(
  {
    rotationDays: Type.Integer({ description: 'GATEHOUSE_KEY_ROTATION_DAYS' }),
    activeKid: Type.Union([Type.String(), Type.Null()]),
    activeSince: NullableTimestamp,
    /** When the schedule rotates next; null before the first key exists or when no schedule runs (`gatehouse serve` runs it). */
    nextRotationAt: NullableTimestamp,
  },
  { additionalProperties: false },
);

const BackupStatusSchema = Type.Object(
  {
    scheduled: Type.Boolean({ description: 'automatic backups run (GATEHOUSE_BACKUP_INTERVAL > 0, a data directory, and a passphrase or key file)' }),
    /** Why automatic backups do not run: no passphrase or key file, interval 0, no data directory. */
    blockedReason: Type.Union([Type.String(), Type.Null()]),
    intervalSeconds: Type.Integer(),
    keep: Type.Integer({ description: 'backups kept in <data>/backups/' }),
    passphraseSet: Type.Boolean({ description: 'a passphrase or key file is configured: the server takes backups, always encrypted (without one it takes none)' }),
    encryption: Type.Union([Type.Literal('passphrase'), Type.Literal('key-file'), Type.Null()], {
      description: 'GATEHOUSE_BACKUP_KEY_FILE (wins) or GATEHOUSE_BACKUP_PASSPHRASE; null when neither is set',
    }),
    lastBackupAt: NullableTimestamp,
    lastRun: Type.Union([
      Type.Object({ at: Timestamp, ok: Type.Boolean(), error: Type.Union([Type.String(), Type.Null()]) }, { additionalProperties: false }),
      Type.Null(),
    ]),
    nextRunAt: NullableTimestamp,
  },
  { additionalProperties: false },
);

const CertificateSchema = Type.Object(
  {
    subject: Type.String(),
    fingerprint: Type.String({ description: 'SHA-256, AB:CD:… ' }),
    notBefore: Timestamp,
    notAfter: Timestamp,
    dnsNames: Type.Array(Type.String()),
    ipAddresses: Type.Array(Type.String()),
  },
  { additionalProperties: false },
);

const HostNamesSchema = Type.Object({ dns: Type.Array(Type.String()), ips: Type.Array(Type.String()) }, { additionalProperties: false });

export const TlsStatusSchema = Type.Object(
  {
    mode: Type.Union([Type.Literal('off'), Type.Literal('auto'), Type.Literal('acme'), Type.Literal('files')], { description: 'GATEHOUSE_TLS: off, auto (the local CA), acme (a certificate by ACME DNS-01; the local one serves until it comes), files (your own)' }),
    /** The local CA (mode `auto`); null otherwise. */
    ca: Type.Union([CertificateSchema, Type.Null()]),
    /** The certificate served over HTTPS; null when TLS is off. */
    certificate: Type.Union([CertificateSchema, Type.Null()]),
    /** When the server certificate is re-issued at the latest (mode `auto`). */
    renewsAt: NullableTimestamp,
    /** Where devices download the CA over HTTPS (mode `auto`). */
    caUrl: Type.Union([Type.String(), Type.Null()]),
    /** The same page over plain http, for devices that do not trust the CA yet (GATEHOUSE_HTTP_REDIRECT_PORT). */
    plainHttpCaUrl: Type.Union([Type.String(), Type.Null()]),
    caNameConstraints: Type.Union([HostNamesSchema, Type.Null()], {
      description: 'what the local CA may vouch for (its critical name constraints); null without a local CA, or for one made before them (renew it)',
    }),
    caRenewalDue: Type.Boolean({ description: 'the local CA expires within 60 days, has no name constraints, or leaves names of this machine uncovered' }),
    uncovered: Type.Array(Type.String(), { description: "this machine's names and addresses the local CA does not cover: left out of the certificate until the CA is renewed" }),
    trust: Type.Union([TrustLinkSchema, Type.Null()], { description: 'the trust page devices open to trust the local CA (the panel shows its QR code); null without a local CA' }),
    acme: Type.Union([AcmeStatusSchema, Type.Null()], { description: 'the certificate from the ACME server (GATEHOUSE_TLS=acme); null otherwise' }),
  },
  { additionalProperties: false },
);

const certificateWire = (c: CertificateSummary) => ({
  subject: c.subject,
  fingerprint: c.fingerprint,
  notBefore: c.notBefore.toISOString(),
  notAfter: c.notAfter.toISOString(),
  dnsNames: c.names.dns,
  ipAddresses: c.names.ips,
});

const readSummary = (file: string): CertificateSummary | null => (existsSync(file) ? certificateSummary(readFileSync(file, 'utf8')) : null);

/** The LAN TLS document of `GET /api/admin/tls` (and of a CA renewal's answer). */
export function tlsStatus(ctx: AppContext) {
  const { config } = ctx;
  const mode = config.tls.mode;
  const paths = config.dataDir === ':memory:' ? undefined : tlsPaths(config.dataDir);
  const local = hasLocalCa(config.tls);
  const acmePem = mode === 'acme' ? ctx.lanTrust.acmeCertificate() : null;
  const ca = local && paths ? readSummary(paths.ca) : null;
  const certificate = acmePem ? certificateSummary(acmePem) : local && paths ? readSummary(paths.cert) : mode === 'files' ? readSummary(config.tls.certFile) : null;
  const constraints = hasLocalCa(config.tls) && ca ? caStatus(config.dataDir, config.tls.extraNames, ctx.clock.now()) : undefined;
  const port = config.httpRedirectPort;
  const host = new URL(config.issuer).hostname;
  return {
    mode,
    ca: ca && certificateWire(ca),
    certificate: certificate && certificateWire(certificate),
    renewsAt: local && !acmePem && certificate ? iso(new Date(certificate.notAfter.getTime() - RENEW_BEFORE_DAYS * DAY_MS)) : null,
    caUrl: ca ? `${config.issuer}/ca.pem` : null,
    plainHttpCaUrl: ca && port ? `http://${host.includes(':') ? `[${host}]` : host}:${port}/ca` : null,
    caNameConstraints: constraints?.nameConstraints ?? null,
    caRenewalDue: constraints?.renewalDue ?? false,
    uncovered: constraints?.uncovered ?? [],
    trust: ctx.lanTrust.link(),
    acme: ctx.lanTrust.acme(),
  };
}

export const opsStatusRoutes: FastifyPluginAsyncTypebox<{ schedule: BackupSchedule; workers: boolean }> = async (app, { schedule, workers }) => {
  const { ctx } = app;
  const { config } = ctx;
  app.addHook('onRequest', requireAdmin);

  app.get(
    '/keys/schedule',
    { schema: { tags, security, summary: "The signing key's rotation schedule", querystring: NoQuery, response: { 200: KeyScheduleSchema, ...adminErrors } } },
    async () => {
      // The key signing now; the schedule counts from the newest (a next key already published).
      const active = await activeKey(ctx.db, ctx.clock.now());
      const newest = await newestKey(ctx.db);
      return {
        rotationDays: config.keyRotationDays,
        activeKid: active?.kid ?? null,
        activeSince: iso(active?.createdAt),
        nextRotationAt: newest && workers ? iso(nextRotationAt(newest, config.keyRotationDays)) : null,
      };
    },
  );

  app.get(
    '/backups/status',
    { schema: { tags, security, summary: 'Backup schedule, last and next run, encryption', querystring: NoQuery, response: { 200: BackupStatusSchema, ...adminErrors } } },
    async () => {
      const hasDir = config.dataDir !== ':memory:';
      const newest = hasDir && engineOf(ctx.db) === 'sqlite' ? listBackups(config.dataDir)[0] : undefined;
      return {
        scheduled: schedule.running,
        blockedReason: blockedReason(ctx),
        intervalSeconds: config.backupInterval,
        keep: config.backupKeep,
        passphraseSet: encryptionSetting(config) !== null,
        encryption: encryptionSetting(config),
        lastBackupAt: newest?.createdAt ?? null,
        lastRun: schedule.lastRun ? { at: schedule.lastRun.at.toISOString(), ok: schedule.lastRun.ok, error: schedule.lastRun.error ?? null } : null,
        nextRunAt: iso(schedule.nextRunAt),
      };
    },
  );

  app.get(
    '/tls',
    { schema: { tags, security, summary: 'LAN TLS: CA fingerprint, certificate names and expiry', querystring: NoQuery, response: { 200: TlsStatusSchema, ...adminErrors } } },
    async () => tlsStatus(ctx),
  );
};
