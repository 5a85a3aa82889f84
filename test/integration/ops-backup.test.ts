import { readFileSync, writeFileSync, existsSync, statSync, readdirSync, mkdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import Database from 'better-sqlite3';
import { beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../server/db/client.js';
import { createBackup, listBackups, readHeader } from '../../server/ops/backup.js';
import { restoreBackup } from '../../server/ops/restore.js';
import { appBody, makeApp } from '../helpers/app.js';
import { ensureBuilt, runCli } from '../helpers/cli.js';
import { OPS_ADMIN_TOKEN, startServer, tempDataDir } from '../helpers/data-dir.js';

beforeAll(() => ensureBuilt(), 240_000);

/** The migrations this build ships, in order, read from drizzle's journal. */
const MIGRATIONS = (
  JSON.parse(readFileSync(new URL('../../server/db/migrations/meta/_journal.json', import.meta.url), 'utf8')) as { entries: { tag: string }[] }
).entries.map((e) => e.tag);
const LATEST = MIGRATIONS.at(-1)!;

function restoredIds(dataDir: string): { integrity: string; ids: Set<string> } {
  const db = new Database(join(dataDir, 'gatehouse.db'), { readonly: true });
  try {
    const integrity = String(db.pragma('integrity_check', { simple: true }));
    const ids = new Set((db.prepare('SELECT id FROM applications').all() as { id: string }[]).map((r) => r.id));
    return { integrity, ids };
  } finally {
    db.close();
  }
}

describe('gatehouse backup under concurrent writes', () => {
  it('restores to an intact database holding every write acknowledged before the backup began', async () => {
    const dir = tempDataDir();
    const running = await startServer(dir);
    // Some bulk so the copy takes a while: 20 000 audit rows of ~1 KiB.
    const seed = running.db.$client.prepare(
      "INSERT INTO audit_log (id, at, actor, action, details) VALUES (?, ?, 'seed', 'seed', ?)",
    );
    running.db.$client.transaction(() => {
      for (let i = 0; i < 20_000; i++) seed.run(`aud_seed_${i}`, Date.now(), JSON.stringify({ pad: 'x'.repeat(1000) }));
    })();

    let n = 0;
    const acknowledged: string[] = [];
    let writing = true;
    let failure: unknown;
    const writer = (async () => {
      while (writing) {
        const id = `app-${n++}`;
        const res = await fetch(`${running.url}/api/admin/applications`, {
          method: 'POST',
          headers: { authorization: `Bearer ${OPS_ADMIN_TOKEN}`, 'content-type': 'application/json' },
          body: JSON.stringify(appBody({ id, name: id, audience: `https://${id}.example.com/api` })),
        });
        if (res.status !== 201) throw new Error(`write ${id} answered ${res.status}: ${await res.text()}`);
        acknowledged.push(id);
      }
    })().catch((error: unknown) => {
      failure = error;
    });

    while (acknowledged.length < 20 && !failure) await new Promise((r) => setTimeout(r, 10));
    if (failure) throw failure;
    const out = join(tempDataDir(), 'live.gatehouse-backup');
    const before = [...acknowledged];
    const result = await runCli(['backup', '--data-dir', dir, '--out', out]);
    const duringBackup = acknowledged.length - before.length;
    writing = false;
    await writer;
    if (failure) throw failure;
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout.trim()).toBe(out);
    expect(duringBackup).toBeGreaterThan(0); // the server kept serving writes while the backup ran
    expect(statSync(out).mode & 0o777).toBe(0o600);

    const target = tempDataDir();
    const restore = await runCli(['restore', out, '--data-dir', target]);
    expect(restore.code).toBe(0);
    expect(restore.stdout).toMatch(/^Restored the backup of \S+ into /);
    const { integrity, ids } = restoredIds(target);
    expect(integrity).toBe('ok');
    for (const id of before) expect(ids.has(id), id).toBe(true);
    const db = new Database(join(target, 'gatehouse.db'), { readonly: true });
    expect((db.prepare('SELECT count(*) AS n FROM audit_log WHERE actor = ?').get('seed') as { n: number }).n).toBe(20_000);
    db.close();
  }, 120_000);
});

describe('gatehouse restore', () => {
  async function sampleBackup(passphrase?: string) {
    const dir = tempDataDir();
    const db = openDatabase(join(dir, 'gatehouse.db'));
    db.$client.prepare("INSERT INTO meta (key, value, updated_at) VALUES ('probe', 'kept', 0)").run();
    const bytes = await createBackup({ sqlite: db.$client, dataDir: dir, now: new Date(), passphrase });
    db.$client.close();
    const file = join(dir, 'sample.gatehouse-backup');
    writeFileSync(file, bytes);
    return file;
  }

  it('refuses a file that is not a backup with one clear sentence', async () => {
    const garbage = join(tempDataDir(), 'garbage.bin');
    writeFileSync(garbage, 'SQLite format 3\0 but not really\n\x00\x01\x02');
    const result = await runCli(['restore', garbage, '--data-dir', tempDataDir()]);
    expect(result).toEqual({ code: 1, stdout: '', stderr: 'This file is not a Gatehouse backup.\n' });

    // A valid header over a corrupted body is refused too, and nothing is written.
    const good = readFileSync(await sampleBackup());
    const newline = good.indexOf(0x0a);
    const damaged = Buffer.concat([good.subarray(0, newline + 1), Buffer.from('not gzip at all')]);
    const file = join(tempDataDir(), 'damaged.gatehouse-backup');
    writeFileSync(file, damaged);
    const target = tempDataDir();
    const second = await runCli(['restore', file, '--data-dir', target]);
    expect(second).toEqual({ code: 1, stdout: '', stderr: 'This backup is damaged: its contents cannot be read.\n' });
    expect(existsSync(join(target, 'gatehouse.db'))).toBe(false);
  });

  it('refuses a backup from a newer schema than this build knows', async () => {
    const dir = tempDataDir();
    const db = openDatabase(join(dir, 'gatehouse.db'));
    db.$client.prepare("INSERT INTO __drizzle_migrations (hash, created_at) VALUES ('future', 9999999999999)").run();
    const file = join(dir, 'future.gatehouse-backup');
    writeFileSync(file, await createBackup({ sqlite: db.$client, dataDir: dir, now: new Date() }));
    db.$client.close();
    const result = await runCli(['restore', file, '--data-dir', tempDataDir()]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `This backup was made by a newer Gatehouse (schema unknown:9999999999999, this one knows up to ${LATEST}); upgrade Gatehouse before restoring it.\n`,
    );
  });

  it('round-trips an encrypted backup and names a wrong or missing passphrase', async () => {
    const file = await sampleBackup('correct horse battery staple');
    const header = readHeader(file)!;
    expect(header).toMatchObject({ format: 'gatehouse-backup', version: 1, encrypted: true, kdf: { name: 'scrypt' }, cipher: { name: 'aes-256-gcm' } });
    expect(readFileSync(file).includes(Buffer.from('SQLite format 3'))).toBe(false);

    const target = tempDataDir();
    const missing = await runCli(['restore', file, '--data-dir', target]);
    expect(missing).toEqual({ code: 1, stdout: '', stderr: 'This backup is encrypted; give its passphrase with --passphrase-env VAR.\n' });
    const wrong = await runCli(['restore', file, '--data-dir', target, '--passphrase-env', 'GH_PASS'], { GH_PASS: 'wrong horse' });
    expect(wrong).toEqual({ code: 1, stdout: '', stderr: 'The passphrase is wrong or the backup file is damaged.\n' });
    const right = await runCli(['restore', file, '--data-dir', target, '--passphrase-env', 'GH_PASS'], { GH_PASS: 'correct horse battery staple' });
    expect(right.code).toBe(0);
    const db = new Database(join(target, 'gatehouse.db'), { readonly: true });
    expect(db.prepare("SELECT value FROM meta WHERE key = 'probe'").get()).toEqual({ value: 'kept' });
    db.close();
  });

  /** Every file under `dir` (relative path → bytes, `<dir>` for directories), to compare before and after. */
  function snapshot(dir: string): Map<string, string> {
    const files = new Map<string, string>();
    for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
      const path = join(entry.parentPath, entry.name);
      files.set(relative(dir, path), entry.isDirectory() ? '<dir>' : readFileSync(path).toString('base64'));
    }
    return files;
  }

  /** A backup of a data directory holding TLS files (contents are not checked by restore). */
  async function backupWithTls() {
    const dir = tempDataDir();
    mkdirSync(join(dir, 'tls'));
    for (const name of ['ca.pem', 'server.pem', 'server-key.pem']) writeFileSync(join(dir, 'tls', name), `new ${name}\n`);
    const db = openDatabase(join(dir, 'gatehouse.db'));
    db.$client.prepare("INSERT INTO meta (key, value, updated_at) VALUES ('probe', 'restored', 0)").run();
    const file = join(dir, 'tls.gatehouse-backup');
    writeFileSync(file, await createBackup({ sqlite: db.$client, dataDir: dir, now: new Date('2026-05-06T07:08:09.000Z') }));
    db.$client.close();
    return file;
  }

  it('sets an unreadable database aside as it is, with its -wal and -shm, and restores', async () => {
    const file = await sampleBackup();
    const dir = tempDataDir();
    writeFileSync(join(dir, 'gatehouse.db'), 'garbage\n');
    writeFileSync(join(dir, 'gatehouse.db-wal'), 'wal garbage\n');
    writeFileSync(join(dir, 'gatehouse.db-shm'), 'shm garbage\n');
    const result = await runCli(['restore', file, '--data-dir', dir]);
    expect(result.code, result.stderr).toBe(0);
    const [previous] = readdirSync(dir).filter((name) => /^gatehouse\.db\.before-restore-\d{8}T\d{9}Z$/.test(name));
    expect(result).toEqual({
      code: 0,
      stdout: `Restored the backup of ${readHeader(file)!.createdAt} into ${dir} (gatehouse.db).\nThe previous database was kept as ${join(dir, previous!)}.\n`,
      stderr: '',
    });
    expect(readdirSync(dir).sort()).toEqual(['gatehouse.db', previous, `${previous}-shm`, `${previous}-wal`]);
    expect(readFileSync(join(dir, previous!), 'utf8')).toBe('garbage\n');
    expect(readFileSync(join(dir, `${previous}-wal`), 'utf8')).toBe('wal garbage\n');
    expect(readFileSync(join(dir, `${previous}-shm`), 'utf8')).toBe('shm garbage\n');
    const db = new Database(join(dir, 'gatehouse.db'), { readonly: true });
    expect(String(db.pragma('integrity_check', { simple: true }))).toBe('ok');
    expect(db.prepare("SELECT value FROM meta WHERE key = 'probe'").get()).toEqual({ value: 'kept' });
    db.close();
  });

  it('restores the TLS files with the database, keeping a readable old database whole', async () => {
    const file = await backupWithTls();
    const dir = tempDataDir();
    const old = openDatabase(join(dir, 'gatehouse.db'));
    old.$client.prepare("INSERT INTO meta (key, value, updated_at) VALUES ('probe', 'old', 0)").run();
    old.$client.close();
    mkdirSync(join(dir, 'tls'));
    writeFileSync(join(dir, 'tls', 'server.pem'), 'old server.pem\n');
    writeFileSync(join(dir, 'tls', 'ca-key.pem'), 'old ca-key.pem\n');
    const result = restoreBackup({ file, dataDir: dir, now: new Date('2026-01-02T03:04:05Z') });
    expect(result.files).toEqual(['gatehouse.db', 'tls/ca.pem', 'tls/server.pem', 'tls/server-key.pem']);
    expect(result.previous).toBe(join(dir, 'gatehouse.db.before-restore-20260102T030405000Z'));
    expect(readdirSync(dir).sort()).toEqual(['gatehouse.db', 'gatehouse.db.before-restore-20260102T030405000Z', 'tls']);
    expect(readdirSync(join(dir, 'tls')).sort()).toEqual(['ca-key.pem', 'ca.pem', 'server-key.pem', 'server.pem']);
    expect(readFileSync(join(dir, 'tls', 'server.pem'), 'utf8')).toBe('new server.pem\n');
    expect(readFileSync(join(dir, 'tls', 'ca-key.pem'), 'utf8')).toBe('old ca-key.pem\n'); // not in the backup
    expect(statSync(join(dir, 'tls', 'server-key.pem')).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'tls', 'ca.pem')).mode & 0o777).toBe(0o644);
    const kept = new Database(result.previous!, { readonly: true });
    expect(kept.prepare("SELECT value FROM meta WHERE key = 'probe'").get()).toEqual({ value: 'old' });
    kept.close();
  });

  it('changes nothing in the data directory when a TLS file cannot be put in place, in one sentence', async () => {
    const file = await backupWithTls();
    const blocked = async (prepare: (dir: string) => string) => {
      const dir = tempDataDir();
      const old = openDatabase(join(dir, 'gatehouse.db'));
      old.$client.prepare("INSERT INTO meta (key, value, updated_at) VALUES ('probe', 'old', 0)").run();
      old.$client.close();
      const expected = prepare(dir);
      const before = snapshot(dir);
      const result = await runCli(['restore', file, '--data-dir', dir]);
      expect(result).toEqual({ code: 1, stdout: '', stderr: `${expected}\n` });
      expect(snapshot(dir)).toEqual(before);
    };
    // <data>/tls is a regular file.
    await blocked((dir) => {
      writeFileSync(join(dir, 'tls'), 'not a directory\n');
      return `Cannot restore into ${dir}: ${join(dir, 'tls')} is in the way and is not a directory; nothing was changed.`;
    });
    // <data>/tls/server-key.pem is a directory; ca.pem and server.pem were already staged by then.
    await blocked((dir) => {
      mkdirSync(join(dir, 'tls', 'server-key.pem'), { recursive: true });
      writeFileSync(join(dir, 'tls', 'ca.pem'), 'old ca.pem\n');
      return `Cannot restore into ${dir}: ${join(dir, 'tls', 'server-key.pem')} is a directory; nothing was changed.`;
    });
    // No tls directory yet and the database cannot be staged (a directory holds its staging name).
    await blocked((dir) => {
      mkdirSync(join(dir, 'gatehouse.db.restoring', 'x'), { recursive: true });
      return `Cannot restore into ${dir}: writing ${join(dir, 'gatehouse.db.restoring')} failed (it is a directory); nothing was changed.`;
    });
  });

  it('refuses while a server uses the data directory, and keeps the replaced database', async () => {
    const file = await sampleBackup();
    const dir = tempDataDir();
    const running = await startServer(dir);
    const busy = await runCli(['restore', file, '--data-dir', dir]);
    expect(busy).toEqual({ code: 1, stdout: '', stderr: `A Gatehouse server (pid ${process.pid}) is using ${dir}; stop it before restoring.\n` });
    await running.stop();
    const result = restoreBackup({ file, dataDir: dir, now: new Date('2026-01-02T03:04:05Z') });
    expect(result.previous).toBe(join(dir, 'gatehouse.db.before-restore-20260102T030405000Z'));
    expect(existsSync(result.previous!)).toBe(true);
  });
});

