/**
 * A real PostgreSQL 15 server for PostgreSQL mode's tests (issue 26): Debian's binaries under
 * /usr/lib/postgresql/15/bin, a cluster made by `initdb` in a temporary directory owned by the
 * `postgres` user, started with `pg_ctl` on a free port of 127.0.0.1 (and a socket in that
 * directory), stopped and removed by `stop()`. Each test takes a database of its own.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { freePort } from './free-port.js';

const BIN = '/usr/lib/postgresql/15/bin';

export interface PostgresServer {
  port: number;
  /** The postmaster's process id (its backends are its children: the benchmark reads their CPU). */
  pid: number;
  /** A URL for `database` on this server (see `createDatabase`). */
  url(database: string): string;
  /** Creates a database (empty, or a copy of `template`) and returns its URL. */
  createDatabase(name?: string, template?: string): Promise<string>;
  /** Stops the server as a crash would (its data kept), so that clients find it unreachable. */
  halt(): void;
  /** Starts a halted server again, on the same port. */
  resume(): void;
  stop(): void;
}

function asPostgres(args: string[]): void {
  execFileSync('runuser', ['-u', 'postgres', '--', ...args], { stdio: 'pipe' });
}

/**
 * Starts a server. Tests run it without fsync (nothing here must survive a power cut);
 * `durable: true` keeps fsync and full-page writes (the benchmark), while commits stay
 * asynchronous (synchronous_commit=off) in both: like SQLite's WAL with synchronous=NORMAL, a
 * crash of the machine may lose the last commits but never corrupts.
 */
export async function startPostgres(options: { durable?: boolean } = {}): Promise<PostgresServer> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-pg-'));
  const { uid, gid } = userIds('postgres');
  chownSync(dir, uid, gid);
  const data = join(dir, 'data');
  const port = await freePort();
  const startServer = () =>
    asPostgres([
      `${BIN}/pg_ctl`, '-D', data, '-l', join(dir, 'server.log'), '-w', '-t', '60', 'start',
      '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1${options.durable ? '' : ' -c fsync=off -c full_page_writes=off'} -c synchronous_commit=off -c max_connections=200`,
    ]);
  try {
    initCluster(data);
    startServer();
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  let made = 0;
  const url = (database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`;
  const pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  return {
    port,
    pid,
    url,
    async createDatabase(name = `gatehouse_${process.pid}_${++made}`, template?: string) {
      const admin = postgres(url('postgres'), { max: 1, onnotice: () => {} });
      try {
        await admin.unsafe(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`);
      } finally {
        await admin.end();
      }
      return url(name);
    },
    halt() {
      asPostgres([`${BIN}/pg_ctl`, '-D', data, '-m', 'immediate', '-w', 'stop']);
    },
    resume: startServer,
    stop() {
      try {
        asPostgres([`${BIN}/pg_ctl`, '-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

const INITDB = [`${BIN}/initdb`, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8', '--locale=C.UTF-8'];

/**
 * A new cluster in `data`: a copy of one `initdb` made once per machine with these settings
 * (cp -a keeps its owner and modes). initdb took 3.8-5.8 s, the copy 1.2 s at load 12, and a run
 * of `npm test` makes eight clusters (issue 45). Made aside and renamed into place, so a process
 * never copies a half-made one; when two make it at once, one rename wins and both copy it.
 */
function initCluster(data: string): void {
  const made = join(tmpdir(), `gatehouse-pg-initdb-${createHash('sha256').update(INITDB.join(' ')).digest('hex').slice(0, 12)}`);
  if (!existsSync(join(made, 'PG_VERSION'))) {
    const staging = mkdtempSync(join(tmpdir(), 'gatehouse-pg-initdb-'));
    try {
      const { uid, gid } = userIds('postgres');
      chownSync(staging, uid, gid);
      asPostgres([...INITDB, '-D', join(staging, 'data')]);
      try {
        renameSync(join(staging, 'data'), made);
      } catch (error) {
        if (!existsSync(join(made, 'PG_VERSION'))) throw error;
      }
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
  }
  execFileSync('cp', ['-a', made, data]);
}

function userIds(name: string): { uid: number; gid: number } {
  const [uid, gid] = execFileSync('id', ['-u', name]).toString().trim().split('\n').concat(execFileSync('id', ['-g', name]).toString().trim());
  return { uid: Number(uid), gid: Number(gid) };
}
