/**
 * Retention: every table that grows with use has a rule here, and only here. A rule names the
 * table, how a row is identified, which setting says how long ended rows are kept
 * (config.retention, RETENTION_ENV), and the condition that picks rows past it; the sweeper
 * (sweeper.ts) deletes them in bounded batches (batch.ts). A new growing table registers one line
 * in RETENTION_RULES (docs/decisions/0057-retention-rules.md); test/unit/data-lifecycle-plans.test.ts
 * checks that every rule's condition is served by an index.
 *
 * Tables that bound themselves and need no rule: `sign_in_back_off` (swept on the way into a
 * password check, accounts/sign-in-back-off.ts), `provider_logins` (expired ones deleted as a new
 * login begins, accounts/providers/logins.ts), `purge_jobs` (a job deletes itself when done),
 * `meta` and `row_counts` (fixed keys), `application_logos` (one per application, at most 100 KB,
 * gone with it: purge-plans.ts), `forward_auth_hosts` (at most 20 per application, gone with it),
 * `saml_signing_keys` (one per rotation), `saml_subjects` (a persistent NameID per person and SAML
 * application, gone with either: purge-plans.ts), `saml_sessions` (gone with their session, below),
 * and the second factors `totp_credentials`, `passkeys` and
 * `recovery_codes` (per person at most one row, 20 passkeys and 10 codes; they go with the person),
 * directory `groups` (at most 1,000) and `group_members` (at most 200 per person; they go with the
 * person and with the group), `directory_sources` (at most ten) and `directory_entries` (one per
 * person or group a source keeps; a sync run drops those whose person or group is gone).
 * Authorization codes live in memory on SQLite.
 *
 * Reuse detection keeps working: a refresh-token family and all its tokens go together, only
 * `tokens` days after the family expired or was revoked, so a rotated token is recognised (and
 * its family revoked) for as long as any of its family is kept.
 */
import { and, inArray, isNull, lt, lte, ne, or, type SQL } from 'drizzle-orm';
import type { RetentionDays } from '../config.js';
import {
  activityDaily,
  activityPeople,
  auditLog,
  authorizationCodes,
  backchannelLogouts,
  consents,
  deviceAuthorizations,
  directorySyncRuns,
  forwardAuthCodes,
  forwardAuthSessions,
  invitations,
  networkCertificates,
  radiusSessions,
  oneTimeTokens,
  pendingSignIns,
  rateLimitWindows,
  refreshTokenFamilies,
  samlLogouts,
  samlRequests,
  samlSessions,
  refreshTokens,
  revokedAccessTokens,
  secondFactorBackOff,
  sessionClients,
  sessionRealms,
  sessions,
  webauthnChallenges,
  webhookDeliveries,
} from '../db/schema.js';
import { ROW_ID, type BatchStep } from './batch.js';

export interface RetentionRule extends Omit<BatchStep, 'where'> {
  /**
   * The setting that says how many days ended rows are kept (0: for ever, the rule is skipped).
   * Without one the rule always runs, with `before` = now (rows that are worthless once past).
   */
  keep?: keyof RetentionDays;
  /** Rows to delete: ended before `before` (now minus the kept days). */
  where: (before: Date, now: Date) => SQL;
}

/** The activity counters' day numbers (activity/record.ts): whole days since 1970-01-01 UTC. */
const dayNumber = (at: Date) => Math.floor(at.getTime() / 86_400_000);

/**
 * How long an authorization code is remembered after issue, spent or not, so a replay revokes
 * its family (oauth/authorize/code.ts `REMEMBER_MS`); its rows go after it (PostgreSQL mode).
 */
