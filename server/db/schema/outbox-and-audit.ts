/**
 * Webhooks and audit: the outboxes (webhook deliveries, back-channel logouts), the audit log
 * and the activity counts.
 */
import { index, integer, primaryKey, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { createdAt, timestamp } from './columns.js';
import { applications } from './applications.js';

/**
 * The delivery state every outbox row carries (webhook deliveries, back-channel logouts), read
 * and written by the one delivery worker (webhooks/worker.ts, webhooks/queries.ts).
 */
const deliveryState = () => ({
  status: text('status').$type<'pending' | 'succeeded' | 'failed'>().notNull().default('pending'),
  attempts: integer('attempts').notNull().default(0),
  nextAttemptAt: timestamp('next_attempt_at').notNull(),
  /** Lease held by a delivery in flight; a crashed worker's lease simply runs out. */
  leaseUntil: timestamp('lease_until'),
  lastAttemptAt: timestamp('last_attempt_at'),
  lastStatusCode: integer('last_status_code'),
  lastError: text('last_error'),
  createdAt: createdAt(),
  deliveredAt: timestamp('delivered_at'),
});

/** The webhook outbox: one row per event per application, written in the change's transaction. */
export const webhookDeliveries = sqliteTable(
  'webhook_deliveries',
  {
    id: text('id').primaryKey(), // event id, sent as `webhook-id`
    applicationId: text('application_id')
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    type: text('type').notNull(),
    /** The exact JSON body sent, so retries are byte-identical. */
    payload: text('payload').notNull(),
    ...deliveryState(),
  },
  (t) => [
    index('webhook_deliveries_due_idx').on(t.status, t.nextAttemptAt),
    index('webhook_deliveries_app_idx').on(t.applicationId, t.createdAt, t.id),
    index('webhook_deliveries_created_idx').on(t.createdAt),
  ],
);

/**
 * The back-channel logout outbox and its delivery log (OpenID Connect Back-Channel Logout 1.0):
 * one row per logout token to send to one application, written in the transaction that ended
 * the session (or suspended/removed the member). The token itself is signed at each attempt
 * (its `exp` is at most 2 minutes away); `id` is its `jti`. Delivered by the webhook worker's
 * machinery (retry schedule, timeout, target rules); finished rows are pruned after 30 days.
 */
export const backchannelLogouts = sqliteTable(
  'backchannel_logouts',
  {
    id: text('id').primaryKey(),
    applicationId: text('application_id')
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    /** The `sub` claim: the person. */
    subject: text('subject').notNull(),
    /** The `sid` claim; null when an administrator suspended or removed the member. */
    sessionId: text('session_id'),
    /** What ended the session (`sign_out`, `password_reset`, `membership_suspended`, …). */
    reason: text('reason').notNull(),
    ...deliveryState(),
  },
  (t) => [
    index('backchannel_logouts_due_idx').on(t.status, t.nextAttemptAt),
    index('backchannel_logouts_app_idx').on(t.applicationId, t.createdAt, t.id),
    index('backchannel_logouts_created_idx').on(t.createdAt),
  ],
);

export const auditLog = sqliteTable(
  'audit_log',
  {
    id: text('id').primaryKey(),
    at: timestamp('at').notNull(),
    /** `admin`, `api_key:<id>`, `person:<id>` or `system`. */
    actor: text('actor').notNull(),
    action: text('action').notNull(),
    /** Not a foreign key: the log outlives deleted applications. */
    applicationId: text('application_id'),
    target: text('target'),
    details: text('details', { mode: 'json' }).$type<Record<string, unknown>>().notNull().default({}),
    /** The client address of the request that made the entry (GATEHOUSE_TRUST_PROXY applies); null for background work and older entries. */
    ip: text('ip'),
  },
  (t) => [
    index('audit_log_at_idx').on(t.at, t.id),
    index('audit_log_app_idx').on(t.applicationId, t.at, t.id),
    // The panel's filters by action and by actor (with a date range) walk only their own entries.
    index('audit_log_action_idx').on(t.action, t.at, t.id),
    index('audit_log_actor_idx').on(t.actor, t.at, t.id),
  ],
);

/**
 * Sign-in activity per UTC day, counted as it happens (server/activity/record.ts), so the panel's
 * charts read at most a few dozen rows and never the audit log. `applicationId` '' is the whole
 * installation. Not a foreign key: the counts outlive a deleted application until retention.
 * Kept as long as the audit log (400 days by default; data-lifecycle/retention-rules.ts).
 */
export const activityDaily = sqliteTable(
  'activity_daily',
  {
    applicationId: text('application_id').notNull(),
    /** Days since 1970-01-01, UTC. */
    day: integer('day').notNull(),
    signIns: integer('sign_ins').notNull().default(0),
    failedSignIns: integer('failed_sign_ins').notNull().default(0),
    /** Distinct people active (signed in, or given tokens) that day. */
    activePeople: integer('active_people').notNull().default(0),
  },
  // The day index serves retention (oldest days first, across applications).
  (t) => [primaryKey({ columns: [t.applicationId, t.day] }), index('activity_daily_day_idx').on(t.day)],
);

/**
 * Who has been counted active today, so each person counts once a day per application (and once
 * for the installation, `applicationId` ''). Only today's and yesterday's rows are needed; older
 * ones are pruned (data-lifecycle/retention-rules.ts).
 */
export const activityPeople = sqliteTable(
  'activity_people',
  {
    day: integer('day').notNull(),
    applicationId: text('application_id').notNull(),
    personId: text('person_id').notNull(),
  },
  (t) => [primaryKey({ columns: [t.day, t.applicationId, t.personId] })],
);

export type WebhookDelivery = typeof webhookDeliveries.$inferSelect;
export type BackchannelLogout = typeof backchannelLogouts.$inferSelect;
export type AuditLogEntry = typeof auditLog.$inferSelect;
