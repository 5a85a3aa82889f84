import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync, existsSync, statSync, readdirSync, mkdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import Database from 'better-sqlite3';
import { beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../server/db/client.js';
import { listBackups, readHeader, writeBackup } from '../../server/ops/backup.js';
import type { Secret } from '../../server/ops/backup-crypto.js';
import { restoreBackup } from '../../server/ops/restore.js';
import { appBody, makeApp, type TestApp } from '../helpers/app.js';
import { engineOf } from '../../server/db/store.js';
import { ensureBuilt, runCli } from '../helpers/cli.js';
import { OPS_ADMIN_TOKEN, startServer, tempDataDir } from '../helpers/data-dir.js';

beforeAll(() => ensureBuilt(), 240_000);

/** The migrations this build ships, in order, read from drizzle's journal. */
const MIGRATIONS = (
  JSON.parse(readFileSync(new URL('../../server/db/migrations/meta/_journal.json', import.meta.url), 'utf8')) as { entries: { tag: string }[] }
).entries.map((e) => e.tag);
const LATEST = MIGRATIONS.at(-1)!;
const PASS = 'correct horse battery staple';

/** A backup of `sqlite` (the database of `dataDir`) written to `dest`, as the CLI would. */
async function backupTo(sqlite: Database.Database, dataDir: string, dest: string, secret: Secret | null, now = new Date()) {
  return writeBackup({ sqlite, dataDir, now, secret, dest, paced: false });
}

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
    const result = await runCli(['backup', '--data-dir', dir, '--out', out, '--passphrase-env', 'GH_PASS'], { GH_PASS: PASS });
    const duringBackup = acknowledged.length - before.length;
    writing = false;
    await writer;
    if (failure) throw failure;
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout.trim()).toBe(out);
    expect(duringBackup).toBeGreaterThan(0); // the server kept serving writes while the backup ran
    expect(statSync(out).mode & 0o777).toBe(0o600);

    const target = tempDataDir();
    const restore = await runCli(['restore', out, '--data-dir', target, '--passphrase-env', 'GH_PASS'], { GH_PASS: PASS });
    expect(restore.code, restore.stderr).toBe(0);
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
  async function sampleBackup(secret: Secret | null = null) {
    const dir = tempDataDir();
    const db = openDatabase(join(dir, 'gatehouse.db'));
    db.$client.prepare("INSERT INTO meta (key, value, updated_at) VALUES ('probe', 'kept', 0)").run();
    const file = join(dir, 'sample.gatehouse-backup');
    await backupTo(db.$client, dir, file, secret);
    db.$client.close();
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
    expect(second).toEqual({ code: 1, stdout: '', stderr: 'This backup is damaged: its contents cannot be read; nothing was changed.\n' });
    expect(existsSync(join(target, 'gatehouse.db'))).toBe(false);
  });

  it('refuses a backup from a newer schema than this build knows', async () => {
    const dir = tempDataDir();
    const db = openDatabase(join(dir, 'gatehouse.db'));
    db.$client.prepare("INSERT INTO __drizzle_migrations (hash, created_at) VALUES ('future', 9999999999999)").run();
    const file = join(dir, 'future.gatehouse-backup');
    await backupTo(db.$client, dir, file, null);
    db.$client.close();
    const result = await runCli(['restore', file, '--data-dir', tempDataDir()]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `This backup was made by a newer Gatehouse (schema unknown:9999999999999, this one knows up to ${LATEST}); upgrade Gatehouse before restoring it.\n`,
    );
  });

  it('round-trips an encrypted backup and names a wrong or missing passphrase', async () => {
    const file = await sampleBackup({ passphrase: PASS });
    const header = readHeader(file)!;
    expect(header).toMatchObject({
      format: 'gatehouse-backup', version: 2, encrypted: true, schema: LATEST, compression: 'gzip', contents: ['gatehouse.db'],
      kdf: { name: 'scrypt', N: 32768, r: 8, p: 1 }, cipher: { name: 'aes-256-gcm-stream', chunkSize: 65536 },
    });
    expect(readFileSync(file).includes(Buffer.from('SQLite format 3'))).toBe(false);

    const target = tempDataDir();
    const missing = await runCli(['restore', file, '--data-dir', target]);
    expect(missing).toEqual({ code: 1, stdout: '', stderr: 'This backup is encrypted; give its passphrase with --passphrase-env VAR or its key file with --key-file FILE.\n' });
    const wrong = await runCli(['restore', file, '--data-dir', target, '--passphrase-env', 'GH_PASS'], { GH_PASS: 'wrong horse' });
    expect(wrong).toEqual({ code: 1, stdout: '', stderr: 'The passphrase is wrong.\n' });
    expect(readdirSync(target)).toEqual([]);
    const right = await runCli(['restore', file, '--data-dir', target, '--passphrase-env', 'GH_PASS'], { GH_PASS: PASS });
    expect(right.code, right.stderr).toBe(0);
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
    await backupTo(db.$client, dir, file, { passphrase: PASS }, new Date('2026-05-06T07:08:09.000Z'));
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
    const result = await restoreBackup({ file, dataDir: dir, secret: { passphrase: PASS }, now: new Date('2026-01-02T03:04:05Z') });
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
      const result = await runCli(['restore', file, '--data-dir', dir, '--passphrase-env', 'GH_PASS'], { GH_PASS: PASS });
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
    const result = await restoreBackup({ file, dataDir: dir, now: new Date('2026-01-02T03:04:05Z') });
    expect(result.previous).toBe(join(dir, 'gatehouse.db.before-restore-20260102T030405000Z'));
    expect(existsSync(result.previous!)).toBe(true);
  });
});

