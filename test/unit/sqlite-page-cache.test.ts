/**
 * SQLite's page cache per connection (decision 0487): bounded at PAGE_CACHE_KIB on every handle
 * openDatabase gives, where better-sqlite3's build would let it reach 16 MiB; a directory sync
 * widens it for its run and gives it back to that bound (decision 0392).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase, PAGE_CACHE_KIB } from '../../server/db/client.js';
import { SYNC_CACHE_KIB, widenSqliteCache } from '../../server/directory-sources/pace.js';

const dir = mkdtempSync(join(tmpdir(), 'gatehouse-page-cache-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('SQLite page cache', () => {
  it("is better-sqlite3's 16 MiB on a bare handle, and PAGE_CACHE_KIB (1 MiB) on the store's", () => {
    const bare = new Database(':memory:');
    expect(bare.pragma('cache_size', { simple: true })).toBe(-16000);
    bare.close();
    expect(PAGE_CACHE_KIB).toBe(1024);
    const db = openDatabase(join(dir, 'store.db'));
    expect(db.$client.pragma('cache_size', { simple: true })).toBe(-1024);
    db.$client.close();
  });

  it('is widened for a directory sync and back to the bound when the run ends', () => {
    const db = openDatabase(join(dir, 'sync.db'));
    const narrow = widenSqliteCache(db);
    expect(db.$client.pragma('cache_size', { simple: true })).toBe(-SYNC_CACHE_KIB);
    narrow();
    expect(db.$client.pragma('cache_size', { simple: true })).toBe(-PAGE_CACHE_KIB);
    db.$client.close();
  });
});
