/**
 * Races (issue 9, item 3) against the built server in its own process, over real sockets: each
 * round sends its requests at once on separate connections and only then awaits the answers.
 * - one refresh token presented 20 times: exactly one 200, nineteen 400 `invalid_grant`, and the
 *   family is revoked as reused (the winner's new refresh token fails too);
 * - one authorization code presented 20 times: exactly one 200, and the family its exchange
 *   started is revoked (its refresh token fails);
 * - two admins creating the same application id: one 201, one 409 `application_exists`; the
 *   same audience under two ids: one 201, one 409 `audience_in_use`;
 * - one e-mail signed up 5 times at once (argon2 runs between the check and the insert): one
 *   201, four 409 `email_in_use`; one address invited by two admins at once: one invitation;
 * - a second server on the same data directory refuses to start (two processes would race each
 *   other's read-then-write transactions into 500s), while the first keeps serving.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, ensureBuilt, removeTempDirs, runCli, tempDir, type ServerProcess } from '../helpers/server-process.js';
import { sha256 } from '../../server/util/crypto.js';
import {
  adminCall, authorizationCode, codeExchange, refreshGrant, sessionCookie, signUp, spaApplication, startGatehouse, tokenCall,
  type Answer,
} from './real-server.js';

const RACERS = 20;
let server: ServerProcess;
let dataDir: string;
let cookie: string;

beforeAll(async () => {
  ensureBuilt();
  dataDir = tempDir('gatehouse-races-');
  // The limiters would answer 429 once the losers add up; these tests count losers exactly.
  server = await startGatehouse(dataDir, { GATEHOUSE_TOKEN_FAILURE_LIMIT: '10000', GATEHOUSE_SIGN_UP_RATE_LIMIT: '10000' });
  expect((await adminCall(server.url, 'POST', '/api/admin/applications', spaApplication('notes'))).status).toBe(201);
  const res = await signUp(server.url, 'ada@example.com', 'notes');
  expect(res.status).toBe(201);
  cookie = sessionCookie(res);
}, 120_000);

afterAll(async () => {
  await server?.stop();
  removeTempDirs();
});

/** Why a refresh-token family was revoked, read from the live store (WAL allows a second reader). */
function familyOfToken(refreshToken: string): { revokedReason: string | null } {
  const db = new Database(join(dataDir, 'gatehouse.db'), { readonly: true });
  try {
    return db
      .prepare('SELECT f.revoked_reason AS revokedReason FROM refresh_tokens t JOIN refresh_token_families f ON f.id = t.family_id WHERE t.token_hash = ?')
      .get(sha256(refreshToken)) as { revokedReason: string | null };
  } finally {
    db.close();
  }
}

