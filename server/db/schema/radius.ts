/**
 * RADIUS (server/radius/): network certificates and RADIUS sessions.
 */
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { createdAt, timestamp } from './columns.js';
import { people } from './people.js';
import { applications, membershipCredentialColumns } from './applications.js';

/**
 * Personal network certificates (spec radius.md, "EAP-TLS"): issued by the appliance CA to a person
 * for one application, ≤ 1 year; EAP-TLS finds the presented certificate here by its SHA-256
 * fingerprint (unique index) and checks it live: not revoked, not expired, the person active, the
 * membership active. Revoked and expired rows are removed by the retention rule after 30 days. At
 * most NETWORK_CERTIFICATES_PER_PERSON per person; gone with the person, the membership and the
 * application.
 */
export const networkCertificates = sqliteTable(
  'network_certificates',
  {
    id: text('id').primaryKey(),
    ...membershipCredentialColumns(),
    name: text('name').notNull(),
    /** Hex serial number, as certificates show it. */
    serial: text('serial').notNull(),
    /** SHA-256 of the DER certificate, hex lower case. */
    fingerprint: text('fingerprint').notNull(),
    notAfter: timestamp('not_after').notNull(),
    createdAt: createdAt(),
    revokedAt: timestamp('revoked_at'),
    /** Moved at most once a minute. */
    lastUsedAt: timestamp('last_used_at'),
  },
  (t) => [
    uniqueIndex('network_certificates_fingerprint_uq').on(t.fingerprint),
    index('network_certificates_person_idx').on(t.personId, t.createdAt, t.id),
    index('network_certificates_app_idx').on(t.applicationId),
    index('network_certificates_membership_idx').on(t.membershipId),
    index('network_certificates_not_after_idx').on(t.notAfter),
    index('network_certificates_revoked_idx').on(t.revokedAt),
  ],
);

/**
 * RADIUS accounting (RFC 2866; spec radius.md, "Answers"): one row per session a client reports
 * (Acct-Session-Id), for the person its Access-Accept's Class named; updated by Interim-Update and
 * Stop. Kept 30 days after its last report (retention rule); gone with the person and the
 * application.
 */
export const radiusSessions = sqliteTable(
  'radius_sessions',
  {
    id: text('id').primaryKey(),
    personId: text('person_id')
      .notNull()
      .references(() => people.id, { onDelete: 'cascade' }),
    applicationId: text('application_id')
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    clientName: text('client_name').notNull(),
    /** Acct-Session-Id as the client sent it (≤ 253 octets). */
    acctSessionId: text('acct_session_id').notNull(),
    nasAddress: text('nas_address').notNull(),
    /** Calling-Station-Id: the device's MAC address on Wi-Fi, its address on a VPN. */
    callingStationId: text('calling_station_id'),
    startedAt: timestamp('started_at').notNull(),
    updatedAt: timestamp('updated_at').notNull(),
    stoppedAt: timestamp('stopped_at'),
    inputOctets: integer('input_octets').notNull().default(0),
    outputOctets: integer('output_octets').notNull().default(0),
    sessionSeconds: integer('session_seconds').notNull().default(0),
  },
  (t) => [
    uniqueIndex('radius_sessions_key_uq').on(t.applicationId, t.nasAddress, t.acctSessionId),
    index('radius_sessions_person_idx').on(t.personId, t.startedAt, t.id),
    index('radius_sessions_updated_idx').on(t.updatedAt),
  ],
);

export type NetworkCertificate = typeof networkCertificates.$inferSelect;
export type RadiusSession = typeof radiusSessions.$inferSelect;
