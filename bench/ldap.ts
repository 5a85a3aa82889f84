/**
 * The LDAP directory under load (issue 35, spec ldap.md "Performance"): `npm run bench -- ldap`.
 *
 * A data directory with 100,000 people, all active members of one application with LDAP on, 50
 * groups (each person in two or three) and app passwords for 2,000 of them, written straight
 * into a freshly migrated database (100,000 sign-ups through the API would spend hours in argon2),
 * then served by the built `gatehouse serve --ldap` in its own process. The load: 16 connections,
 * each repeating a pair as Jellyfin or a NAS does for every sign-in — a simple bind as
 * `uid=<user>,ou=people,<base>` with that person's app password, then a subtree search of
 * ou=people for `(&(objectClass=posixAccount)(uid=<user>))` — every answer checked (bind success,
 * one entry, search success). A pair's latency is bind sent → search done.
 *
 * Beside it, the sign-in path: password sign-ins over HTTP one after another, alone and then
 * during the LDAP load, their p50/p99 side by side (the event loop must stay as responsive for
 * them: the LDAP work is short statements and SHA-256, in slices, never argon2).
 *
 * Targets: ≥ 1,000 pairs/s and p99 ≤ 10 ms at 16 connections.
 */
import { connect, createServer, type Socket } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchResult, Scenario } from './run.js';
import { BENCH_PASSWORD, loadAverage, percentile, serveDataDir, signUp, cpuPerOp, type BenchServer } from './_server.js';
import { openDatabase, type Db } from '../server/db/client.js';
import { DATABASE_FILE } from '../server/main.js';
import { appPasswordHash } from '../server/app-passwords/secret.js';
import { sha256 } from '../server/util/crypto.js';
import { boolean, constructed, elementLength, encode, enumerated, integer, octets, sequence } from '../server/ldap/ber.js';
import type { BenchMetrics } from '../server/cli/bench-metrics.js';

const PEOPLE = 100_000;
const GROUPS = 50;
const WITH_APP_PASSWORDS = 2_000;
const CONNECTIONS = 16;
const SECONDS = 15;
const WARM_UP_SECONDS = 3;
const SIGN_IN_SECONDS = 8;
const TARGET_PAIRS_PER_SECOND = 1_000;
const TARGET_P99_MS = 10;
const APP = 'media';
const BASE = 'dc=gatehouse';
const SERVICE_PASSWORD = 'ghl_bench-service-account-password-0123456789';

const log = (line: string) => console.error(`  ldap: ${line}`);
const appPassword = (i: number) => `bench-app-password-${i}-abcdefghijklmnopqrstuvwxyz`;
const username = (i: number) => `user${String(i).padStart(6, '0')}`;

