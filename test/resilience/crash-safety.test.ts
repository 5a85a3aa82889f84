/**
 * Crash safety (issue 9, item 2): the built server runs on one data directory under a mixed
 * write load from concurrent clients (sign-ups, invitations, member role changes, code
 * exchanges and refresh grants with rotation) and is SIGKILLed at random moments, then started
 * again on the same directory. Each client keeps a ledger of what it was told: a write counts as
 * acknowledged only when its whole response reached the client.
 *
 * After every kill the store passes `PRAGMA integrity_check` and `foreign_key_check`. At the end:
 * - every acknowledged sign-up (person and membership) and invitation is stored, and no sign-up,
 *   answered or cut off, is half-written;
 * - every member's role is the last acknowledged one, or the one of a later request whose
 *   answer the kill swallowed (it may or may not have committed);
 * - refresh-token families are whole: each holds exactly one unrotated token (rotation marks
 *   the old token and stores its successor in one transaction); every acknowledged rotation is
 *   stored (the token it replaced is rotated); authorization codes are in memory
 *   (oauth/authorize/code.ts), so a kill between authorize and exchange loses the code only;
 * - the latest token each client was given works exactly once (then reuse revokes the family),
 *   unless the client's next refresh was cut off by a kill after it committed: then the client
 *   holds a rotated token, presenting it is reuse and revokes the family. That is the only
 *   refusal accepted, and the test checks in the store that the token really was rotated.
 */
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ensureBuilt, removeTempDirs, tempDir, type ServerProcess } from '../helpers/server-process.js';
import { sha256 } from '../../server/util/crypto.js';
import {
  adminCall, authorizationCode, codeExchange, refreshGrant, sessionCookie, sigkill, signUp, spaApplication, startGatehouse,
  tokenCall, type Answer,
} from './real-server.js';

const KILLS = 4;
// Each kill lands at a random moment measured in progress, not time, so a slow machine still
// kills under load: once every kind of write has been answered in this lifetime and a random
// number of answers have come back, plus a random delay.
const KILL_AFTER_ANSWERS = { min: 20, max: 80 };
const KILL_JITTER_MS = 100;
const SIGN_UP_CLIENTS = 2;
const ROLE_CLIENTS = 3;
const CHAINS = 6;
const ENV = { GATEHOUSE_SIGN_UP_RATE_LIMIT: '100000', GATEHOUSE_TOKEN_FAILURE_LIMIT: '100000' };

type Role = 'member' | 'admin';

/** One server lifetime: clients stop issuing requests once it is marked killed. */
interface Phase {
  url: string;
  killed: boolean;
  /** Answers received in this lifetime, and of which kinds of write. */
  answers: number;
  kinds: Set<Kind>;
}

const KINDS = ['sign-up', 'invitation', 'role', 'token'] as const;
type Kind = (typeof KINDS)[number];

interface Chain {
  /** The latest refresh token the client was given (undefined: it must exchange a new code). */
  token: string | undefined;
  /** Whether the last refresh with `token` was cut off (it may have rotated it). */
  lost: boolean;
  /** Tokens the client saw rotated: each was answered with a successor. */
  rotated: string[];
  /** Tokens refused after a cut-off refresh: a legitimate reuse. */
  reused: string[];
}

const ledger = {
  people: new Set<string>(),
  invitations: new Map<string, string>(),
  roles: new Map<string, { acked: Role; unacked: Set<Role>; sent: number }>(),
  chains: [] as Chain[],
  lost: 0,
};

let server: ServerProcess | undefined;
beforeAll(() => ensureBuilt(), 300_000);
afterAll(async () => {
  await server?.stop();
  removeTempDirs();
});

/** A request the kill may cut off: undefined then (connection refused, reset, or body cut). */
async function attempt(phase: Phase, kind: Kind, call: (url: string) => Promise<Answer>): Promise<Answer | undefined> {
  try {
    const res = await call(phase.url);
    phase.answers += 1;
    phase.kinds.add(kind);
    return res;
  } catch (error) {
    if (phase.killed && error instanceof TypeError) {
      ledger.lost += 1;
      return undefined;
    }
    throw error;
  }
}

async function signUpClient(phase: Phase, client: number): Promise<void> {
  for (let n = 0; !phase.killed; n++) {
    const email = `signup-${client}-${n}-${Date.now()}@example.com`;
    const res = await attempt(phase, 'sign-up', (url) => signUp(url, email, 'notes'));
    if (!res) return;
    expect([res.status, res.body]).toMatchObject([201, { user: { email } }]);
    ledger.people.add(email);
  }
}

async function invitationClient(phase: Phase): Promise<void> {
  for (let n = 0; !phase.killed; n++) {
    const emails = [`invitee-${n}-a-${Date.now()}@example.com`, `invitee-${n}-b-${Date.now()}@example.com`];
    const res = await attempt(phase, 'invitation', (url) => adminCall(url, 'POST', '/api/admin/applications/notes/invitations', { emails, role: 'member' }));
    if (!res) return;
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    for (const invitation of res.body.invitations) ledger.invitations.set(invitation.id, invitation.email);
  }
}

