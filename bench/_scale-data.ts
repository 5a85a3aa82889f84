/**
 * The data directory of `npm run bench -- scale`: a year or two of a busy team, built through the
 * project's own schema — the committed migrations up to BASELINE, the last release before the
 * data-lifecycle work — with batched inserts in one process, so the benchmark's first start is a
 * real upgrade (the pending migrations, and the backup before them).
 *
 * At scale 1 (the sizes of issue 21): 100,000 people, 200 applications, 200,000 memberships (one
 * application holds every person), 1,000,000 refresh-token rows in 250,000 families (91 % of the
 * rows expired), 1,000,000 audit entries over two years, 10,000 sessions, 100,000 webhook
 * deliveries, 5,000 invitations and 10,000 one-time links. `--scale 0.25` divides every count.
 *
 * Built databases are cached under the temp directory by scale, baseline and GENERATOR version,
 * for a week (the rows are dated relative to when they were built). `npm test` never builds one.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { migrationsFolder } from '../server/db/client.js';
import { sha256 } from '../server/util/crypto.js';

/** The schema the data is written in: the newest migration of the release before issue 21. */
export const BASELINE = '0003_sign_in_back_off';
/** Bump when the generated data changes, so cached databases are rebuilt. */
const GENERATOR = 2;
const CACHE_DAYS = 7;
const DAY = 86_400_000;

export interface ScaleData {
  file: string;
  scale: number;
  counts: Record<string, number>;
  /** Raw refresh tokens of live families of REFRESH_CLIENT (the bench's token pool). */
  refreshTokens: string[];
  /** The application every person belongs to. */
  bigApp: string;
  /** A public client whose live families the refresh load uses. */
  refreshClient: string;
  builtAt: number;
  buildSeconds: number | null;
}

export const REFRESH_CLIENT = 'app-001';
const POOL = 16;

/** Deterministic pseudo-random numbers (mulberry32), so every build holds the same shape. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (n: number) => Math.floor(next() * n), pick: <T>(list: readonly T[]) => list[Math.floor(next() * list.length)]! };
}

/** A copy of the committed migrations that ends at BASELINE. */
function baselineMigrations(into: string): string {
  const source = migrationsFolder();
  const journal = JSON.parse(readFileSync(join(source, 'meta', '_journal.json'), 'utf8')) as { entries: { idx: number; tag: string }[] };
  const cut = journal.entries.findIndex((e) => e.tag === BASELINE);
  if (cut < 0) throw new Error(`migration ${BASELINE} not found in ${source}`);
  mkdirSync(join(into, 'meta'), { recursive: true });
  const entries = journal.entries.slice(0, cut + 1);
  for (const entry of entries) copyFileSync(join(source, `${entry.tag}.sql`), join(into, `${entry.tag}.sql`));
  writeFileSync(join(into, 'meta', '_journal.json'), JSON.stringify({ ...journal, entries }));
  return into;
}

const FIRST = ['Ada', 'Grace', 'Alan', 'Barbara', 'Edsger', 'Frances', 'Donald', 'Margaret', 'Ken', 'Radia', 'Tim', 'Sophie', 'Linus', 'Karen', 'Dennis', 'Hedy'];
const LAST = ['Lovelace', 'Hopper', 'Turing', 'Liskov', 'Dijkstra', 'Allen', 'Knuth', 'Hamilton', 'Thompson', 'Perlman', 'Berners-Lee', 'Wilson', 'Torvalds', 'Jones', 'Ritchie', 'Lamarr'];
const DOMAINS = ['example.com', 'example.org', 'corp.example', 'mail.test'];
const ACTIONS = ['membership.signed_in', 'membership.updated', 'membership.created', 'invitation.created', 'invitation.accepted', 'application.updated', 'api_key.created', 'security.sign_in_locked', 'session.revoked', 'backup.created', 'auth_policy.updated', 'webhook.tested'];
const PASSWORD_HASH = `$argon2id$v=19$m=19456,t=2,p=1$${'s'.repeat(22)}$${'h'.repeat(43)}`;

