/**
 * Test helpers: a fresh in-memory database and a `buildApp` instance with a fixed clock, plus a
 * small `call` wrapper around `inject` for admin requests.
 */
import { inject } from 'vitest';
import { perFile } from './per-file.js';
import postgres from 'postgres';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildApp, type AppDeps } from '../../server/app.js';
import { testConfig, type Config } from '../../server/config.js';
import { openDatabase, type Db } from '../../server/db/client.js';
import { fixedClock } from '../../server/util/clock.js';
import { openPostgres } from '../../server/db/postgres.js';
import { closeStore } from '../../server/db/open.js';
import { seedSigningKeys } from './signing-key-pool.js';
import { TEST_HASH_COST } from './hash-cost.js';
import { useKeySecret } from '../../server/db/secrets-at-rest.js';
import { PASSWORD_HASH_COST, useHashCost } from '../../server/accounts/passwords.js';
import { shareCompiledSchemas } from '../../server/http/lazy-compile.js';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';
/** The key secret (GATEHOUSE_KEY_SECRET) of apps on PostgreSQL: 32 bytes at least. */
export const TEST_KEY_SECRET = 'test-key-secret-0123456789abcdef0123456789';

export interface TestApp {
  app: FastifyInstance;
  db: Db;
  clock: ReturnType<typeof fixedClock>;
  config: Config;
  /** Admin request with the admin token (override `headers.authorization` to change it). */
  admin(method: InjectOptions['method'], url: string, body?: unknown, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
}

const open: TestApp[] = [];
const openForFile: TestApp[] = [];
/** Apps made by `makeInstance` on SQLite: they share their first instance's handle, closed with it. */
const borrowedDb = new WeakSet<TestApp>();
/** The PostgreSQL database each `makeApp` app made for itself (not its `makeInstance` instances'). */
const ownDatabase = new WeakMap<TestApp, string>();
async function closeAll(list: TestApp[]) {
  const made: string[] = [];
  while (list.length) {
    const t = list.pop()!;
    await t.app.close();
    if (!borrowedDb.has(t)) await closeDatabase(t.db);
    const name = ownDatabase.get(t);
    if (name) made.push(name);
  }
  // Each copy of the template is ~14 MB in ~700 files: kept until the run's end, a project's
  // ~600 of them filled the cluster with ~8 GB that its teardown then removed with the main
  // process blocked, 40-50 s after the last file (issue 45). Dropped once their apps close, on a
  // connection of their own while the next test runs (20-40 ms each, awaited at the file's end);
  // FORCE for any connection a test opened itself.
  for (const name of made) dropDatabase(name);
}

function dropDatabase(name: string): void {
  dropper ??= postgres(postgresAdminUrl(), { max: 1, onnotice: () => {} });
  const client = dropper;
  drops = drops.then(() => client.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).then(
    () => undefined,
    (error: unknown) => void (dropFailed ??= error),
  ));
}

/** Connections per test process to the run's PostgreSQL server: one creates databases, one drops them. */
let admin: ReturnType<typeof postgres> | undefined;
let dropper: ReturnType<typeof postgres> | undefined;
let drops: Promise<void> = Promise.resolve();
/** The first drop that failed, thrown at the file's end (not as an unhandled rejection mid-file). */
let dropFailed: unknown;
const postgresAdminUrl = () => `postgres://postgres@127.0.0.1:${inject('gatehousePostgres')!.port}/postgres`;
async function postgresAdmin(): Promise<ReturnType<typeof postgres>> {
  return (admin ??= postgres(postgresAdminUrl(), { max: 1, onnotice: () => {} }));
}

/** Where each PostgreSQL test database is, for a second instance on it (`makeInstance`). */
const postgresUrls = new WeakMap<Db, string>();

/**
 * The store an app runs on: a fresh in-memory SQLite database, or in the `unit-postgres` project
 * (test/helpers/postgres-global.ts) a fresh PostgreSQL database copied from the migrated template.
 * Either way typed as the SQLite handle the query modules are written against (db/pg-adapter.ts).
 */
export async function openTestDatabase(): Promise<Db> {
  const pg = inject('gatehousePostgres');
  if (!pg) return openDatabase(':memory:', (migrated ??= migratedImage()));
  // The copy made ahead while the previous test ran (CREATE DATABASE: 90-600 ms under load, most
  // of it the server's own work), and the next one started at once.
  const name = await (spare ?? copyTemplate());
  spare = copyTemplate();
  spare.catch(() => {}); // awaited by the next app or at the file's end
  const url = `postgres://postgres@127.0.0.1:${pg.port}/${name}`;
  const db = (await openPostgres({ url, max: 4 })) as unknown as Db;
  postgresUrls.set(db, url);
  return db;
}
let databases = 0;
let spare: Promise<string> | undefined;