describe('restore of a damaged backup', () => {
  /** A data directory whose database is big enough to span many encryption chunks (random, so gzip cannot shrink it). */
  async function bigBackup(secret: Secret | null) {
    const dir = tempDataDir();
    const db = openDatabase(join(dir, 'gatehouse.db'));
    const insert = db.$client.prepare("INSERT INTO audit_log (id, at, actor, action, details) VALUES (?, 0, 'seed', 'seed', ?)");
    db.$client.transaction(() => {
      for (let i = 0; i < 600; i++) insert.run(`aud_${i}`, JSON.stringify({ pad: randomBytes(1500).toString('base64') }));
    })();
    const file = join(dir, 'big.gatehouse-backup');
    await backupTo(db.$client, dir, file, secret);
    db.$client.close();
    return file;
  }

  /** A data directory holding an older database (probe = old) and a TLS file, and a snapshot of it. */
  function occupied() {
    const dir = tempDataDir();
    const old = openDatabase(join(dir, 'gatehouse.db'));
    old.$client.prepare("INSERT INTO meta (key, value, updated_at) VALUES ('probe', 'old', 0)").run();
    old.$client.close();
    mkdirSync(join(dir, 'tls'));
    writeFileSync(join(dir, 'tls', 'ca.pem'), 'old ca.pem\n');
    return { dir, before: snapshotOf(dir) };
  }

  function variant(file: string, name: string, change: (bytes: Buffer, bodyStart: number) => Buffer): string {
    const bytes = readFileSync(file);
    const out = join(tempDataDir(), name);
    writeFileSync(out, change(bytes, bytes.indexOf(0x0a) + 1));
    return out;
  }

  it('refuses a truncated or altered encrypted backup, after staging part of it, and leaves the old data as it was', async () => {
    const file = await bigBackup({ passphrase: PASS });
    expect(statSync(file).size).toBeGreaterThan(10 * 65_552); // more than ten chunks
    const chunk = 65_536 + 16;
    const cases: [string, (b: Buffer, start: number) => Buffer, string][] = [
      // Cut inside a chunk, at a chunk boundary (the new last chunk was not sealed as last), one byte short.
      ['mid-chunk', (b, start) => b.subarray(0, start + 5 * chunk + 1000), 'This backup is damaged: it is cut short or altered; nothing was changed.'],
      ['at a boundary', (b, start) => b.subarray(0, start + 6 * chunk), 'This backup is damaged: it is cut short or altered; nothing was changed.'],
      ['last byte', (b) => b.subarray(0, b.length - 1), 'This backup is damaged: it is cut short or altered; nothing was changed.'],
      // One bit flipped in the seventh chunk: the first six were already unpacked into the staged database.
      ['flipped', (b, start) => { const c = Buffer.from(b); c[start + 6 * chunk + 77]! ^= 1; return c; }, 'This backup is damaged: part of it has been altered; nothing was changed.'],
      // Two chunks swapped.
      ['reordered', (b, start) => Buffer.concat([b.subarray(0, start + chunk), b.subarray(start + 2 * chunk, start + 3 * chunk), b.subarray(start + chunk, start + 2 * chunk), b.subarray(start + 3 * chunk)]), 'This backup is damaged: part of it has been altered; nothing was changed.'],
      // The header edited (its digest is every chunk's associated data).
      ['header', (b) => Buffer.from(b.toString('latin1').replace('"createdAt":"', '"createdAt":"1'), 'latin1'), 'This backup is damaged: part of it has been altered; nothing was changed.'],
    ];
    for (const [name, change, message] of cases) {
      const { dir, before } = occupied();
      const result = await runCli(['restore', variant(file, `${name}.gatehouse-backup`, change), '--data-dir', dir, '--passphrase-env', 'GH_PASS'], { GH_PASS: PASS });
      expect({ name, ...result }).toEqual({ name, code: 1, stdout: '', stderr: `${message}\n` });
      expect(snapshotOf(dir), name).toEqual(before);
    }
    // The untouched file restores.
    const { dir } = occupied();
    expect((await runCli(['restore', file, '--data-dir', dir, '--passphrase-env', 'GH_PASS'], { GH_PASS: PASS })).code).toBe(0);
    const db = new Database(join(dir, 'gatehouse.db'), { readonly: true });
    expect((db.prepare("SELECT count(*) AS n FROM audit_log WHERE actor = 'seed'").get() as { n: number }).n).toBe(600);
    db.close();
  });

  it('refuses a truncated or altered unencrypted backup by its gzip and its checksums', async () => {
    const file = await bigBackup(null);
    const body = (bytes: Buffer) => gunzipSync(bytes.subarray(bytes.indexOf(0x0a) + 1));
    const rebuilt = (change: (archive: Buffer) => Buffer) => (b: Buffer, start: number) => Buffer.concat([b.subarray(0, start), gzipSync(change(body(b)))]);
    const cases: [string, (b: Buffer, start: number) => Buffer, string][] = [
      ['cut', (b) => b.subarray(0, Math.floor(b.length / 2)), 'This backup is damaged: it ends early; nothing was changed.'],
      // A valid gzip whose archive has one byte of the database changed: only the checksum can tell.
      ['checksum', rebuilt((a) => { const c = Buffer.from(a); c[c.indexOf('SQLite format 3') + 5000]! ^= 1; return c; }), 'This backup is damaged: gatehouse.db does not match its checksum; nothing was changed.'],
      // A valid gzip of an archive cut before its manifest.
      ['no manifest', rebuilt((a) => a.subarray(0, a.lastIndexOf('{"end":true'))), 'This backup is damaged: it ends early; nothing was changed.'],
      ['foreign file', rebuilt((a) => Buffer.from(a.toString('latin1').replace('{"path":"gatehouse.db"', '{"path":"../gatehouse.db"'), 'latin1')), 'This backup is damaged: it contains an unexpected file "../gatehouse.db".'],
    ];
    for (const [name, change, message] of cases) {
      const { dir, before } = occupied();
      const result = await runCli(['restore', variant(file, `${name}.gatehouse-backup`, change), '--data-dir', dir]);
      expect({ name, ...result }).toEqual({ name, code: 1, stdout: '', stderr: `${message}\n` });
      expect(snapshotOf(dir), name).toEqual(before);
    }
  });

  it('encrypts with a key file, which restore needs; a passphrase or another key file is refused', async () => {
    const keyFile = join(tempDataDir(), 'backup.key');
    writeFileSync(keyFile, randomBytes(32));
    const otherKey = join(tempDataDir(), 'other.key');
    writeFileSync(otherKey, randomBytes(32));
    const shortKey = join(tempDataDir(), 'short.key');
    writeFileSync(shortKey, 'too short');
    const dir = tempDataDir();
    openDatabase(join(dir, 'gatehouse.db')).$client.close();
    const out = join(tempDataDir(), 'keyed.gatehouse-backup');
    expect(await runCli(['backup', '--data-dir', dir, '--out', out, '--key-file', shortKey])).toEqual({
      code: 1, stdout: '', stderr: `The key file ${shortKey} holds 9 bytes; it must hold at least 32 random bytes (e.g. openssl rand -out FILE 32).\n`,
    });
    // The configured key file is used when no flag names a secret.
    expect(await runCli(['backup', '--data-dir', dir, '--out', out], { GATEHOUSE_BACKUP_KEY_FILE: keyFile })).toMatchObject({ code: 0, stdout: `${out}\n` });
    expect(readHeader(out)).toMatchObject({ encrypted: true, kdf: { name: 'hkdf-sha256' } });
    const target = tempDataDir();
    expect(await runCli(['restore', out, '--data-dir', target, '--key-file', otherKey])).toEqual({ code: 1, stdout: '', stderr: 'The key file does not match this backup.\n' });
    expect(await runCli(['restore', out, '--data-dir', target, '--passphrase-env', 'GH_PASS'], { GH_PASS: PASS })).toEqual({
      code: 1, stdout: '', stderr: 'This backup was encrypted with a key file, not a passphrase.\n',
    });
    expect(readdirSync(target)).toEqual([]);
    expect((await runCli(['restore', out, '--data-dir', target, '--key-file', keyFile])).code).toBe(0);
    expect(restoredIds(target).integrity).toBe('ok');
  });

  it('writes nothing unencrypted without --unencrypted, which leaves the TLS files (the CA key) out', async () => {
    const dir = tempDataDir();
    openDatabase(join(dir, 'gatehouse.db')).$client.close();
    mkdirSync(join(dir, 'tls'));
    for (const name of ['ca.pem', 'ca-key.pem', 'server.pem', 'server-key.pem']) writeFileSync(join(dir, 'tls', name), `${name}\n`);
    const refused = await runCli(['backup', '--data-dir', dir]);
    expect(refused).toEqual({
      code: 1, stdout: '',
      stderr: 'A backup holds the signing keys and other secrets; set GATEHOUSE_BACKUP_PASSPHRASE or GATEHOUSE_BACKUP_KEY_FILE to encrypt it. Or give --passphrase-env VAR or --key-file FILE, or --unencrypted to write it in the clear.\n',
    });
    expect(existsSync(join(dir, 'backups'))).toBe(false);
    expect(await runCli(['backup', '--data-dir', dir, '--unencrypted', '--passphrase-env', 'GH_PASS'], { GH_PASS: PASS })).toEqual({
      code: 1, stdout: '', stderr: '--unencrypted cannot be combined with --passphrase-env or --key-file.\n',
    });
    const clear = await runCli(['backup', '--data-dir', dir, '--unencrypted']);
    expect(clear.code, clear.stderr).toBe(0);
    const plainFile = clear.stdout.trim();
    expect(readHeader(plainFile)).toMatchObject({ version: 2, encrypted: false, contents: ['gatehouse.db'] });
    expect(readFileSync(plainFile).includes(Buffer.from('ca-key.pem'))).toBe(false);
    const sealed = await runCli(['backup', '--data-dir', dir], { GATEHOUSE_BACKUP_PASSPHRASE: PASS });
    expect(readHeader(sealed.stdout.trim())).toMatchObject({ encrypted: true, contents: ['gatehouse.db', 'tls/ca.pem', 'tls/ca-key.pem', 'tls/server.pem', 'tls/server-key.pem'] });
    // Restoring the unencrypted one keeps the directory's own TLS files.
    const target = tempDataDir();
    mkdirSync(join(target, 'tls'));
    writeFileSync(join(target, 'tls', 'ca-key.pem'), 'kept\n');
    const restored = await runCli(['restore', plainFile, '--data-dir', target]);
    expect(restored.stdout).toBe(`Restored the backup of ${readHeader(plainFile)!.createdAt} into ${target} (gatehouse.db).\n`);
    expect(readFileSync(join(target, 'tls', 'ca-key.pem'), 'utf8')).toBe('kept\n');
  });

  it('still restores a backup of container version 1', async () => {
    const source = tempDataDir();
    const db = openDatabase(join(source, 'gatehouse.db'));
    db.$client.prepare("INSERT INTO meta (key, value, updated_at) VALUES ('probe', 'v1', 0)").run();
    db.$client.pragma('wal_checkpoint(TRUNCATE)');
    const data = readFileSync(join(source, 'gatehouse.db'));
    db.$client.close();
    const header = { format: 'gatehouse-backup', version: 1, createdAt: '2026-03-04T05:06:07.000Z', encrypted: false, schema: LATEST };
    const payload = gzipSync(JSON.stringify({ createdAt: header.createdAt, schema: LATEST, files: [{ path: 'gatehouse.db', mode: 0o600, data: data.toString('base64') }, { path: 'tls/ca.pem', mode: 0o644, data: Buffer.from('v1 ca\n').toString('base64') }] }));
    const file = join(tempDataDir(), 'v1.gatehouse-backup');
    writeFileSync(file, Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`), payload]));
    const target = tempDataDir();
    const result = await runCli(['restore', file, '--data-dir', target]);
    expect(result).toEqual({ code: 0, stdout: `Restored the backup of 2026-03-04T05:06:07.000Z into ${target} (gatehouse.db, tls/ca.pem).\n`, stderr: '' });
    const restored = new Database(join(target, 'gatehouse.db'), { readonly: true });
    expect(restored.prepare("SELECT value FROM meta WHERE key = 'probe'").get()).toEqual({ value: 'v1' });
    restored.close();
  });
});

/** Every file under `dir` (relative path → bytes, `<dir>` for directories), to compare before and after. */
function snapshotOf(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name);
    files.set(relative(dir, path), entry.isDirectory() ? '<dir>' : readFileSync(path).toString('base64'));
  }
  return files;
}

/** PostgreSQL mode: the database is pg_dump's; every backup action says so, the list is empty, the schedule off. */
async function expectBackupsByPgDump(t: TestApp): Promise<void> {
  const detail = 'In PostgreSQL mode the database is backed up with pg_dump --format=custom and restored with pg_restore; the server takes no backups of its own.';
  for (const [method, url] of [['POST', '/api/admin/backups'], ['GET', '/api/admin/backups/gatehouse-20260101T000000Z-000000/download']] as const) {
    const res = await t.admin(method, url);
    expect([res.statusCode, res.headers['content-type']], url).toEqual([409, 'application/problem+json; charset=utf-8']);
    expect(res.json()).toEqual({ type: expect.any(String), title: 'Conflict', status: 409, code: 'backups_use_pg_dump', detail });
  }
  expect((await t.admin('GET', '/api/admin/backups')).json()).toEqual({ backups: [], nextCursor: null });
  expect((await t.admin('GET', '/api/admin/backups/status')).json()).toMatchObject({ scheduled: false, blockedReason: detail, lastBackupAt: null });
  expect(existsSync(join(t.config.dataDir, 'backups'))).toBe(false);
  // The code is documented with the operation.
  const doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
  expect(doc.paths['/api/admin/backups'].post.responses['409'].description).toContain('`backups_use_pg_dump`');
  expect(doc.paths['/api/admin/backups/{id}/download'].get.responses['409'].description).toContain('`backups_use_pg_dump`');
}

describe('admin backup API', () => {
  it('takes (encrypted only), lists and downloads backups with the admin token only (PostgreSQL mode: 409 backups_use_pg_dump)', async () => {
    const plain = await makeApp({ config: { dataDir: tempDataDir() } });
    // A passphrase changes nothing there: the server takes no backups of a PostgreSQL database.
    if (engineOf(plain.db) === 'postgres') return expectBackupsByPgDump(await makeApp({ config: { dataDir: tempDataDir(), backupPassphrase: PASS } }));
    const refused = await plain.admin('POST', '/api/admin/backups');
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toMatchObject({
      code: 'backup_encryption_required',
      detail: 'A backup holds the signing keys and other secrets; set GATEHOUSE_BACKUP_PASSPHRASE or GATEHOUSE_BACKUP_KEY_FILE to encrypt it.',
    });
    expect(existsSync(join(plain.config.dataDir, 'backups'))).toBe(false);

    const dir = tempDataDir();
    const t = await makeApp({ config: { dataDir: dir, backupPassphrase: PASS } });
    await t.admin('POST', '/api/admin/applications', appBody());

    const created = await t.admin('POST', '/api/admin/backups');
    expect(created.statusCode).toBe(201);
    const record = created.json();
    expect(record).toEqual({ id: expect.stringMatching(/^gatehouse-\d{8}T\d{6}Z-[0-9a-f]{6}$/), createdAt: expect.any(String), size: expect.any(Number), encrypted: true });
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
    await restoreBackup({ file, dataDir: target, secret: { passphrase: PASS }, now: new Date() });
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
  const backupStatus = async (url: string) =>
    (await (await fetch(`${url}/api/admin/backups/status`, { headers: { authorization: `Bearer ${OPS_ADMIN_TOKEN}` } })).json()) as Record<string, unknown>;

  it('writes an encrypted backup every GATEHOUSE_BACKUP_INTERVAL seconds and keeps the newest 7', async () => {
    const dir = tempDataDir();
    const running = await startServer(dir, { GATEHOUSE_BACKUP_INTERVAL: '1', GATEHOUSE_BACKUP_PASSPHRASE: PASS });
    expect(running.config.backupKeep).toBe(7);
    const list = async () =>
      (await (await fetch(`${running.url}/api/admin/backups`, { headers: { authorization: `Bearer ${OPS_ADMIN_TOKEN}` } })).json()) as {
        backups: { id: string; encrypted: boolean }[];
      };
    const deadline = Date.now() + 30_000;
    while ((await list()).backups.length < 7 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
    const seven = (await list()).backups;
    expect(seven).toHaveLength(7);
    // Newer backups arrive, the oldest are pruned: waited for (each interval is a second), not slept on.
    const pruned = Date.now() + 20_000;
    let later = (await list()).backups;
    while ((later[0]!.id === seven[0]!.id || later.some((b) => b.id === seven[6]!.id)) && Date.now() < pruned) {
      await new Promise((r) => setTimeout(r, 250));
      later = (await list()).backups;
    }
    const status = await backupStatus(running.url);
    await running.stop();
    expect(later).toHaveLength(7);
    expect(later[0]!.id).not.toBe(seven[0]!.id);
    expect(later.map((b) => b.id)).not.toContain(seven[6]!.id);
    expect(later.every((b) => b.encrypted)).toBe(true);
    expect(status).toMatchObject({ scheduled: true, blockedReason: null, intervalSeconds: 1, passphraseSet: true, encryption: 'passphrase', lastRun: { ok: true, error: null } });
  }, 60_000);

  it('takes none without a passphrase or key file, and says so in the API and in gatehouse status', async () => {
    const dir = tempDataDir();
    const running = await startServer(dir, { GATEHOUSE_BACKUP_INTERVAL: '1' });
    await new Promise((r) => setTimeout(r, 2500));
    const status = await backupStatus(running.url);
    await running.stop();
    expect(listBackups(dir)).toEqual([]);
    const blocked = 'A backup holds the signing keys and other secrets; set GATEHOUSE_BACKUP_PASSPHRASE or GATEHOUSE_BACKUP_KEY_FILE to encrypt it. Until then no scheduled backup is taken.';
    expect(status).toEqual({ scheduled: false, blockedReason: blocked, intervalSeconds: 1, keep: 7, passphraseSet: false, encryption: null, lastBackupAt: null, lastRun: null, nextRunAt: null });
    const cli = await runCli(['status', '--data-dir', dir]);
    expect(cli.stdout).toContain(`Backups          NO passphrase or key file configured; scheduled backups off: ${blocked}\n`);
    expect(JSON.parse((await runCli(['status', '--data-dir', dir, '--json'])).stdout).backups).toMatchObject({ intervalSeconds: 1, encryption: null, blockedReason: blocked });
  }, 60_000);
});

describe('gatehouse status and --help', () => {
  it('reports schema, counts, TLS expiry and the last backup of a data directory', async () => {
    const dir = tempDataDir();
    const running = await startServer(dir, { GATEHOUSE_TLS: 'auto', GATEHOUSE_BACKUP_PASSPHRASE: PASS });
    await fetch(`${running.url}/healthz`).catch(() => undefined);
    await running.stop();
    const backup = await runCli(['backup', '--data-dir', dir], { GATEHOUSE_BACKUP_PASSPHRASE: PASS });
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
      lastBackup: { id: expect.stringMatching(/^gatehouse-/), encrypted: true },
      backups: { intervalSeconds: 86400, encryption: 'passphrase', blockedReason: null, lastRun: null },
      sweeper: { lastRun: null, runs: 0, prunedTotal: 0 },
      deletions: [],
      storage: { incrementalVacuum: true, pageSize: 4096 },
    });
    const text = await runCli(['status', '--data-dir', dir]);
    expect(text.stdout).toMatch(/^Data directory   /);
    expect(text.stdout).toContain(`Schema           ${LATEST} (${MIGRATIONS.length} migrations applied, 0 pending)`);
    expect(text.stdout).toContain('Backups          encrypted with a passphrase; every 86400 s\n');
    expect(text.stdout).toContain('Sweeper          no pass yet\n');
    // One "Last backup" line (it was printed twice, the second time without "NOT encrypted").
    expect(text.stdout.match(/^Last backup .*$/gm)).toEqual([
      `Last backup      ${status.lastBackup.createdAt} (${status.lastBackup.id}, ${status.lastBackup.size} bytes, encrypted)`,
    ]);
  });

  it('lists every command, and each command its flags', async () => {
    const help = await runCli(['--help']);
    expect(help.code).toBe(0);
    for (const name of ['serve', 'admin-token', 'backup', 'restore', 'status']) expect(help.stdout).toMatch(new RegExp(`^  ${name} `, 'm'));
    const backup = await runCli(['backup', '--help']);
    for (const flag of ['--out FILE', '--passphrase-env VAR', '--key-file FILE', '--unencrypted']) expect(backup.stdout).toContain(flag);
    const restore = await runCli(['restore', '--help']);
    expect(restore.stdout).toMatch(/^Usage: gatehouse restore FILE \[flags\]/);
    expect(restore.stdout).toContain('--key-file FILE');
    const serve = await runCli(['serve', '--help']);
    expect(serve.stdout).toContain('--tls MODE');
    expect(serve.stdout).toContain('--pretty');
  });
});

describe('backup before migrations', () => {
  /** An older build's database: one recorded migration older than every migration this build knows. */
  function legacyDataDir(): string {
    const dir = tempDataDir();
    const legacy = new Database(join(dir, 'gatehouse.db'));
    legacy.exec('CREATE TABLE __drizzle_migrations (id INTEGER PRIMARY KEY AUTOINCREMENT, hash text NOT NULL, created_at numeric)');
    legacy.prepare("INSERT INTO __drizzle_migrations (hash, created_at) VALUES ('legacy', 1)").run();
    legacy.close();
    mkdirSync(join(dir, 'tls'));
    writeFileSync(join(dir, 'tls', 'ca-key.pem'), 'a CA key\n');
    return dir;
  }

  it('backs up an existing database before applying pending migrations, and refuses a newer one', async () => {
    const dir = legacyDataDir();
    const running = await startServer(dir);
    await running.stop();
    const backups = listBackups(dir);
    expect(backups).toHaveLength(1);
    const file = join(dir, 'backups', `${backups[0]!.id}.gatehouse-backup`);
    // No passphrase configured: kept unencrypted in the data directory, without the TLS keys.
    expect(readHeader(file)).toMatchObject({ version: 2, schema: 'unknown:1', encrypted: false, contents: ['gatehouse.db'] });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'backups')).mode & 0o777).toBe(0o700);

    // Starting again migrates nothing, so no second backup.
    await (await startServer(dir)).stop();
    expect(listBackups(dir)).toHaveLength(1);

    const future = new Database(join(dir, 'gatehouse.db'));
    future.prepare("INSERT INTO __drizzle_migrations (hash, created_at) VALUES ('future', 9999999999999)").run();
    future.close();
    await expect(startServer(dir)).rejects.toThrow(`The database in ${dir} was written by a newer Gatehouse; upgrade Gatehouse to use it.`);
  });

  it('encrypts it when a passphrase is configured, TLS keys included', async () => {
    const dir = legacyDataDir();
    await (await startServer(dir, { GATEHOUSE_BACKUP_PASSPHRASE: PASS })).stop();
    const [backup] = listBackups(dir);
    expect(readHeader(join(dir, 'backups', `${backup!.id}.gatehouse-backup`))).toMatchObject({ encrypted: true, contents: ['gatehouse.db', 'tls/ca-key.pem'] });
  });
});