/** The directory, written in batches into a database made by the committed migrations. */
function buildDirectory(dataDir: string): void {
  const started = Date.now();
  const db: Db = openDatabase(join(dataDir, DATABASE_FILE));
  const sqlite = db.$client;
  const now = Date.now();
  sqlite.prepare(`INSERT INTO applications (id, name, audience, redirect_uris, client_type, auth_policy, ldap, ldap_password_hash, created_at, updated_at)
    VALUES (?, 'Media', 'https://media.example.com', '["https://media.example.com/cb"]', 'spa', ?, '{"enabled":true}', ?, ?, ?)`)
    .run(APP, JSON.stringify({ signup_policy: 'open', allowed_providers: ['email'], profile_fields: [], mfa: 'optional' }), sha256(SERVICE_PASSWORD), now, now);
  const person = sqlite.prepare('INSERT INTO people (id, email, email_verified, name, username, created_at, updated_at) VALUES (?, ?, 1, ?, ?, ?, ?)');
  const member = sqlite.prepare("INSERT INTO memberships (id, application_id, person_id, status, role, profile, joined_at, last_active_at, updated_at) VALUES (?, ?, ?, 'active', 'member', '{}', ?, ?, ?)");
  const group = sqlite.prepare('INSERT INTO groups (id, name, created_at, updated_at) VALUES (?, ?, ?, ?)');
  const inGroup = sqlite.prepare('INSERT INTO group_members (group_id, person_id, added_at) VALUES (?, ?, ?)');
  const password = sqlite.prepare('INSERT INTO app_passwords (id, person_id, application_id, membership_id, name, secret_hash, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)');
  sqlite.transaction(() => {
    for (let g = 0; g < GROUPS; g++) group.run(`group-${g}`, `Group ${g}`, now, now);
  })();
  for (let start = 0; start < PEOPLE; start += 10_000) {
    sqlite.transaction(() => {
      for (let i = start; i < start + 10_000; i++) {
        const id = `usr_bench${String(i).padStart(7, '0')}`;
        const at = now - (PEOPLE - i) * 1000;
        person.run(id, `${username(i)}@example.com`, `Person ${i}`, username(i), at, at);
        member.run(`mem_bench${String(i).padStart(7, '0')}`, APP, id, at, at, at);
        for (let k = 0; k < 2 + (i % 2); k++) inGroup.run(`group-${(i * 7 + k * 13) % GROUPS}`, id, at);
        if (i < WITH_APP_PASSWORDS) password.run(`apw_bench${i}`, id, APP, `mem_bench${String(i).padStart(7, '0')}`, 'bench', appPasswordHash(appPassword(i)), now);
      }
    })();
  }
  sqlite.close();
  log(`built ${PEOPLE} people, ${GROUPS} groups, ${WITH_APP_PASSWORDS} app passwords in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** One LDAP connection answering request/response pairs in order (the load generator's side). */
class Connection {
  private buffer: Buffer = Buffer.alloc(0);
  private pending: ((frames: Buffer[]) => void) | undefined;
  private frames: Buffer[] = [];
  private wanted = 0;
  constructor(private readonly socket: Socket) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => {
      this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
      for (;;) {
        const length = elementLength(this.buffer);
        if (length === undefined || this.buffer.length < length) break;
        this.frames.push(this.buffer.subarray(0, length));
        this.buffer = this.buffer.subarray(length);
      }
      this.deliver();
    });
  }

  static open(port: number): Promise<Connection> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => resolve(new Connection(socket)));
      socket.once('error', reject);
    });
  }

  private deliver() {
    // Done when the last frame is not a search entry (0x64): a bind response or a search done.
    const last = this.frames.at(-1);
    if (!this.pending || !last || this.frames.length < this.wanted || opTag(last) === 0x64) return;
    const frames = this.frames;
    this.frames = [];
    const resolve = this.pending;
    this.pending = undefined;
    resolve(frames);
  }

  request(bytes: Buffer): Promise<Buffer[]> {
    return new Promise((resolve) => {
      this.pending = resolve;
      this.wanted = 1;
      this.socket.write(bytes);
    });
  }

  close() {
    this.socket.destroy();
  }
}

/** The protocolOp tag of a framed LDAPMessage, and the result code of a response that has one. */
function opTag(frame: Buffer): number {
  // SEQUENCE header, then the message id INTEGER, then the op.
  let at = 1 + headerLength(frame, 1);
  at += 2 + frame[at + 1]!;
  return frame[at]!;
}
function headerLength(frame: Buffer, at: number): number {
  const first = frame[at]!;
  return first < 0x80 ? 1 : 1 + (first & 0x7f);
}
function resultCode(frame: Buffer): number {
  let at = 1 + headerLength(frame, 1);
  at += 2 + frame[at + 1]!;
  at += 1 + headerLength(frame, at + 1);
  return frame[at + 2]!; // ENUMERATED, one octet
}

const bindRequest = (id: number, name: string, password: string) =>
  encode(sequence(integer(id), constructed(0x60, integer(3), octets(name), octets(password, 0x80))));
const searchRequest = (id: number, user: string) =>
  encode(sequence(
    integer(id),
    constructed(0x63, octets(`ou=people,${BASE}`), enumerated(2), enumerated(0), integer(0), integer(0), boolean(false),
      constructed(0xa0, constructed(0xa3, octets('objectClass'), octets('posixAccount')), constructed(0xa3, octets('uid'), octets(user))),
      sequence(octets('uid'), octets('cn'), octets('mail'), octets('uidNumber'), octets('gidNumber'), octets('memberOf'))),
  ));

interface LoadRun {
  latencies: number[];
  seconds: number;
  failures: number;
}

async function ldapLoad(port: number, seconds: number, stopAt?: { until: number }): Promise<LoadRun> {
  const connections = await Promise.all(Array.from({ length: CONNECTIONS }, () => Connection.open(port)));
  const latencies: number[] = [];
  let failures = 0;
  let turn = 0;
  const started = performance.now();
  const deadline = stopAt?.until ?? started + seconds * 1000;
  await Promise.all(connections.map(async (connection) => {
    let id = 0;
    while (performance.now() < deadline) {
      const i = turn++ % WITH_APP_PASSWORDS;
      const begin = performance.now();
      const bound = await connection.request(bindRequest(++id, `uid=${username(i)},ou=people,${BASE}`, appPassword(i)));
      const found = await connection.request(searchRequest(++id, username(i)));
      const entries = found.filter((f) => opTag(f) === 0x64).length;
      if (resultCode(bound[0]!) !== 0 || entries !== 1 || resultCode(found.at(-1)!) !== 0) failures++;
      else latencies.push(performance.now() - begin);
    }
  }));
  const elapsed = (performance.now() - started) / 1000;
  for (const c of connections) c.close();
  return { latencies: latencies.sort((a, b) => a - b), seconds: elapsed, failures };
}

/** Password sign-ins one after another for `seconds`; their latencies, sorted. */
async function signIns(server: BenchServer, email: string, seconds: number): Promise<number[]> {
  const latencies: number[] = [];
  const deadline = performance.now() + seconds * 1000;
  while (performance.now() < deadline) {
    const begin = performance.now();
    const res = await fetch(`${server.url}/api/auth/sign-in/email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: BENCH_PASSWORD, applicationId: APP }),
    });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`sign-in answered ${res.status}`);
    latencies.push(performance.now() - begin);
  }
  return latencies.sort((a, b) => a - b);
}