async function roleClient(phase: Phase, memberId: string): Promise<void> {
  const state = ledger.roles.get(memberId)!;
  while (!phase.killed) {
    const role: Role = state.sent++ % 2 === 0 ? 'admin' : 'member';
    const res = await attempt(phase, 'role', (url) => adminCall(url, 'PATCH', `/api/admin/applications/notes/users/${memberId}`, { role }));
    if (!res) {
      state.unacked.add(role);
      return;
    }
    expect([res.status, res.body.role]).toEqual([200, role]);
    state.acked = role;
    state.unacked.clear();
  }
}

async function chainClient(phase: Phase, chain: Chain, cookie: string): Promise<void> {
  while (!phase.killed) {
    if (!chain.token) {
      const res = await attempt(phase, 'token', async (url) => tokenCall(url, codeExchange('notes', await authorizationCode(url, cookie, 'notes'))));
      if (!res) return;
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      chain.token = res.body.refresh_token;
      continue;
    }
    const presented = chain.token;
    const res = await attempt(phase, 'token', (url) => tokenCall(url, refreshGrant('notes', presented)));
    if (!res) {
      chain.lost = true;
      return;
    }
    if (chain.lost && res.status === 400 && res.body.error === 'invalid_grant') {
      chain.reused.push(presented);
      chain.token = undefined;
    } else {
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      chain.rotated.push(presented);
      chain.token = res.body.refresh_token;
    }
    chain.lost = false;
  }
}

const between = (min: number, max: number) => min + Math.floor(Math.random() * (max - min + 1));

async function answered(phase: Phase, count: number): Promise<void> {
  while (phase.answers < count || phase.kinds.size < KINDS.length) await sleep(5);
}

function openStore(dataDir: string) {
  return new Database(join(dataDir, 'gatehouse.db'), { readonly: true });
}

function expectSound(dataDir: string): void {
  const db = openStore(dataDir);
  try {
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    expect(db.pragma('foreign_key_check')).toEqual([]);
  } finally {
    db.close();
  }
}