async function copyTemplate(): Promise<string> {
  const name = `gatehouse_${process.pid}_${++databases}`;
  const admin = await postgresAdmin();
  for (let attempt = 1; ; attempt++) {
    try {
      await admin.unsafe(`CREATE DATABASE ${name} TEMPLATE gatehouse_template`);
      return name;
    } catch (error) {
      // Two workers copying the template at the same instant: one waits its turn.
      if (attempt >= 20 || !/being accessed by other users/.test(String(error))) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
    }
  }
}

/**
 * One database migrated per test process, serialised: each test database is an in-memory copy of
 * it (`new Database(image)`, about a millisecond) instead of a database that runs every migration
 * again (issue 45: the unit project's time).
 */
let migrated: Buffer | undefined;
function migratedImage(): Buffer {
  const db = openDatabase(':memory:');
  const image = db.$client.serialize();
  db.$client.close();
  return image;
}

export const closeDatabase = closeStore;
perFile({
  afterEach: () => closeAll(open),
  afterAll: async () => {
    await closeAll(openForFile);
    const unused = await spare?.catch(() => undefined);
    spare = undefined;
    if (unused) dropDatabase(unused);
    await drops;
    await Promise.all([admin?.end(), dropper?.end()]);
    admin = dropper = undefined;
    const failed = dropFailed;
    dropFailed = undefined;
    if (failed) throw failed;
  },
});

export { TEST_HASH_COST };

export async function makeApp(
  /**
   * `perFile`: kept open for every test of the file (built in `beforeAll`), closed after them.
   * `passwordHashing`: `production` hashes at the server's cost (PASSWORD_HASH_COST) in this
   * process from now on; otherwise at TEST_HASH_COST.
   */
  options: { config?: Partial<Config>; clock?: Date; deps?: Partial<AppDeps>; perFile?: boolean; passwordHashing?: 'production' } = {},
): Promise<TestApp> {
  useHashCost(options.passwordHashing === 'production' ? PASSWORD_HASH_COST : TEST_HASH_COST);
  // Each route schema compiled once per test process, not once per app (http/lazy-compile.ts).
  shareCompiledSchemas();
  const db = await openTestDatabase();
  const clock = fixedClock(options.clock ?? new Date());
  const config = testConfig({ adminToken: ADMIN_TOKEN, ...options.config });
  // PostgreSQL mode seals secrets under a key secret and refuses to start without one.
  // Set in the caller's env object itself: tests add settings to it after the app is built (oidc-pair).
  if (inject('gatehousePostgres')) config.env.GATEHOUSE_KEY_SECRET ??= TEST_KEY_SECRET;
  const t = await startApp(db, clock, config, options);
  const url = postgresUrls.get(db);
  if (url) ownDatabase.set(t, new URL(url).pathname.slice(1));
  return t;
}

/**
 * Another instance beside `first`, as behind a load balancer: its own app (its own process
 * memory: limiter windows, caches) on the same database. On PostgreSQL it opens a pool of its own
 * to `first`'s database; on SQLite, where one process owns a database, it shares `first`'s handle.
 * Same configuration and clock as `first` unless given.
 */
export async function makeInstance(
  first: TestApp,
  options: { config?: Partial<Config>; deps?: Partial<AppDeps>; perFile?: boolean } = {},
): Promise<TestApp> {
  const url = postgresUrls.get(first.db);
  const db = url ? ((await openPostgres({ url, max: 4 })) as unknown as Db) : first.db;
  const t = await startApp(db, first.clock, { ...first.config, ...options.config }, options);
  if (!url) borrowedDb.add(t);
  return t;
}

async function startApp(
  db: Db,
  clock: ReturnType<typeof fixedClock>,
  config: Config,
  options: { deps?: Partial<AppDeps>; perFile?: boolean },
): Promise<TestApp> {
  // Signing keys generated ahead (test/helpers/signing-key-pool.ts); a second instance finds them.
  // Sealed at rest on PostgreSQL: the key secret is the database's before they are written
  // (buildApp sets the same one again).
  useKeySecret(db, config.env);
  await seedSigningKeys(db, clock.now());
  const app = await buildApp({ db, config, clock, ...options.deps });
  await app.ready();
  const t: TestApp = {
    app,
    db,
    clock,
    config,
    admin: (method, url, body, headers = {}) =>
      app.inject({
        method,
        url,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...headers },
        ...(body === undefined ? {} : { payload: body as InjectOptions['payload'] }),
      }),
  };
  (options.perFile ? openForFile : open).push(t);
  return t;
}

/** A minimal valid application body; override any field. */
export function appBody(overrides: Record<string, unknown> = {}) {
  return {
    id: 'notes',
    name: 'Notes',
    audience: 'https://notes.example.com/api',
    redirectUris: ['https://notes.example.com/callback'],
    clientType: 'web',
    ...overrides,
  };
}
