/**
 * What goes when something big is deleted, step by step (purge.ts runs them in bounded batches).
 * The thing itself leaves at once, in the request; these steps remove what hung off it. Every
 * table with a foreign key to `applications`, `memberships` or `groups` must appear in the plan of
 * that kind: the root row is deleted without its cascade, so a table missing here would keep rows
 * that point nowhere. test/unit/data-lifecycle-plans.test.ts reads the foreign keys from the schema and
 * fails, naming the table, until it is registered here (one line). On PostgreSQL these
 * references carry no foreign key at all (scripts/pg-schema.ts leaves them out): the plan is
 * their integrity rule there.
 */
import { eq, sql } from 'drizzle-orm';
import type { SQLiteColumn, SQLiteTable } from 'drizzle-orm/sqlite-core';
import {
  administratorApplications,
  groupMembers,
  administrators,
  linkedAccounts,
  oneTimeTokens,
  passkeys,
  pendingSignIns,
  recoveryCodes,
  secondFactorBackOff,
  sessions,
  totpCredentials,
  apiKeys,
  appPasswords,
  networkCertificates,
  radiusSessions,
  applicationLogos,
  consents,
  backchannelLogouts,
  deviceAuthorizations,
  forwardAuthHosts,
  forwardAuthSessions,
  samlRequests,
  samlSessions,
  samlSubjects,
  invitations,
  memberships,
  refreshTokenFamilies,
  refreshTokens,
  sessionClients,
  sessionRealms,
  webhookDeliveries,
  type PurgeJob,
} from '../db/schema.js';
import { ROW_ID, type BatchStep, type ChildRows } from './batch.js';

export type PurgeKind = PurgeJob['kind'];

export interface PlanStep {
  /** Counted under this name (the `<kind>.purged` audit entry). */
  name: string;
  table: SQLiteTable;
  key: SQLiteColumn | ReturnType<typeof sql>;
  /** Rows whose `column` equals the job's target (or `params[param]`, when given). */
  column: SQLiteColumn;
  param?: string;
  children?: ChildRows[];
  /** Instead of deleting, set these columns (e.g. detach from a deleted membership). */
  set?: Record<string, unknown>;
}