describe('admin backup API', () => {
  it('takes, lists and downloads backups with the admin token only', async () => {
    const dir = tempDataDir();
    const t = await makeApp({ config: { dataDir: dir } });
    await t.admin('POST', '/api/admin/applications', appBody());

    const created = await t.admin('POST', '/api/admin/backups');
    expect(created.statusCode).toBe(201);
    const record = created.json();
    expect(record).toEqual({ id: expect.stringMatching(/^gatehouse-\d{8}T\d{6}Z-[0-9a-f]{6}$/), createdAt: expect.any(String), size: expect.any(Number), encrypted: false });
    expect(created.headers.location).toBe(`/api/admin/backups/${record.id}/download`);

    const list = await t.admin('GET', '/api/admin/backups');
    expect(list.statusCode).toBe(200);
    expect(list.json()).toEqual({ backups: [record], nextCursor: null });

    const download = await t.admin('GET', `/api/admin/backups/${record.id}/download`);
    expect(download.statusCode).toBe(200);
    expect(download.headers['content-type']).toBe('application/octet-stream');
    expect(download.rawPayload.length).toBe(record.size);
    const file = join(tempDataDir(), 'downloaded.gatehouse-backup');
    writeFileSync(file, download.rawPayload);
    const target = tempDataDir();
    restoreBackup({ file, dataDir: target, now: new Date() });
    expect(restoredIds(target)).toEqual({ integrity: 'ok', ids: new Set(['notes']) });

    const missing = await t.admin('GET', '/api/admin/backups/gatehouse-20260101T000000Z-000000/download');
    expect(missing.statusCode).toBe(404);
    expect(missing.json().code).toBe('backup_not_found');
    const traversal = await t.admin('GET', '/api/admin/backups/..%2Fgatehouse.db/download');
    expect(traversal.statusCode).toBe(404);

    const memory = await makeApp();
    const unavailable = await memory.admin('POST', '/api/admin/backups');
    expect(unavailable.statusCode).toBe(409);
    expect(unavailable.json()).toMatchObject({ code: 'backups_unavailable', detail: 'This server has no data directory to keep backups in.' });

    const anonymous = await t.app.inject({ method: 'GET', url: '/api/admin/backups' });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.headers['www-authenticate']).toMatch(/^Bearer/);
  });
});