it(`keeps every acknowledged write through ${KILLS} SIGKILLs under a mixed write load`, async () => {
  const dataDir = tempDir('gatehouse-crash-');
  server = await startGatehouse(dataDir, ENV);

  // Set-up: an application, members whose roles will flip, a person whose session feeds the chains.
  expect((await adminCall(server.url, 'POST', '/api/admin/applications', spaApplication('notes'))).status).toBe(201);
  const seed = await Promise.all(
    Array.from({ length: ROLE_CLIENTS + 1 }, (_, i) => signUp(server!.url, `seed-${i}@example.com`, 'notes')),
  );
  for (const res of seed) expect(res.status).toBe(201);
  const cookie = sessionCookie(seed[ROLE_CLIENTS]!);
  const members = (await adminCall(server.url, 'GET', '/api/admin/applications/notes/users')).body.users as { id: string; email: string }[];
  const roleMembers = members.filter((m) => /^seed-[0-9]+@/.test(m.email) && m.email !== `seed-${ROLE_CLIENTS}@example.com`);
  expect(roleMembers).toHaveLength(ROLE_CLIENTS);
  for (const m of roleMembers) ledger.roles.set(m.id, { acked: 'member', unacked: new Set(), sent: 0 });
  for (const s of seed) ledger.people.add(s.body.user.email);
  ledger.chains = Array.from({ length: CHAINS }, () => ({ token: undefined, lost: false, rotated: [], reused: [] }));

  const killedAt: string[] = [];
  const restartMs: number[] = [];
  for (let kill = 0; kill < KILLS; kill++) {
    const phase: Phase = { url: server.url, killed: false, answers: 0, kinds: new Set() };
    const clients = Promise.all([
      ...Array.from({ length: SIGN_UP_CLIENTS }, (_, i) => signUpClient(phase, kill * SIGN_UP_CLIENTS + i)),
      invitationClient(phase),
      ...roleMembers.map((m) => roleClient(phase, m.id)),
      ...ledger.chains.map((chain) => chainClient(phase, chain, cookie)),
    ]);
    const after = between(KILL_AFTER_ANSWERS.min, KILL_AFTER_ANSWERS.max);
    const jitter = between(0, KILL_JITTER_MS);
    killedAt.push(`${after} answers + ${jitter} ms`);
    // A client failing early ends the test at once (its error), rather than after the kill.
    await Promise.race([answered(phase, after).then(() => sleep(jitter)), clients]);
    phase.killed = true;
    await sigkill(server);
    await clients;
    expectSound(dataDir);
    const started = Date.now();
    server = await startGatehouse(dataDir, ENV);
    restartMs.push(Date.now() - started);
  }

  // The load really ran and the kills really cut requests off.
  const rotations = ledger.chains.reduce((n, c) => n + c.rotated.length, 0);
  const reuses = ledger.chains.reduce((n, c) => n + c.reused.length, 0);
  const summary = { killedAt, restartMs, people: ledger.people.size, invitations: ledger.invitations.size, rotations, reuses, lost: ledger.lost };
  console.info('crash-safety', JSON.stringify(summary));
  expect(ledger.lost, JSON.stringify(summary)).toBeGreaterThanOrEqual(KILLS);
  expect(ledger.people.size).toBeGreaterThan(ROLE_CLIENTS + 1);
  expect(ledger.invitations.size).toBeGreaterThan(0);
  expect(rotations).toBeGreaterThan(0);

  const db = openStore(dataDir);
  try {
    // Acknowledged sign-ups: the person and their membership.
    const person = db.prepare(
      "SELECT p.email FROM people p JOIN memberships m ON m.person_id = p.id AND m.application_id = 'notes' WHERE p.email = ?",
    );
    const missingPeople = [...ledger.people].filter((email) => !person.get(email));
    expect(missingPeople).toEqual([]);

    // No sign-up is half there, answered or not: person, password, membership, session, audit entry.
    const partial = db
      .prepare(
        `SELECT p.email FROM people p WHERE
           NOT EXISTS (SELECT 1 FROM linked_accounts a WHERE a.person_id = p.id AND a.provider = 'credential')
           OR NOT EXISTS (SELECT 1 FROM memberships m WHERE m.person_id = p.id AND m.application_id = 'notes')
           OR NOT EXISTS (SELECT 1 FROM sessions s WHERE s.person_id = p.id)
           OR NOT EXISTS (SELECT 1 FROM audit_log l WHERE l.target = p.id AND l.action = 'person.signed_up')`,
      )
      .all();
    expect(partial).toEqual([]);

    // Acknowledged invitations, still pending.
    const invitation = db.prepare("SELECT email, state FROM invitations WHERE id = ? AND application_id = 'notes'");
    for (const [id, email] of ledger.invitations) expect(invitation.get(id), id).toEqual({ email, state: 'pending' });

    // Roles: the last acknowledged one, or a later one whose answer was cut off.
    for (const [id, state] of ledger.roles) {
      const stored = db.prepare('SELECT role FROM memberships WHERE id = ?').get(id) as { role: Role };
      expect([state.acked, ...state.unacked], id).toContain(stored.role);
    }

    // Families are whole: exactly one unrotated token each.
    const broken = db
      .prepare(
        `SELECT f.id, SUM(t.rotated_at IS NULL) AS unrotated FROM refresh_token_families f
         LEFT JOIN refresh_tokens t ON t.family_id = f.id GROUP BY f.id HAVING unrotated IS NOT 1`,
      )
      .all();
    expect(broken).toEqual([]);

    const token = db.prepare(
      `SELECT t.rotated_at AS rotatedAt, f.revoked_reason AS revokedReason FROM refresh_tokens t
       JOIN refresh_token_families f ON f.id = t.family_id WHERE t.token_hash = ?`,
    );
    const stateOf = (value: string) => token.get(sha256(value)) as { rotatedAt: number | null; revokedReason: string | null } | undefined;
    for (const chain of ledger.chains) {
      // Every acknowledged rotation is stored.
      for (const old of chain.rotated) expect(stateOf(old)?.rotatedAt, 'acknowledged rotation').not.toBeNull();
      // A refusal was accepted only for a token the store shows rotated, its family revoked as reused.
      for (const reused of chain.reused) expect(stateOf(reused)).toMatchObject({ rotatedAt: expect.any(Number), revokedReason: 'refresh_token_reused' });
    }

    // The latest token of each client: works exactly once, or (cut off after commit) is a reuse.
    for (const chain of ledger.chains) {
      if (!chain.token) continue;
      const before = stateOf(chain.token);
      expect(before, 'acknowledged latest token').toBeDefined();
      expect(before!.revokedReason).toBeNull();
      if (!chain.lost) expect(before!.rotatedAt, 'an acknowledged latest token is unrotated').toBeNull();
      const first = await tokenCall(server.url, refreshGrant('notes', chain.token));
      if (before!.rotatedAt === null) {
        expect(first.status, JSON.stringify(first.body)).toBe(200);
        const again = await tokenCall(server.url, refreshGrant('notes', chain.token));
        expect([again.status, again.body.error]).toEqual([400, 'invalid_grant']);
        const successor = await tokenCall(server.url, refreshGrant('notes', first.body.refresh_token));
        expect([successor.status, successor.body.error]).toEqual([400, 'invalid_grant']);
      } else {
        expect([first.status, first.body.error]).toEqual([400, 'invalid_grant']);
      }
      expect(stateOf(chain.token)!.revokedReason).toBe('refresh_token_reused');
    }
  } finally {
    db.close();
  }
  expectSound(dataDir);
}, 60_000);
