/**
 * Test helpers: a fresh in-memory database and a `buildApp` instance with a fixed clock, plus a
 * small `call` wrapper around `inject` for admin requests.
 */
import { afterAll, afterEach } from 'vitest';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { buildApp, type AppDeps } from '../../server/app.js';
import { testConfig, type Config } from '../../server/config.js';
import { openDatabase, type Db } from '../../server/db/client.js';
import { fixedClock } from '../../server/util/clock.js';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';

export interface TestApp {
  app: FastifyInstance;
  db: Db;
  clock: ReturnType<typeof fixedClock>;
  config: Config;
  /** Admin request with the admin token (override `headers.authorization` to change it). */
  admin(method: InjectOptions['method'], url: string, body?: unknown, headers?: Record<string, string>): ReturnType<FastifyInstance['inject']>;
}

const open: TestApp[] = [];
const openForFile: TestApp[] = [];
async function closeAll(list: TestApp[]) {
  while (list.length) {
    const t = list.pop()!;
    await t.app.close();
    t.db.$client.close();
  }
}
afterEach(() => closeAll(open));
afterAll(() => closeAll(openForFile));

export async function makeApp(
  /** `perFile`: kept open for every test of the file (built in `beforeAll`), closed after them. */
  options: { config?: Partial<Config>; clock?: Date; deps?: Partial<AppDeps>; perFile?: boolean } = {},
): Promise<TestApp> {
  const db = openDatabase(':memory:');
  const clock = fixedClock(options.clock ?? new Date());
  const config = testConfig({ adminToken: ADMIN_TOKEN, ...options.config });
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