describe('scheduled backups', () => {
  it('writes a backup every GATEHOUSE_BACKUP_INTERVAL seconds and keeps the newest 7', async () => {
    const dir = tempDataDir();
    const running = await startServer(dir, { GATEHOUSE_BACKUP_INTERVAL: '1' });
    expect(running.config.backupKeep).toBe(7);
    const list = async () =>
      (await (await fetch(`${running.url}/api/admin/backups`, { headers: { authorization: `Bearer ${OPS_ADMIN_TOKEN}` } })).json()) as {
        backups: { id: string; encrypted: boolean }[];
      };
    const deadline = Date.now() + 30_000;
    while ((await list()).backups.length < 7 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
    const seven = (await list()).backups;
    expect(seven).toHaveLength(7);
    // Two more intervals: newer backups arrive, the oldest are pruned.
    await new Promise((r) => setTimeout(r, 2500));
    const later = (await list()).backups;
    await running.stop();
    expect(later).toHaveLength(7);
    expect(later[0]!.id).not.toBe(seven[0]!.id);
    expect(later.map((b) => b.id)).not.toContain(seven[6]!.id);
    expect(later[0]!.encrypted).toBe(false);
  }, 60_000);
});

describe('gatehouse status and --help', () => {
  it('reports schema, counts, TLS expiry and the last backup of a data directory', async () => {
    const dir = tempDataDir();
    const running = await startServer(dir, { GATEHOUSE_TLS: 'auto' });
    await fetch(`${running.url}/healthz`).catch(() => undefined);
    await running.stop();
    const backup = await runCli(['backup', '--data-dir', dir]);
    expect(backup.code).toBe(0);
    const result = await runCli(['status', '--data-dir', dir, '--json']);
    expect(result.code).toBe(0);
    const status = JSON.parse(result.stdout);
    expect(status).toMatchObject({
      dataDir: dir,
      serverPid: null,
      schema: { applied: MIGRATIONS, pending: [], newer: false, latest: LATEST },
      counts: { applications: 0, members: 0, people: 0 },
      tls: { notAfter: running.tls!.notAfter.toISOString(), caFingerprint: running.tls!.fingerprint },
      lastBackup: { id: expect.stringMatching(/^gatehouse-/), encrypted: false },
    });
    const text = await runCli(['status', '--data-dir', dir]);
    expect(text.stdout).toMatch(/^Data directory   /);
    expect(text.stdout).toContain(`Schema           ${LATEST} (${MIGRATIONS.length} migrations applied, 0 pending)`);
  });

  it('lists every command, and each command its flags', async () => {
    const help = await runCli(['--help']);
    expect(help.code).toBe(0);
    for (const name of ['serve', 'admin-token', 'backup', 'restore', 'status']) expect(help.stdout).toMatch(new RegExp(`^  ${name} `, 'm'));
    const backup = await runCli(['backup', '--help']);
    expect(backup.stdout).toContain('--out FILE');
    expect(backup.stdout).toContain('--passphrase-env VAR');
    const restore = await runCli(['restore', '--help']);
    expect(restore.stdout).toMatch(/^Usage: gatehouse restore FILE \[flags\]/);
    const serve = await runCli(['serve', '--help']);
    expect(serve.stdout).toContain('--tls MODE');
    expect(serve.stdout).toContain('--pretty');
  });
});

describe('backup before migrations', () => {
  it('backs up an existing database before applying pending migrations, and refuses a newer one', async () => {
    // An older build's database: one recorded migration older than every migration this build knows.
    const dir = tempDataDir();
    const legacy = new Database(join(dir, 'gatehouse.db'));
    legacy.exec('CREATE TABLE __drizzle_migrations (id INTEGER PRIMARY KEY AUTOINCREMENT, hash text NOT NULL, created_at numeric)');
    legacy.prepare("INSERT INTO __drizzle_migrations (hash, created_at) VALUES ('legacy', 1)").run();
    legacy.close();

    const running = await startServer(dir);
    await running.stop();
    const backups = listBackups(dir);
    expect(backups).toHaveLength(1);
    expect(readHeader(join(dir, 'backups', `${backups[0]!.id}.gatehouse-backup`))!.schema).toBe('unknown:1');

    // Starting again migrates nothing, so no second backup.
    await (await startServer(dir)).stop();
    expect(listBackups(dir)).toHaveLength(1);

    const future = new Database(join(dir, 'gatehouse.db'));
    future.prepare("INSERT INTO __drizzle_migrations (hash, created_at) VALUES ('future', 9999999999999)").run();
    future.close();
    await expect(startServer(dir)).rejects.toThrow(`The database in ${dir} was written by a newer Gatehouse; upgrade Gatehouse to use it.`);
  });
});