export const PURGE_PLANS: Record<PurgeKind, PlanStep[]> = {
  application: [
    {
      name: 'refreshTokenFamilies', table: refreshTokenFamilies, key: refreshTokenFamilies.id, column: refreshTokenFamilies.applicationId,
      children: [{ table: refreshTokens, key: refreshTokens.tokenHash, column: refreshTokens.familyId }],
    },
    // Before the members they hang off (issue 25: consents and the logo).
    { name: 'consents', table: consents, key: consents.membershipId, column: consents.applicationId },
    { name: 'logo', table: applicationLogos, key: applicationLogos.applicationId, column: applicationLogos.applicationId },
    // Issue 35: its members' app passwords (before the members they hang off).
    { name: 'appPasswords', table: appPasswords, key: appPasswords.id, column: appPasswords.applicationId },
    // Issue 43: its RADIUS network certificates (before the members) and accounting sessions.
    { name: 'networkCertificates', table: networkCertificates, key: networkCertificates.id, column: networkCertificates.applicationId },
    { name: 'radiusSessions', table: radiusSessions, key: radiusSessions.id, column: radiusSessions.applicationId },
    { name: 'members', table: memberships, key: memberships.id, column: memberships.applicationId },
    { name: 'invitations', table: invitations, key: invitations.id, column: invitations.applicationId },
    { name: 'apiKeys', table: apiKeys, key: apiKeys.id, column: apiKeys.applicationId },
    { name: 'webhookDeliveries', table: webhookDeliveries, key: webhookDeliveries.id, column: webhookDeliveries.applicationId },
    { name: 'backchannelLogouts', table: backchannelLogouts, key: backchannelLogouts.id, column: backchannelLogouts.applicationId },
    { name: 'deviceAuthorizations', table: deviceAuthorizations, key: deviceAuthorizations.id, column: deviceAuthorizations.applicationId },
    // Issue 34: the hosts are freed in the deleting transaction itself; their site sessions go here.
    { name: 'forwardAuthHosts', table: forwardAuthHosts, key: forwardAuthHosts.host, column: forwardAuthHosts.applicationId },
    { name: 'forwardAuthSessions', table: forwardAuthSessions, key: forwardAuthSessions.id, column: forwardAuthSessions.applicationId },
    // Issue 42: a SAML SP's requests, SAML sessions and persistent NameIDs.
    { name: 'samlRequests', table: samlRequests, key: samlRequests.handleHash, column: samlRequests.applicationId },
    { name: 'samlSessions', table: samlSessions, key: samlSessions.id, column: samlSessions.applicationId },
    { name: 'samlSubjects', table: samlSubjects, key: ROW_ID, column: samlSubjects.applicationId },
    { name: 'sessionClients', table: sessionClients, key: ROW_ID, column: sessionClients.applicationId },
    { name: 'sessionRealms', table: sessionRealms, key: ROW_ID, column: sessionRealms.realm, param: 'realm' },
    { name: 'administrators', table: administratorApplications, key: ROW_ID, column: administratorApplications.applicationId },
  ],
  sso_group: [{ name: 'sessionRealms', table: sessionRealms, key: ROW_ID, column: sessionRealms.realm, param: 'realm' }],
  // A directory group's members (issue 32): a group may hold everyone in the directory.
  group: [{ name: 'members', table: groupMembers, key: ROW_ID, column: groupMembers.groupId }],
  membership: [
    // Already revoked in the request; the families stay (for reuse detection) without the link.
    { name: 'refreshTokenFamilies', table: refreshTokenFamilies, key: refreshTokenFamilies.id, column: refreshTokenFamilies.membershipId, set: { membershipId: null } },
    // Its device authorizations go with it (their cascade, done here).
    { name: 'deviceAuthorizations', table: deviceAuthorizations, key: deviceAuthorizations.id, column: deviceAuthorizations.membershipId },
    // What the member had approved (issue 25, explicit consent).
    { name: 'consents', table: consents, key: consents.membershipId, column: consents.membershipId },
    // Issue 35: the member's app passwords stop binding with the membership.
    { name: 'appPasswords', table: appPasswords, key: appPasswords.id, column: appPasswords.membershipId },
    // Issue 43: the member's network certificates stop authenticating with the membership.
    { name: 'networkCertificates', table: networkCertificates, key: networkCertificates.id, column: networkCertificates.membershipId },
  ],
  // A person deleted by an administrator (administrators/people-service.ts): everything they had,
  // the tokens first, so nothing issued from a half-removed account stays usable.
  person: [
    {
      name: 'refreshTokenFamilies', table: refreshTokenFamilies, key: refreshTokenFamilies.id, column: refreshTokenFamilies.personId,
      children: [{ table: refreshTokens, key: refreshTokens.tokenHash, column: refreshTokens.familyId }],
    },
    { name: 'deviceAuthorizations', table: deviceAuthorizations, key: deviceAuthorizations.id, column: deviceAuthorizations.personId },
    { name: 'appPasswords', table: appPasswords, key: appPasswords.id, column: appPasswords.personId },
    { name: 'networkCertificates', table: networkCertificates, key: networkCertificates.id, column: networkCertificates.personId },
    { name: 'radiusSessions', table: radiusSessions, key: radiusSessions.id, column: radiusSessions.personId },
    {
      name: 'members', table: memberships, key: memberships.id, column: memberships.personId,
      children: [{ table: consents, key: consents.membershipId, column: consents.membershipId }],
    },
    // Issue 34: forward auth's site sessions, before the sessions they belong to.
    { name: 'forwardAuthSessions', table: forwardAuthSessions, key: forwardAuthSessions.id, column: forwardAuthSessions.personId },
    // Issue 42: SAML sessions (before the sessions they belong to) and persistent NameIDs.
    { name: 'samlSessions', table: samlSessions, key: samlSessions.id, column: samlSessions.personId },
    { name: 'samlSubjects', table: samlSubjects, key: ROW_ID, column: samlSubjects.personId },
    {
      name: 'sessions', table: sessions, key: sessions.id, column: sessions.personId,
      children: [
        { table: sessionRealms, key: ROW_ID, column: sessionRealms.sessionId },
        { table: sessionClients, key: ROW_ID, column: sessionClients.sessionId },
      ],
    },
    { name: 'linkedAccounts', table: linkedAccounts, key: linkedAccounts.id, column: linkedAccounts.personId },
    { name: 'groupMembers', table: groupMembers, key: ROW_ID, column: groupMembers.personId },
    { name: 'totp', table: totpCredentials, key: totpCredentials.personId, column: totpCredentials.personId },
    { name: 'passkeys', table: passkeys, key: passkeys.id, column: passkeys.personId },
    { name: 'recoveryCodes', table: recoveryCodes, key: recoveryCodes.id, column: recoveryCodes.personId },
    { name: 'secondFactorBackOff', table: secondFactorBackOff, key: secondFactorBackOff.personId, column: secondFactorBackOff.personId },
    { name: 'pendingSignIns', table: pendingSignIns, key: pendingSignIns.tokenHash, column: pendingSignIns.personId },
    { name: 'oneTimeTokens', table: oneTimeTokens, key: oneTimeTokens.tokenHash, column: oneTimeTokens.personId },
    { name: 'invitations', table: invitations, key: invitations.id, column: invitations.acceptedBy, set: { acceptedBy: null } },
    {
      name: 'administrators', table: administrators, key: administrators.personId, column: administrators.personId,
      children: [{ table: administratorApplications, key: ROW_ID, column: administratorApplications.personId }],
    },
  ],
};

/** The plan of a job as batch steps. */
export function planSteps(job: Pick<PurgeJob, 'kind' | 'target' | 'params'>): BatchStep[] {
  return PURGE_PLANS[job.kind].map((step) => {
    const value = step.param ? job.params[step.param] : job.target;
    if (value === undefined) throw new Error(`purge job ${job.kind}:${job.target} lacks its "${step.param}" parameter`);
    return { name: step.name, table: step.table, key: step.key, where: eq(step.column, value), children: step.children, set: step.set };
  });
}
