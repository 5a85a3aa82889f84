/**
 * Every statement of server/saml/queries.ts is served by an index, on both engines (the module's
 * header names the index of each). The statements are recorded as the functions run them
 * (statementsSent: the SQL the driver receives, prepared-once statements included), then each is
 * explained with its parameters unbound (query-plan.ts). Writes that read no row (a plain INSERT)
 * are checked only for reading no table whole.
 */
import { describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { makeApp } from '../helpers/app.js';
import { signUp } from '../helpers/accounts.js';
import { samlSettings } from '../helpers/saml-sp.js';
import { planOfSent, statementsSent, usesPostgresIndex } from '../helpers/query-plan.js';
import { engineOf, one } from '../../server/db/store.js';
import { sessions } from '../../server/db/schema.js';
import * as q from '../../server/saml/queries.js';

describe('SAML: query plans', () => {
  it('reads SPs, requests, NameIDs, SAML sessions and logouts through their indexes', async () => {
    const t = await makeApp();
    const sqlite = engineOf(t.db) === 'sqlite';
    const entityId = 'https://plans.example.com/saml/metadata';
    const created = await t.admin('POST', '/api/admin/applications', {
      id: 'plans', name: 'Plans', audience: 'https://plans.example.com/api', redirectUris: ['https://plans.example.com/'],
      authPolicy: { signup_policy: 'open' },
      saml: samlSettings({ entityId, acs: [{ url: 'https://plans.example.com/saml/acs', binding: 'HTTP-POST', index: 0 }] }),
    });
    expect(created.statusCode, created.body).toBe(201);
    const signedUp = await signUp(t, { email: 'plans@example.com', name: 'Plans Person', applicationId: 'plans' });
    expect(signedUp.statusCode, signedUp.body).toBe(201);
    const personId = signedUp.json().user.id as string;
    const sessionId = (await one(t.db.select({ id: sessions.id }).from(sessions).where(eq(sessions.personId, personId))))!.id;
    const now = new Date();
    const request = (requestId: string): q.NewRequest => ({
      applicationId: 'plans', requestId, acsUrl: 'https://plans.example.com/saml/acs', relayState: null, forceAuthn: false, isPassive: false,
      mfaClass: null, nameIdFormat: 'persistent', createdAt: now, expiresAt: new Date(now.getTime() + 300_000),
    });
    const logout = {
      sessionId, pending: ['_x'], awaiting: 'lr_1', finish: { kind: 'page' as const, applicationId: 'plans' }, complete: true, startedAt: now,
      deadline: new Date(now.getTime() + 10_000),
    };
    let handle = '';
    let logoutHash = '';

    // [what, the call, SQLite's plan line (null: a write that reads no row), the index PostgreSQL reads (null: likewise)]
    const cases: [string, () => Promise<unknown>, RegExp | null, string | null][] = [
      ['an SP by its entity ID', () => q.findSpByEntityId(t.db, entityId), /SEARCH applications USING INDEX applications_saml_entity_uq \(saml_entity_id=\?\)/, 'applications_saml_entity_uq'],
      ['an application by id', () => q.findApplication(t.db, 'plans'), /SEARCH applications USING INDEX sqlite_autoindex_applications_1 \(id=\?\)/, 'applications_pkey'],
      ['who holds an entity ID', () => q.entityIdHolder(t.db, entityId, 'other'), /SEARCH applications USING (COVERING )?INDEX applications_saml_entity_uq \(saml_entity_id=\?\)/, 'applications_saml_entity_uq'],
      ['a request recorded', async () => (handle = (await q.recordRequest(t.db, request('id_1')))!), null, null],
      ['a request recorded with its answer', () => q.recordAnsweredRequest(t.db, request('id_2'), now), null, null],
      ['a request ID seen at the SP (replay)', () => q.requestSeen(t.db, 'plans', 'id_1'), /SEARCH saml_requests USING (COVERING )?INDEX saml_requests_request_uq \(application_id=\? AND request_id=\?\)/, 'saml_requests_request_uq'],
      ['a pending request by its handle', () => q.pendingRequest(t.db, handle, now), /SEARCH saml_requests USING INDEX sqlite_autoindex_saml_requests_1 \(handle_hash=\?\)/, 'saml_requests_pkey'],
      ['a request answered', () => q.answerRequest(t.db, 'nohandle', now), /SEARCH saml_requests USING INDEX sqlite_autoindex_saml_requests_1 \(handle_hash=\?\)/, 'saml_requests_pkey'],
      ["a person's persistent NameID, made on first use", () => q.persistentNameId(t.db, 'plans', personId, now), /SEARCH saml_subjects USING INDEX sqlite_autoindex_saml_subjects_1 \(application_id=\? AND person_id=\?\)/, 'saml_subjects_application_id_person_id_pk'],
      ['a SAML session made or renewed', () => q.upsertSamlSession(t.db, { sessionId, applicationId: 'plans', personId, nameId: 'n', nameIdFormat: 'persistent' }, now), null, null],
      ['a SAML session by its SessionIndex', () => q.samlSessionByIndex(t.db, '_x'), /SEARCH saml_sessions USING INDEX sqlite_autoindex_saml_sessions_1 \(id=\?\)/, 'saml_sessions_pkey'],
      ["an SP's SAML sessions by NameID", () => q.samlSessionsByNameId(t.db, 'plans', 'n'), /SEARCH saml_sessions USING INDEX saml_sessions_app_name_idx \(application_id=\? AND name_id=\?\)/, 'saml_sessions_app_name_idx'],
      ["the live SAML sessions of Gatehouse sessions", () => q.liveSamlSessions(t.db, [sessionId, 'ses_other']), /SEARCH saml_sessions USING INDEX saml_sessions_session_app_uq \(session_id=\?\)/, 'saml_sessions_session_app_uq'],
      ['SAML sessions by SessionIndex, with their SPs', () => q.samlSessionsByIds(t.db, ['_x', '_y']), /SEARCH saml_sessions USING INDEX sqlite_autoindex_saml_sessions_1 \(id=\?\)/, 'saml_sessions_pkey'],
      ['SAML sessions ended', () => q.endSamlSessions(t.db, ['_x', '_y'], now), /SEARCH saml_sessions USING INDEX sqlite_autoindex_saml_sessions_1 \(id=\?\)/, 'saml_sessions_pkey'],
      ['a logout started', async () => (logoutHash = (await q.startLogout(t.db, logout)).handleHash), null, null],
      ['the logout awaiting a LogoutResponse', () => q.logoutAwaiting(t.db, 'lr_1'), /SEARCH saml_logouts USING INDEX saml_logouts_awaiting_idx \(awaiting=\?\)/, 'saml_logouts_awaiting_idx'],
      ['a logout moved on', () => q.advanceLogout(t.db, logoutHash, 'lr_1', { pending: [], awaiting: null, complete: true }), /SEARCH saml_logouts USING INDEX sqlite_autoindex_saml_logouts_1 \(handle_hash=\?\)/, 'saml_logouts_pkey'],
      ['a logout finished', () => q.finishLogout(t.db, logoutHash), /SEARCH saml_logouts USING INDEX sqlite_autoindex_saml_logouts_1 \(handle_hash=\?\)/, 'saml_logouts_pkey'],
    ];
    for (const [what, call, sqliteDetail, postgresIndex] of cases) {
      const statements = await statementsSent(t.db, call);
      expect(statements.length, what).toBeGreaterThan(0);
      // The function's own reads are the ones named; a write that reads no row checks only that
      // nothing is read whole.
      const main = statements[0]!;
      for (const sql of statements) {
        const plan = await planOfSent(t.db, sql);
        if (sqlite) {
          if (sqliteDetail && sql === main) expect(plan, `${what}: ${sql}`).toMatch(sqliteDetail);
          // No table read whole (a SCAN without an index), whatever else the plan does.
          expect(plan, `${what}: ${sql}`).not.toMatch(/\bSCAN \w+(?! USING)(\s|$)/);
        } else {
          if (postgresIndex && sql === main) expect(usesPostgresIndex(plan, postgresIndex), `${what}: ${sql}\n${plan}`).toBe(true);
          expect(plan, `${what}: ${sql}`).not.toMatch(/Seq Scan/);
        }
      }
    }
    // The writes did what they say (so the plans above are of statements that ran).
    expect(handle).toMatch(/^[\w-]{20,}$/);
    expect(await q.requestSeen(t.db, 'plans', 'id_2')).toBe(true);
    expect(await q.logoutAwaiting(t.db, 'lr_1')).toBeUndefined();
  });
});