async function freshTokens(): Promise<{ refresh_token: string }> {
  const res = await tokenCall(server.url, codeExchange('notes', await authorizationCode(server.url, cookie, 'notes')));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** All `count` requests are started before any answer is awaited. */
function race(count: number, send: () => Promise<Answer>): Promise<Answer[]> {
  return Promise.all(Array.from({ length: count }, send));
}

function expectOneWinner(answers: Answer[]): Answer {
  const winners = answers.filter((a) => a.status === 200);
  const losers = answers.filter((a) => a.status !== 200);
  expect(winners).toHaveLength(1);
  expect(losers.map((a) => [a.status, a.body.error, a.headers.get('cache-control')])).toEqual(
    Array.from({ length: answers.length - 1 }, () => [400, 'invalid_grant', 'no-store']),
  );
  return winners[0]!;
}

describe('concurrent token requests', () => {
  it('a refresh token presented 20 times at once rotates exactly once, then the family is revoked as reused', async () => {
    const { refresh_token } = await freshTokens();
    const winner = expectOneWinner(await race(RACERS, () => tokenCall(server.url, refreshGrant('notes', refresh_token))));
    expect(winner.body).toMatchObject({ token_type: 'Bearer', refresh_token: expect.stringMatching(/^ghr_/) });
    expect(familyOfToken(refresh_token).revokedReason).toBe('refresh_token_reused');

    const successor = await tokenCall(server.url, refreshGrant('notes', winner.body.refresh_token));
    expect([successor.status, successor.body.error]).toEqual([400, 'invalid_grant']);
  });

  it('an authorization code presented 20 times at once is exchanged exactly once, then its tokens are revoked', async () => {
    const code = await authorizationCode(server.url, cookie, 'notes');
    const winner = expectOneWinner(await race(RACERS, () => tokenCall(server.url, codeExchange('notes', code))));
    expect(winner.body).toMatchObject({ token_type: 'Bearer', id_token: expect.any(String), refresh_token: expect.stringMatching(/^ghr_/) });
    expect(familyOfToken(winner.body.refresh_token).revokedReason).toBe('code_replayed');

    const refreshed = await tokenCall(server.url, refreshGrant('notes', winner.body.refresh_token));
    expect([refreshed.status, refreshed.body.error]).toEqual([400, 'invalid_grant']);
  });
});

describe('concurrent application creation', () => {
  const create = (body: Record<string, unknown>) => adminCall(server.url, 'POST', '/api/admin/applications', body);
  const outcome = (answers: Answer[]) =>
    answers.map((a) => [a.status, a.status === 201 ? a.body.id : a.body.code, a.headers.get('content-type')]).sort();

  it('two admins creating the same id: one 201, one 409 application_exists', async () => {
    const answers = await Promise.all([
      create(spaApplication('billing', 'https://billing-a.example.com/api')),
      create(spaApplication('billing', 'https://billing-b.example.com/api')),
    ]);
    expect(outcome(answers)).toEqual([
      [201, 'billing', 'application/json; charset=utf-8'],
      [409, 'application_exists', 'application/problem+json; charset=utf-8'],
    ]);
    const stored = await adminCall(server.url, 'GET', '/api/admin/applications/billing');
    expect(stored.body.audience).toBe(answers.find((a) => a.status === 201)!.body.audience);
  });

  it('two admins claiming the same audience under different ids: one 201, one 409 audience_in_use', async () => {
    const audience = 'https://shared.example.com/api';
    const answers = await Promise.all([create(spaApplication('shared-a', audience)), create(spaApplication('shared-b', audience))]);
    const created = answers.find((a) => a.status === 201);
    expect(outcome(answers)).toEqual([
      [201, created?.body.id, 'application/json; charset=utf-8'],
      [409, 'audience_in_use', 'application/problem+json; charset=utf-8'],
    ]);
    const loser = created!.body.id === 'shared-a' ? 'shared-b' : 'shared-a';
    expect((await adminCall(server.url, 'GET', `/api/admin/applications/${loser}`)).status).toBe(404);
  });
});

describe('concurrent sign-ups and invitations', () => {
  it('one e-mail signed up 5 times at once: one 201, four 409 email_in_use', async () => {
    const answers = await race(5, () => signUp(server.url, 'grace@example.com', 'notes'));
    expect(answers.map((a) => [a.status, a.status === 201 ? a.body.user.email : a.body.code]).sort()).toEqual([
      [201, 'grace@example.com'],
      ...Array.from({ length: 4 }, () => [409, 'email_in_use']),
    ]);
    const members = await adminCall(server.url, 'GET', '/api/admin/applications/notes/users?q=grace');
    expect(members.body.users.map((u: { email: string }) => u.email)).toEqual(['grace@example.com']);
  });

  it('one address invited by two admins at once: one invitation, the other answer skips it', async () => {
    const invite = () => adminCall(server.url, 'POST', '/api/admin/applications/notes/invitations', { emails: ['hedy@example.com'] });
    const answers = await race(2, invite);
    expect(answers.map((a) => a.status)).toEqual([201, 201]);
    const created = answers.flatMap((a) => a.body.invitations.map((i: { email: string }) => i.email));
    const skipped = answers.flatMap((a) => a.body.skipped);
    expect([created, skipped]).toEqual([['hedy@example.com'], [{ email: 'hedy@example.com', reason: 'already_invited' }]]);
    const pending = await adminCall(server.url, 'GET', '/api/admin/applications/notes/invitations?status=pending');
    expect(pending.body.invitations.filter((i: { email: string }) => i.email === 'hedy@example.com')).toHaveLength(1);
  });
});

describe('one server per data directory', () => {
  it('a second server on the same data directory exits 1 with one sentence; the first keeps serving', async () => {
    const second = await runCli(['serve', '--port', '0', '--data-dir', dataDir], cleanEnv({ ADMIN_TOKEN: 'another-admin-token-0123456789' }));
    expect([second.code, second.stdout]).toEqual([1, '']);
    expect(second.stderr.trimEnd()).toBe(
      `Another Gatehouse server (pid ${server.child.pid}) is using the data directory ${dataDir}; stop it first.`,
    );
    expect((await adminCall(server.url, 'GET', '/api/admin/applications/notes')).status).toBe(200);
  });
});
