/**
 * The data lifecycle with two instances on one PostgreSQL (issue 26), on a real PostgreSQL 15
 * server: the retention sweeper runs on one instance at a time (the other skips its turn), and a
 * big delete worked on by both instances at once removes every row once, counts each once and
 * writes one `application.purged` entry.
 */
import { eq } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../server/app.js';
import { testConfig } from '../../server/config.js';
import { TEST_KEY_SECRET } from '../helpers/app.js';
import type { Db } from '../../server/db/client.js';
import { openPostgres } from '../../server/db/postgres.js';
import { closeStore } from '../../server/db/open.js';
import { auditLog, memberships, people, purgeJobs, refreshTokenFamilies, refreshTokens, sessionRealms } from '../../server/db/schema.js';
import { many, singleton, transaction } from '../../server/db/store.js';
import { Sweeper } from '../../server/data-lifecycle/sweeper.js';
import { advancePurge } from '../../server/data-lifecycle/purge.js';
import { fixedClock } from '../../server/util/clock.js';
import { startPostgres, type PostgresServer } from '../helpers/postgres-server.js';
import { seedApplication } from '../helpers/bulk-rows.js';

const ADMIN = 'pg-lifecycle-admin-token-0123456789';
let pg: PostgresServer;
const apps: { app: FastifyInstance; db: Db }[] = [];

beforeAll(async () => {
  pg = await startPostgres();
}, 120_000);

afterAll(async () => {
  for (const { app, db } of apps.splice(0)) {
    await app.close();
    await closeStore(db);
  }
  pg?.stop();
});

/** Two instances (apps with pools of their own) on one new database. */
async function twoInstances(): Promise<[{ app: FastifyInstance; db: Db }, { app: FastifyInstance; db: Db }]> {
  const url = await pg.createDatabase();
  const made = await Promise.all([0, 1].map(async () => {
    const db = (await openPostgres({ url, max: 4 })) as unknown as Db;
    const app = await buildApp({ db, config: testConfig({ adminToken: ADMIN, env: { GATEHOUSE_KEY_SECRET: TEST_KEY_SECRET } }), clock: fixedClock(new Date()) });
    await app.ready();
    apps.push({ app, db });
    return { app, db };
  }));
  return made as [{ app: FastifyInstance; db: Db }, { app: FastifyInstance; db: Db }];
}

const adminCall = (app: FastifyInstance, method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown) =>
  app.inject({ method, url, headers: { authorization: `Bearer ${ADMIN}` }, ...(payload === undefined ? {} : { payload: payload as object }) });

describe('data lifecycle across two instances on one PostgreSQL', () => {
  it('runs key rotation, the sweeper and the purge at once on the smallest pool (each holds a connection for its lock)', async () => {
    // Asked for 2, the pool opens MIN_POOL: three lock holders and the connection their work needs.
    const db = (await openPostgres({ url: await pg.createDatabase(), max: 2 })) as unknown as Db;
    try {
      const work = () => transaction(db, async (tx) => many(tx.select({ id: people.id }).from(people)));
      const nested = await singleton(db, 'key-rotation', () => singleton(db, 'sweeper', () => singleton(db, 'purge', work)));
      expect(nested).toEqual({ ran: true, value: { ran: true, value: { ran: true, value: [] } } });
    } finally {
      await closeStore(db);
    }
  });

  it('sweeps on one instance at a time: the other skips its turn while the first sweeps', async () => {
    const [a, b] = await twoInstances();
    const log = a.app.log;
    const sweeperB = new Sweeper(b.db, b.app.ctx.config, b.app.ctx.clock, log);
    // Instance A holds the sweeper's lock (as a pass under way does): B's turn is skipped, and recorded nowhere.
    const held = await singleton(a.db, 'sweeper', async () => sweeperB.runNow());
    expect(held).toEqual({ ran: true, value: undefined });
    expect((await adminCall(b.app, 'GET', '/api/admin/operations')).json().sweeper).toMatchObject({ runs: 0, lastRun: null });
    // Free again: B sweeps, and both instances report its pass.
    const run = await sweeperB.runNow();
    expect(run).toMatchObject({ error: null, total: 0, vacuumedPages: 0 });
    for (const { app } of [a, b]) expect((await adminCall(app, 'GET', '/api/admin/operations')).json().sweeper).toMatchObject({ runs: 1, lastRun: run });
    await sweeperB.stop();
  });

  it('a big delete advanced by both instances at once removes and counts every row once, with one purged entry', async () => {
    const [a, b] = await twoInstances();
    const created = await adminCall(a.app, 'POST', '/api/admin/applications', {
      id: 'big', name: 'Big', audience: 'https://big.example.com/api', clientType: 'spa', redirectUris: ['https://big.example.com/cb'],
    });
    expect(created.statusCode, created.body).toBe(201);
    const n = 4000;
    await seedApplication(a.db, 'big', n, 2);

    // Deleted on A: gone at once for both, the rest left to the purge.
    expect((await adminCall(a.app, 'DELETE', '/api/admin/applications/big')).statusCode).toBe(204);
    expect((await adminCall(b.app, 'GET', '/api/admin/applications/big')).json().code).toBe('application_not_found');
    expect(await many(b.db.select({ target: purgeJobs.target }).from(purgeJobs))).toEqual([{ target: 'big' }]);

    // Both instances work on the same job at once, in small time slices, until it has ended.
    const work = async (app: FastifyInstance) => {
      while (!(await advancePurge(app.ctx, 'application', 'big', 5))) await new Promise((resolve) => setTimeout(resolve, 1));
    };
    await Promise.all([work(a.app), work(b.app)]);

    expect(await many(a.db.select().from(purgeJobs))).toEqual([]);
    for (const table of [memberships, refreshTokenFamilies, refreshTokens, sessionRealms]) expect(await many(a.db.select().from(table))).toEqual([]);
    const purged = await many(b.db.select().from(auditLog).where(eq(auditLog.action, 'application.purged')));
    expect(purged).toHaveLength(1);
    expect(purged[0]!.details).toMatchObject({
      removed: { refreshTokenFamilies: n, 'refreshTokenFamilies.refresh_tokens': 2 * n, members: n, sessionRealms: n },
      requestedBy: 'admin',
    });
    // The id is free again, on either instance.
    const again = await adminCall(b.app, 'POST', '/api/admin/applications', { id: 'big', name: 'Big', audience: 'https://big2.example.com/api', redirectUris: ['https://big.example.com/cb'] });
    expect(again.statusCode, again.body).toBe(201);
  });
});