/** Builds the data at `file` (BASELINE schema); returns what it holds. */
function build(file: string, scale: number): Omit<ScaleData, 'file' | 'buildSeconds'> {
  const r = prng(21);
  const now = Date.now();
  const n = (count: number) => Math.max(1, Math.round(count * scale));
  const counts = {
    people: n(100_000), applications: Math.max(10, n(200)), memberships: n(200_000), refreshTokens: n(1_000_000),
    audit: n(1_000_000), sessions: n(10_000), deliveries: n(100_000), invitations: n(5_000), oneTimeTokens: n(10_000),
  };
  const sqlite = new Database(file);
  sqlite.pragma('journal_mode = OFF');
  sqlite.pragma('synchronous = OFF');
  sqlite.pragma('foreign_keys = ON');
  const work = join(tmpdir(), `gatehouse-bench-migrations-${process.pid}`);
  try {
    migrate(drizzle(sqlite), { migrationsFolder: baselineMigrations(work) });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const insert = (table: string, columns: string[]) =>
    sqlite.prepare(`INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`);
  const inBatches = (total: number, row: (i: number) => void) => {
    for (let start = 0; start < total; start += 20_000) sqlite.transaction(() => {
      for (let i = start; i < Math.min(total, start + 20_000); i++) row(i);
    })();
  };

  const apps = Array.from({ length: counts.applications }, (_, i) => `app-${String(i).padStart(3, '0')}`);
  const bigApp = apps[0]!;
  const app = insert('applications', ['id', 'name', 'audience', 'redirect_uris', 'client_type', 'auth_policy', 'created_at', 'updated_at']);
  sqlite.transaction(() => {
    apps.forEach((id, i) =>
      app.run(id, `Application ${i}`, `https://${id}.example.com/api`, JSON.stringify([`https://${id}.example.com/callback`]), 'spa',
        JSON.stringify({ signup_policy: 'invite_only', allowed_providers: ['email'], profile_fields: [] }), now - 700 * DAY + i, now - 700 * DAY + i),
    );
  })();

  const person = insert('people', ['id', 'email', 'email_verified', 'name', 'password_hash', 'created_at', 'updated_at']);
  const personId = (i: number) => `usr_${i.toString(36).padStart(8, '0')}scale`;
  inBatches(counts.people, (i) => {
    const at = now - 700 * DAY + Math.floor((i / counts.people) * 690 * DAY);
    person.run(personId(i), `${r.pick(FIRST).toLowerCase()}.${r.pick(LAST).toLowerCase()}.${i}@${r.pick(DOMAINS)}`, 1, `${r.pick(FIRST)} ${r.pick(LAST)}`, PASSWORD_HASH, at, at);
  });

  // Memberships: everyone in the big application, the rest spread over the others.
  const membership = insert('memberships', ['id', 'application_id', 'person_id', 'status', 'role', 'profile', 'joined_at', 'last_active_at', 'updated_at']);
  const members: { id: string; app: string; person: string; active: boolean }[] = [];
  inBatches(counts.memberships, (i) => {
    const isBig = i < counts.people;
    // The others: application a's k-th member is person (k + 7919·a) mod people, never twice the same.
    const j = i - counts.people;
    const a = 1 + (j % (apps.length - 1));
    const appId = isBig ? bigApp : apps[a]!;
    const p = isBig ? i : (Math.floor(j / (apps.length - 1)) + 7919 * a) % counts.people;
    const id = `mem_${i.toString(36).padStart(8, '0')}scale`;
    const at = now - 690 * DAY + Math.floor((i / counts.memberships) * 680 * DAY);
    const active = r.next() >= 0.05;
    membership.run(id, appId, personId(p), active ? 'active' : 'suspended', r.next() < 0.02 ? 'admin' : 'member', '{}', at, now - r.int(60) * DAY, at);
    members.push({ id, app: appId, person: personId(p), active });
  });

  const session = insert('sessions', ['id', 'token_hash', 'person_id', 'user_agent', 'device', 'ip', 'created_at', 'expires_at', 'last_seen_at', 'revoked_at']);
  const realm = insert('session_realms', ['session_id', 'realm', 'authenticated_at']);
  const sessionIds: string[] = [];
  inBatches(counts.sessions, (i) => {
    const m = members[r.int(members.length)]!;
    const kind = r.next();
    const created = kind < 0.6 ? now - (40 + r.int(600)) * DAY : now - r.int(25) * DAY;
    const id = `ses_${i.toString(36).padStart(7, '0')}scale`;
    session.run(id, sha256(id), m.person, 'Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0', 'Firefox on Linux', '192.168.1.20', created, created + 30 * DAY, created + DAY, kind > 0.6 && kind < 0.7 ? created + 2 * DAY : null);
    realm.run(id, `app:${m.app}`, created);
    const second = apps[r.int(apps.length)]!;
    if (r.next() < 0.5 && second !== m.app) realm.run(id, `app:${second}`, created);
    sessionIds.push(id);
  });

  // Refresh tokens: families of four tokens on average; 91 % of the rows in expired families.
  const family = insert('refresh_token_families', ['id', 'application_id', 'person_id', 'membership_id', 'session_id', 'scope', 'resource', 'auth_time', 'created_at', 'expires_at', 'revoked_at', 'revoked_reason']);
  const token = insert('refresh_tokens', ['token_hash', 'family_id', 'created_at', 'expires_at', 'rotated_at']);
  const refreshTokens: string[] = [];
  let rows = 0;
  let f = 0;
  const liveFrom = Math.round(counts.refreshTokens * 0.91);
  const refreshMembers = members.filter((m) => m.app === REFRESH_CLIENT && m.active);
  while (rows < counts.refreshTokens) {
    sqlite.transaction(() => {
      for (let k = 0; k < 5_000 && rows < counts.refreshTokens; k++, f++) {
        const live = rows >= liveFrom;
        const pooled = live && refreshTokens.length < POOL && refreshMembers.length > 0;
        const m = pooled ? refreshMembers[refreshTokens.length % refreshMembers.length]! : members[r.int(members.length)]!;
        const created = live ? now - r.int(25) * DAY - r.int(DAY) : now - (31 + r.int(700)) * DAY;
        const expires = created + 30 * DAY;
        const revoked = !pooled && r.next() < 0.1 ? created + r.int(20) * DAY : null;
        const id = `fam_${f.toString(36).padStart(8, '0')}scale`;
        family.run(id, m.app, m.person, m.id, r.next() < 0.5 ? sessionIds[r.int(sessionIds.length)]! : null, 'openid profile email offline_access', `https://${m.app}.example.com/api`, created, created, expires, revoked, revoked ? 'signed_out' : null);
        const size = Math.min(counts.refreshTokens - rows, 1 + r.int(7));
        for (let t = 0; t < size; t++, rows++) {
          const last = t === size - 1;
          const raw = pooled && last ? `bench-refresh-${refreshTokens.length}` : `${id}-${t}`;
          if (pooled && last) refreshTokens.push(raw);
          token.run(sha256(raw), id, created + t * 3600_000, expires, last ? null : created + (t + 1) * 3600_000);
        }
      }
    })();
  }

  const audit = insert('audit_log', ['id', 'at', 'actor', 'action', 'application_id', 'target', 'details']);
  inBatches(counts.audit, (i) => {
    const at = now - 730 * DAY + Math.floor((i / counts.audit) * 730 * DAY);
    const roll = r.next();
    const actor = roll < 0.6 ? 'admin' : roll < 0.9 ? `person:${personId(r.int(counts.people))}` : 'system';
    const appId = r.next() < 0.9 ? apps[r.int(apps.length)]! : null;
    audit.run(`aud_${i.toString(36).padStart(8, '0')}scale`, at, actor, r.pick(ACTIONS), appId, `mem_${r.int(counts.memberships).toString(36)}`,
      JSON.stringify({ userId: personId(r.int(counts.people)), changed: ['status', 'role'], ip: '192.168.1.20', device: 'Firefox on Linux' }));
  });

  const delivery = insert('webhook_deliveries', ['id', 'application_id', 'type', 'payload', 'status', 'attempts', 'next_attempt_at', 'created_at', 'delivered_at', 'last_status_code']);
  inBatches(counts.deliveries, (i) => {
    const at = now - 365 * DAY + Math.floor((i / counts.deliveries) * 365 * DAY);
    const appId = apps[1 + r.int(apps.length - 1)]!;
    const ok = r.next() < 0.97;
    delivery.run(`msg_${i.toString(36).padStart(8, '0')}scale`, appId, 'membership.signed_in',
      JSON.stringify({ id: `msg_${i}`, type: 'membership.signed_in', createdAt: new Date(at).toISOString(), applicationId: appId, data: { userId: personId(r.int(counts.people)) } }),
      ok ? 'succeeded' : 'failed', ok ? 1 : 8, at, at, ok ? at + 200 : null, ok ? 200 : 500);
  });

  const invitation = insert('invitations', ['id', 'application_id', 'email', 'role', 'token_hash', 'state', 'invited_by', 'created_at', 'expires_at', 'accepted_at']);
  inBatches(counts.invitations, (i) => {
    const at = now - r.int(600) * DAY;
    const state = r.pick(['pending', 'accepted', 'accepted', 'revoked'] as const);
    invitation.run(`inv_${i.toString(36).padStart(7, '0')}scale`, apps[r.int(apps.length)]!, `invitee${i}@example.net`, 'member', sha256(`inv-${i}`), state, 'admin', at, at + 7 * DAY, state === 'accepted' ? at + DAY : null);
  });

  const link = insert('one_time_tokens', ['token_hash', 'person_id', 'purpose', 'created_at', 'expires_at', 'used_at']);
  inBatches(counts.oneTimeTokens, (i) => {
    const at = r.next() < 0.95 ? now - r.int(600) * DAY : now - r.int(50) * 60_000;
    link.run(sha256(`link-${i}`), personId(r.int(counts.people)), r.pick(['password_reset', 'email_verification'] as const), at, at + 3600_000, r.next() < 0.5 ? at + 60_000 : null);
  });

  sqlite.pragma('journal_mode = WAL');
  sqlite.close();
  return { scale, counts: { ...counts, refreshFamilies: f }, refreshTokens, bigApp, refreshClient: REFRESH_CLIENT, builtAt: now };
}

/** The cached database for `scale` (built first when missing or older than a week). */
export function scaleData(scale: number, log: (line: string) => void): ScaleData {
  const dir = join(tmpdir(), 'gatehouse-bench-scale');
  mkdirSync(dir, { recursive: true });
  const stem = `v${GENERATOR}-${BASELINE}-x${scale}`;
  const file = join(dir, `${stem}.db`);
  const facts = join(dir, `${stem}.json`);
  if (existsSync(file) && existsSync(facts) && Date.now() - statSync(facts).mtimeMs < CACHE_DAYS * DAY) {
    return { ...(JSON.parse(readFileSync(facts, 'utf8')) as Omit<ScaleData, 'file'>), file, buildSeconds: null };
  }
  // This scale's earlier builds, of this generator or an older one, or of another baseline.
  for (const name of readdirSync(dir)) if (name.startsWith(stem) || name.includes(`-x${scale}.`)) rmSync(join(dir, name), { force: true });
  log(`building the scale-${scale} database (cached in ${dir}) …`);
  const started = performance.now();
  const temp = `${file}.building`;
  rmSync(temp, { force: true });
  const built = build(temp, scale);
  renameSync(temp, file);
  const buildSeconds = (performance.now() - started) / 1000;
  writeFileSync(facts, JSON.stringify({ ...built, buildSeconds }));
  log(`built ${(statSync(file).size / 2 ** 20).toFixed(0)} MiB in ${buildSeconds.toFixed(0)} s`);
  return { ...built, file, buildSeconds };
}
