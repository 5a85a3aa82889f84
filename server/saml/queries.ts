/**
 * The SAML identity provider's reads and writes (drizzle over db/schema.ts, through the store's
 * helpers, the same on SQLite and PostgreSQL). Each statement a request runs is served by an index
 * (test/integration/saml-plans.test.ts explains each on both engines):
 * - an SP by its entity ID (`applications_saml_entity_uq`);
 * - a request by its handle (primary key), a request ID once per SP (`saml_requests_request_uq`:
 *   the insert that finds it taken is the replay refusal);
 * - SAML sessions by their SessionIndex (primary key), by Gatehouse session and SP
 *   (`saml_sessions_session_app_uq`), all of a Gatehouse session (its prefix);
 * - persistent NameIDs by SP and person (primary key), by SP and value (`saml_subjects_value_uq`);
 * - logouts in progress by the request they await (`saml_logouts_awaiting_idx`) and by key.
 * The statements of a sign-on round trip are prepared once per database handle (db/prepared.ts,
 * decision 0433): built by drizzle and compiled by SQLite once, not on every request.
 */
import { and, eq, inArray, isNull, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import {
  applications,
  samlLogouts,
  samlRequests,
  samlSessions,
  samlSubjects,
  type Application,
  type SamlLogout,
  type SamlNameIdFormat,
  type SamlRequest,
  type SamlSession,
} from '../db/schema.js';
import { preparedPerDb } from '../db/prepared.js';
import { exec, many, one } from '../db/store.js';
import { randomBase64url, randomToken, sha256 } from '../util/crypto.js';

/**
 * A placeholder where drizzle's types want a value (an update's `set`): drizzle binds it through the
 * column's encoder like any value (`mapUpdateSet` wraps it in a Param of the column).
 */
const placeholderValue = <T>(name: string) => sql.placeholder(name) as unknown as T;

/** A sign-on round trip's statements, with placeholders (the same on both engines). */
const statements = preparedPerDb((db) => {
  const p = sql.placeholder;
  const r = samlRequests;
  const s = samlSessions;
  const subjectKey = and(eq(samlSubjects.applicationId, p('applicationId')), eq(samlSubjects.personId, p('personId')));
  return {
    spByEntityId: db.select().from(applications).where(eq(applications.samlEntityId, p('entityId'))).prepare(),
    recordRequest: db
      .insert(r)
      .values({
        handleHash: p('handleHash'), applicationId: p('applicationId'), requestId: p('requestId'), acsUrl: p('acsUrl'), relayState: p('relayState'),
        forceAuthn: p('forceAuthn'), isPassive: p('isPassive'), mfaClass: p('mfaClass'), nameIdFormat: p('nameIdFormat'),
        createdAt: p('createdAt'), expiresAt: p('expiresAt'),
      })
      .onConflictDoNothing()
      .returning({ handleHash: r.handleHash })
      .prepare(),
    recordAnswered: db
      .insert(r)
      .values({
        handleHash: p('handleHash'), applicationId: p('applicationId'), requestId: p('requestId'), acsUrl: p('acsUrl'), relayState: p('relayState'),
        forceAuthn: p('forceAuthn'), isPassive: p('isPassive'), mfaClass: p('mfaClass'), nameIdFormat: p('nameIdFormat'),
        createdAt: p('createdAt'), expiresAt: p('expiresAt'), answeredAt: p('answeredAt'),
      })
      .onConflictDoNothing()
      .returning({ handleHash: r.handleHash })
      .prepare(),
    requestSeen: db.select({ handleHash: r.handleHash }).from(r).where(and(eq(r.applicationId, p('applicationId')), eq(r.requestId, p('requestId')))).prepare(),
    answerRequest: db.update(r).set({ answeredAt: placeholderValue<Date>('now') }).where(and(eq(r.handleHash, p('handleHash')), isNull(r.answeredAt))).prepare(),
    subject: db.select({ value: samlSubjects.value }).from(samlSubjects).where(subjectKey).prepare(),
    addSubject: db
      .insert(samlSubjects)
      .values({ applicationId: p('applicationId'), personId: p('personId'), value: p('value'), createdAt: p('now') })
      .onConflictDoNothing()
      .prepare(),
    upsertSession: db
      .insert(s)
      .values({
        id: p('id'), sessionId: p('sessionId'), applicationId: p('applicationId'), personId: p('personId'), nameId: p('nameId'),
        nameIdFormat: p('nameIdFormat'), createdAt: p('now'),
      })
      .onConflictDoUpdate({ target: [s.sessionId, s.applicationId], set: { nameId: placeholderValue<string>('nameId'), nameIdFormat: placeholderValue<SamlNameIdFormat>('nameIdFormat'), endedAt: null } })
      .returning({ id: s.id })
      .prepare(),
  };
});

/** The application that is the SP with this entity ID. */
export async function findSpByEntityId(db: Db, entityId: string): Promise<Application | undefined> {
  if (entityId.length > 1024) return undefined;
  return await one(statements(db).spByEntityId, { entityId });
}

export async function findApplication(db: Db, id: string): Promise<Application | undefined> {
  if (id.length > 64) return undefined;
  return await one(db.select().from(applications).where(eq(applications.id, id)));
}

/** Which application has `entityId`, other than `exceptId` (409 `entity_id_in_use`). */
export async function entityIdHolder(db: Db, entityId: string, exceptId: string): Promise<string | undefined> {
  const row = await one(db.select({ id: applications.id }).from(applications).where(eq(applications.samlEntityId, entityId)));
  return row && row.id !== exceptId ? row.id : undefined;
}

// --- Requests ------------------------------------------------------------------------------------

export type NewRequest = Omit<SamlRequest, 'handleHash' | 'answeredAt'>;

/**
 * Records a request (and, for an AuthnRequest, its ID for the SP: replay). Returns its handle, or
 * undefined when the SP's request ID was seen before. It is not answered yet (`answerRequest`).
 */
export async function recordRequest(db: Db, request: NewRequest): Promise<string | undefined> {
  const handle = randomToken();
  const rows = await many(statements(db).recordRequest, { ...request, handleHash: sha256(handle) });
  return rows.length ? handle : undefined;
}

/**
 * Records a request that is answered now, in the answer's transaction (decision 0433: one write
 * where a request recorded first and answered next took two, each its own commit). False when the
 * SP's request ID was seen before (a replay: the transaction is to be rolled back).
 */
export async function recordAnsweredRequest(db: Db, request: NewRequest, now: Date): Promise<boolean> {
  const rows = await many(statements(db).recordAnswered, { ...request, handleHash: sha256(randomToken()), answeredAt: now });
  return rows.length === 1;
}

/** Whether the SP's request ID was recorded before (a replay), read through `saml_requests_request_uq`. */
export async function requestSeen(db: Db, applicationId: string, requestId: string): Promise<boolean> {
  return (await one(statements(db).requestSeen, { applicationId, requestId })) !== undefined;
}

/** A request not answered yet and not expired, by its handle. */
export async function pendingRequest(db: Db, handle: string, now: Date): Promise<SamlRequest | undefined> {
  if (handle.length > 100) return undefined;
  const row = await one(db.select().from(samlRequests).where(eq(samlRequests.handleHash, sha256(handle))));
  return row && row.answeredAt === null && row.expiresAt.getTime() > now.getTime() ? row : undefined;
}

/** Marks the request answered; false when another answer won (one Response per request). */
export async function answerRequest(db: Db, handleHash: string, now: Date): Promise<boolean> {
  return (await exec(statements(db).answerRequest, { handleHash, now })) === 1;
}

// --- NameIDs -------------------------------------------------------------------------------------

/** The person's persistent NameID at the SP, made on first use (an opaque 256-bit value). */
export async function persistentNameId(db: Db, applicationId: string, personId: string, now: Date): Promise<string> {
  const st = statements(db);
  const found = await one(st.subject, { applicationId, personId });
  if (found) return found.value;
  await exec(st.addSubject, { applicationId, personId, value: randomBase64url(32), now });
  return (await one(st.subject, { applicationId, personId }))!.value;
}

// --- SAML sessions -------------------------------------------------------------------------------

/**
 * The SAML session of a Gatehouse session at an SP, made or renewed for a new assertion: its
 * SessionIndex (the row's id) stays, the NameID is the one just issued.
 */
export async function upsertSamlSession(
  db: Db,
  s: { sessionId: string; applicationId: string; personId: string; nameId: string; nameIdFormat: SamlNameIdFormat },
  now: Date,
): Promise<string> {
  const rows = await many(statements(db).upsertSession, { id: `_${randomBase64url(24)}`, ...s, now });
  return rows[0]!.id;
}

export async function samlSessionByIndex(db: Db, sessionIndex: string): Promise<SamlSession | undefined> {
  if (sessionIndex.length > 100) return undefined;
  return await one(db.select().from(samlSessions).where(eq(samlSessions.id, sessionIndex)));
}

/** An SP's SAML sessions with this NameID (a LogoutRequest without SessionIndex). */
export async function samlSessionsByNameId(db: Db, applicationId: string, nameId: string): Promise<SamlSession[]> {
  if (nameId.length > 1024) return [];
  return await many(db.select().from(samlSessions).where(and(eq(samlSessions.applicationId, applicationId), eq(samlSessions.nameId, nameId))));
}

/** The SAML sessions of Gatehouse sessions not told of the end yet, with their SPs' settings. */
export async function liveSamlSessions(db: Db, sessionIds: string[]): Promise<{ s: SamlSession; app: Application }[]> {
  if (!sessionIds.length) return [];
  return await many(db
    .select({ s: samlSessions, app: applications })
    .from(samlSessions)
    .innerJoin(applications, eq(applications.id, samlSessions.applicationId))
    .where(and(inArray(samlSessions.sessionId, sessionIds), isNull(samlSessions.endedAt))));
}

export async function samlSessionsByIds(db: Db, ids: string[]): Promise<{ s: SamlSession; app: Application }[]> {
  if (!ids.length) return [];
  return await many(db.select({ s: samlSessions, app: applications }).from(samlSessions).innerJoin(applications, eq(applications.id, samlSessions.applicationId)).where(inArray(samlSessions.id, ids)));
}

/** Marks SAML sessions told (or telling us) of the logout. */
export async function endSamlSessions(db: Db, ids: string[], now: Date): Promise<void> {
  if (ids.length) await exec(db.update(samlSessions).set({ endedAt: now }).where(and(inArray(samlSessions.id, ids), isNull(samlSessions.endedAt))));
}

// --- Logouts in progress -------------------------------------------------------------------------

/** Records a logout in progress; returns it. */
export async function startLogout(db: Db, row: Omit<SamlLogout, 'handleHash'>): Promise<SamlLogout> {
  const stored = { ...row, handleHash: sha256(randomToken()) };
  await exec(db.insert(samlLogouts).values(stored));
  return stored;
}

/** The logout waiting for the LogoutResponse to `requestId`. */
export async function logoutAwaiting(db: Db, requestId: string): Promise<SamlLogout | undefined> {
  if (requestId.length > 256) return undefined;
  return await one(db.select().from(samlLogouts).where(eq(samlLogouts.awaiting, requestId)));
}

/** Moves a logout on: what is left, the request awaited; false when someone else moved it first. */
export async function advanceLogout(db: Db, handleHash: string, from: string | null, to: { pending: string[]; awaiting: string | null; complete: boolean }): Promise<boolean> {
  const where = from === null ? and(eq(samlLogouts.handleHash, handleHash), isNull(samlLogouts.awaiting)) : and(eq(samlLogouts.handleHash, handleHash), eq(samlLogouts.awaiting, from));
  return (await exec(db.update(samlLogouts).set(to).where(where))) === 1;
}

export async function finishLogout(db: Db, handleHash: string): Promise<void> {
  await exec(db.delete(samlLogouts).where(eq(samlLogouts.handleHash, handleHash)));
}