export const AUTHORIZATION_CODE_MEMORY_MS = 10 * 60_000;
/** A single logout's round is kept this long after it started (it is over within seconds). */
export const SAML_LOGOUT_KEPT_MS = 3600_000;
/** An explicit consent not used for this long is forgotten (the person is asked again). */
export const CONSENT_UNUSED_MS = 365 * 86_400_000;
/** RADIUS accounting sessions and ended network certificates are kept 30 days (spec radius.md). */
export const RADIUS_KEEP_MS = 30 * 86_400_000;
/** A directory source's sync runs are kept this long. */
export const DIRECTORY_RUNS_KEPT_MS = 90 * 86_400_000;
const familyTokens = [{ table: refreshTokens, key: refreshTokens.tokenHash, column: refreshTokens.familyId }];
const sessionChildren = [
  { table: sessionRealms, key: ROW_ID, column: sessionRealms.sessionId },
  { table: sessionClients, key: ROW_ID, column: sessionClients.sessionId },
  { table: forwardAuthSessions, key: forwardAuthSessions.id, column: forwardAuthSessions.sessionId },
  { table: samlSessions, key: samlSessions.id, column: samlSessions.sessionId },
];

export const RETENTION_RULES: RetentionRule[] = [
  { name: 'refresh token families (expired)', table: refreshTokenFamilies, key: refreshTokenFamilies.id, keep: 'tokens', children: familyTokens, where: (before) => lt(refreshTokenFamilies.expiresAt, before) },
  { name: 'refresh token families (revoked)', table: refreshTokenFamilies, key: refreshTokenFamilies.id, keep: 'tokens', children: familyTokens, where: (before) => lt(refreshTokenFamilies.revokedAt, before) },
  { name: 'one-time links', table: oneTimeTokens, key: oneTimeTokens.tokenHash, keep: 'tokens', where: (before) => lt(oneTimeTokens.expiresAt, before) },
  // A refresh-token family born of a session may outlive it by a few days; it goes on without its
  // `sid` (the foreign key sets it null). Its revocations never need the session: sign-out
  // elsewhere, password changes and resets work by person.
  { name: 'sessions (signed out)', table: sessions, key: sessions.id, keep: 'sessions', children: sessionChildren, where: (before) => lt(sessions.revokedAt, before) },
  { name: 'sessions (expired)', table: sessions, key: sessions.id, keep: 'sessions', children: sessionChildren, where: (before) => lt(sessions.expiresAt, before) },
  { name: 'webhook deliveries', table: webhookDeliveries, key: webhookDeliveries.id, keep: 'webhooks', where: (before) => and(lt(webhookDeliveries.createdAt, before), ne(webhookDeliveries.status, 'pending'))! },
  { name: 'invitations', table: invitations, key: invitations.id, keep: 'invitations', where: (before) => and(inArray(invitations.state, ['pending', 'accepted', 'revoked']), lt(invitations.expiresAt, before))! },
  { name: 'audit entries', table: auditLog, key: auditLog.id, keep: 'audit', where: (before) => lt(auditLog.at, before) },
  // Issue 22: a revoked access token's jti is needed only until the token itself expires.
  { name: 'revoked access tokens', table: revokedAccessTokens, key: ROW_ID, where: (_before, now) => lt(revokedAccessTokens.expiresAt, now) },
  // Issue 24: a device authorization is useless once expired (10 minutes), decided or not; finished
  // back-channel logout deliveries stay as long as webhook deliveries (their log), pending ones until they finish.
  { name: 'device authorizations', table: deviceAuthorizations, key: deviceAuthorizations.id, where: (_before, now) => lt(deviceAuthorizations.expiresAt, now) },
  // Issue 26: authorization codes in PostgreSQL mode, worthless once no longer remembered for replays.
  { name: 'authorization codes', table: authorizationCodes, key: authorizationCodes.codeHash, where: (_before, now) => lt(authorizationCodes.issuedAt, new Date(now.getTime() - AUTHORIZATION_CODE_MEMORY_MS)) },
  { name: 'back-channel logouts', table: backchannelLogouts, key: backchannelLogouts.id, keep: 'webhooks', where: (before) => and(lt(backchannelLogouts.createdAt, before), ne(backchannelLogouts.status, 'pending'))! },
  // Issue 25: daily sign-in counts are kept as long as the audit log; who was counted, only until yesterday.
  { name: 'activity days', table: activityDaily, key: ROW_ID, keep: 'audit', where: (before) => lt(activityDaily.day, dayNumber(before)) },
  { name: 'activity people', table: activityPeople, key: ROW_ID, where: (_before, now) => lt(activityPeople.day, dayNumber(now) - 1) },
  // Issue 25: an approval unused for a year is asked for again (its `last_used_at` moves at most daily).
  { name: 'consents (unused)', table: consents, key: consents.membershipId, where: (_before, now) => lt(consents.lastUsedAt, new Date(now.getTime() - CONSENT_UNUSED_MS)) },
  // Issue 26: a shared rate-limit window (PostgreSQL mode) counts nothing once it has ended.
  { name: 'rate-limit windows', table: rateLimitWindows, key: rateLimitWindows.key, where: (_before, now) => lt(rateLimitWindows.windowEndsAt, now) },
  // Issue 23: a person's count of failed second steps is forgotten a day after the last one, once
  // any lock it set is over (a success deletes it at once: accounts/second-factor/back-off.ts).
  {
    name: 'second-factor back-off (idle)', table: secondFactorBackOff, key: secondFactorBackOff.personId,
    where: (_before, now) =>
      and(
        lt(secondFactorBackOff.lastFailureAt, new Date(now.getTime() - 86_400_000)),
        or(isNull(secondFactorBackOff.lockedUntil), lte(secondFactorBackOff.lockedUntil, now)),
      )!,
  },
  // Issue 26: sign-ins waiting for their second step and WebAuthn challenges live minutes in the
  // database (shared by every instance); once expired they are worthless (accounts/second-factor/pending.ts).
  { name: 'pending second steps', table: pendingSignIns, key: pendingSignIns.tokenHash, where: (_before, now) => lt(pendingSignIns.expiresAt, now) },
  { name: 'WebAuthn challenges', table: webauthnChallenges, key: webauthnChallenges.challengeHash, where: (_before, now) => lt(webauthnChallenges.expiresAt, now) },
  // Issue 34: forward auth's site sessions end with their Gatehouse session (which ends them at
  // once, and whose retention takes them along); one past its own expiry is worthless. The
  // hand-over's codes live 60 seconds.
  { name: 'forward-auth site sessions', table: forwardAuthSessions, key: forwardAuthSessions.id, where: (_before, now) => lt(forwardAuthSessions.expiresAt, now) },
  // Issue 43: RADIUS accounting sessions are shown for 30 days after their last report; a network
  // certificate is listed for 30 days after it was revoked or expired (it authenticates nothing then).
  { name: 'RADIUS sessions', table: radiusSessions, key: radiusSessions.id, where: (_before, now) => lt(radiusSessions.updatedAt, new Date(now.getTime() - RADIUS_KEEP_MS)) },
  { name: 'network certificates (expired)', table: networkCertificates, key: networkCertificates.id, where: (_before, now) => lt(networkCertificates.notAfter, new Date(now.getTime() - RADIUS_KEEP_MS)) },
  { name: 'network certificates (revoked)', table: networkCertificates, key: networkCertificates.id, where: (_before, now) => lt(networkCertificates.revokedAt, new Date(now.getTime() - RADIUS_KEEP_MS)) },
  { name: 'forward-auth codes', table: forwardAuthCodes, key: forwardAuthCodes.codeHash, where: (_before, now) => lt(forwardAuthCodes.expiresAt, now) },
  // Issue 47: a directory source's sync runs (their conflicts and skipped entries) are kept 90 days.
  { name: 'directory sync runs', table: directorySyncRuns, key: directorySyncRuns.id, where: (_before, now) => and(lt(directorySyncRuns.startedAt, new Date(now.getTime() - DIRECTORY_RUNS_KEPT_MS)), ne(directorySyncRuns.state, 'running'))! },
  // Issue 42: an AuthnRequest's ID is kept for replays, and its sign-on waits, until it expires
  // (saml/sso.ts REQUEST_TTL_MS); a single logout's round is over within seconds, kept an hour.
  { name: 'SAML requests', table: samlRequests, key: samlRequests.handleHash, where: (_before, now) => lt(samlRequests.expiresAt, now) },
  { name: 'SAML logouts', table: samlLogouts, key: samlLogouts.handleHash, where: (_before, now) => lt(samlLogouts.startedAt, new Date(now.getTime() - SAML_LOGOUT_KEPT_MS)) },
];