const round = (n: number, digits = 2) => Number(n.toFixed(digits));

export const scenario: Scenario = {
  name: 'ldap',
  description: `LDAP app-password bind + uid search pairs over ${CONNECTIONS} connections on a ${PEOPLE.toLocaleString('en')}-person directory; sign-ins beside it`,
  async run(): Promise<BenchResult[]> {
    const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-ldap-'));
    buildDirectory(dataDir);
    const port = await freePort();
    // The sign-ins beside the load are one caller: their per-address budget is raised out of the way.
    const server = await serveDataDir(dataDir, { GATEHOUSE_LDAP: 'on', GATEHOUSE_LDAP_PORT: String(port), GATEHOUSE_SIGN_IN_RATE_LIMIT: '100000', GATEHOUSE_BENCH_METRICS: '1' }, { removeOnStop: true });
    const loopDelay = async (reset = true) => (await server.ask<BenchMetrics>({ type: 'bench-metrics', reset })).loopDelay;
    try {
      // Someone who signs in with a password meanwhile (argon2 off the event loop).
      const email = 'signer@example.com';
      await signUp(server, email, APP);
      log(`warming up ${WARM_UP_SECONDS} s`);
      await ldapLoad(port, WARM_UP_SECONDS);
      await loopDelay();
      const alone = await signIns(server, email, SIGN_IN_SECONDS);
      const loopAlone = await loopDelay();
      const before = server.cpu();
      const clientBefore = process.cpuUsage();
      const [run, during] = await Promise.all([
        ldapLoad(port, SECONDS),
        (async () => {
          await new Promise((resolve) => setTimeout(resolve, 1000));
          return signIns(server, email, Math.min(SIGN_IN_SECONDS, SECONDS - 2));
        })(),
      ]);
      const client = process.cpuUsage(clientBefore);
      const loopDuring = await loopDelay();
      const cpu = cpuPerOp(before, server.cpu(), run.latencies.length);
      const throughput = run.latencies.length / run.seconds;
      const p99 = percentile(run.latencies, 99);
      const met = run.failures === 0 && throughput >= TARGET_PAIRS_PER_SECOND && p99 <= TARGET_P99_MS;
      return [{
        scenario: 'ldap',
        throughput,
        p50Ms: percentile(run.latencies, 50),
        p99Ms: p99,
        ...(cpu ? { cpuSecondsPer1k: cpu.totalMs } : {}),
        target: `≥ ${TARGET_PAIRS_PER_SECOND} pairs/s, p99 ≤ ${TARGET_P99_MS} ms`,
        met,
        extra: {
          pairs: run.latencies.length,
          failures: run.failures,
          'server CPU ms/pair': cpu ? round(cpu.totalMs, 3) : 'n/a',
          'main-thread ms/pair': cpu ? round(cpu.mainMs, 3) : 'n/a',
          'load generator CPU ms/pair': round((client.user + client.system) / 1000 / Math.max(1, run.latencies.length), 3),
          'sign-in p50 ms alone': round(percentile(alone, 50)),
          'sign-in p99 ms alone': round(percentile(alone, 99)),
          'sign-in p50 ms during LDAP load': round(percentile(during, 50)),
          'sign-in p99 ms during LDAP load': round(percentile(during, 99)),
          'sign-ins alone / during': `${alone.length} / ${during.length}`,
          // Inside the server: how long the event loop was held up (1 ms resolution).
          'loop delay p99 / max ms, sign-ins alone': loopAlone ? `${round(loopAlone.p99Ms)} / ${round(loopAlone.maxMs)}` : 'n/a',
          'loop delay p99 / max ms, during LDAP load': loopDuring ? `${round(loopDuring.p99Ms)} / ${round(loopDuring.maxMs)}` : 'n/a',
          'load avg': loadAverage(),
        },
      }];
    } finally {
      await server.stop();
    }
  },
};
