import { defineConfig } from 'vitest/config';

// The files of a worker share their modules (decision 0483): each file no longer loads and runs
// the server's ~600 modules again. The helpers' clean-up hooks are registered per file by the
// setup file (test/helpers/per-file.ts).
const SHARED_MODULES = { isolate: false, setupFiles: ['test/helpers/per-file-setup.ts'] };

// Two projects: fast server tests (inject and real HTTP) and slow suites (browser, fuzz,
// crash) that `npm test` runs afterwards as their own step.
export default defineConfig({
  test: {
    // Each `vitest run` (npm test runs six, one per project) transformed the ~600 TypeScript modules
    // a server test imports before its first file could start: 5-9 s of the main process's CPU
    // while the workers waited. Vitest keeps the transformed modules under
    // node_modules/.experimental-vitest-cache, keyed by each file's content, Vitest's version and
    // the project's configuration, so a later run transforms only the files that changed (issue 45,
    // decision 0342: one file's run 17.5-18.8 s -> 10.5-10.9 s at load 10).
    experimental: { fsModuleCache: true },
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts'],
          testTimeout: 30_000,
          hookTimeout: 60_000,
          pool: 'forks',
          // Two files at a time (Vitest's default is one fewer than the cores: one here). A file's
          // process is mostly one thread of JavaScript, so one at a time left the second core idle
          // (8 files under load 16-18: 300 s one at a time, 235 s two at a time; issue 45).
          maxWorkers: 2,
          ...SHARED_MODULES, // unit: 410 s -> ~200 s
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          pool: 'forks',
          fileParallelism: false,
          passWithNoTests: true,
        },
      },
      {
        // Faults and hostile input (issue 9): SIGKILL crash loops, concurrency races, fuzzing,
        // slow clients. One file at a time so their timing assumptions hold on 2 cores.
        test: {
          name: 'resilience',
          include: ['test/resilience/**/*.test.ts'],
          testTimeout: 180_000,
          hookTimeout: 120_000,
          pool: 'forks',
          fileParallelism: false,
          passWithNoTests: true,
        },
      },
      {
        // The storage-sensitive suites again on PostgreSQL (issue 26): one server for the run,
        // each app on a database of its own (test/helpers/postgres-global.ts, makeApp).
        test: {
          name: 'unit-postgres',
          include: ['test/integration/**/*.test.ts'],
          // Not storage tests, or SQLite's own: the WAL checkpointer, process memory and thread
          // tests, and suites that start the server or CLI as a process on a SQLite data
          // directory (their PostgreSQL counterparts are test/postgres/server, cli, multi-instance).
          exclude: [
            'test/integration/{db-checkpointer,idle-memory,low-memory,bench-metrics,thread-priority}.test.ts',
            'test/integration/{start-server,cli-admin,cli-commands,cli-presets,cli-config,admin-token-argv}.test.ts',
            'test/integration/{ops-lan-status,ops-tls,ops-tls-constraints,trust-page}.test.ts',
            // Relying parties, backups and an upgrade on SQLite data directories (issue 38); the
            // signing algorithms on PostgreSQL are signing-algorithms.test.ts.
            'test/integration/signing-algorithms-served.test.ts',
            // The sweeper and a resumed purge in a served SQLite data directory (data-lifecycle.test.ts
            // runs the same sweeps and purges on PostgreSQL).
            'test/integration/data-lifecycle-served.test.ts',
            // Active Directory's LDAP dialect against a Samba DC (its provisioning is most of the
            // file's time); directory-sources.test.ts runs the sources' storage on PostgreSQL.
            'test/integration/directory-active-directory.test.ts',
            // `npm test` runs the storage-sensitive suites on PostgreSQL (the time budget); these
            // exercise pages, relying-party libraries, HTTP edges or SQLite's backup file more than
            // queries. GATEHOUSE_TEST_PG_ALL=1 runs them too.
            ...(process.env.GATEHOUSE_TEST_PG_ALL
              ? []
              : [
                  'test/integration/{ops-backup,grants-relying-party,hosted-pages-hardening,hosted-pages-review,mail-invitations}.test.ts',
                  'test/integration/{providers-start,display-text,trust-proxy,webhooks-target-address,invitations-page,accounts-pages}.test.ts',
                  'test/integration/{self-service-page,oauth-early-calls,oauth-edges,oauth-hot-path,second-factor-status,admin-edges}.test.ts',
                ]),
          ],
          globalSetup: ['test/helpers/postgres-global.ts'],
          ...SHARED_MODULES, // unit-postgres: 396 s isolated, 177-185 s shared
          testTimeout: 30_000,
          hookTimeout: 60_000,
          pool: 'forks',
          // Two files at a time: much of each test's time is PostgreSQL's round trips, not this
          // process's CPU (225 s one at a time against 142 s two at a time on this 2-core machine).
          maxWorkers: 2,
        },
      },
      {
        // Real third-party software on loopback (reverse proxies, LDAP clients, Apache, Dovecot,
        // Roundcube, Django, Prometheus, PyJWT, npm relying parties): each file starts its own
        // instances from a configuration in a temporary directory (.ci/run installs them).
        test: {
          name: 'interop',
          include: ['test/interop/**/*.test.ts'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          pool: 'forks',
          maxWorkers: 2,
          passWithNoTests: true,
        },
      },
      {
        // PostgreSQL mode (issue 26): each file starts its own PostgreSQL 15 server (test/helpers/postgres-server.ts).
        test: {
          name: 'postgres',
          include: ['test/postgres/**/*.test.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          pool: 'forks',
          fileParallelism: false,
        },
      },
    ],
  },
});
