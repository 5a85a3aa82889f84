/**
 * The administrator's bearer token. From ADMIN_TOKEN when set; otherwise generated on first start
 * into `<data>/admin-token` (mode 0600). `gatehouse admin-token --rotate` rewrites the file and a
 * running server notices within a second, so the old token stops working without a restart.
 */
import { chmodSync, existsSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { matchesHash, randomToken, sha256 } from '../util/crypto.js';

export const ADMIN_TOKEN_FILE = 'admin-token';

export interface AdminTokenStore {
  /** Constant-time check of a presented bearer token. */
  verify(presented: string): boolean;
  /** Where the token lives, or `undefined` when it came from the environment. */
  readonly file: string | undefined;
}

export function adminTokenPath(dataDir: string): string {
  return join(dataDir, ADMIN_TOKEN_FILE);
}

/**
 * Writes a fresh token to `<data>/admin-token` (0600) and returns it. Written to a temporary file
 * and renamed, so a running server re-reading the file never sees it empty or half-written.
 */
export function writeNewAdminToken(dataDir: string): string {
  const token = randomToken('gha_');
  const file = adminTokenPath(dataDir);
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, `${token}\n`, { mode: 0o600 });
  chmodSync(temp, 0o600);
  renameSync(temp, file);
  return token;
}

/** Reads the token file, creating it when missing. */
export function readOrCreateAdminToken(dataDir: string): string {
  const file = adminTokenPath(dataDir);
  if (existsSync(file)) {
    const token = readFileSync(file, 'utf8').trim();
    if (token) return token;
  }
  return writeNewAdminToken(dataDir);
}

/** A store for a fixed token (ADMIN_TOKEN, tests). */
export function fixedAdminToken(token: string): AdminTokenStore {
  const hash = sha256(token);
  return { verify: (presented) => matchesHash(presented, hash), file: undefined };
}

/** A store backed by the token file, re-read when its modification time changes. */
export function fileAdminToken(dataDir: string): AdminTokenStore {
  const file = adminTokenPath(dataDir);
  let hash = sha256(readOrCreateAdminToken(dataDir));
  let mtime = statSync(file).mtimeMs;
  let checkedAt = Date.now();
  const refresh = () => {
    if (Date.now() - checkedAt < 1000) return;
    checkedAt = Date.now();
    try {
      const current = statSync(file).mtimeMs;
      const token = current === mtime ? '' : readFileSync(file, 'utf8').trim();
      // An emptied file is ignored, like a vanished one: an empty token must never match.
      if (token) {
        mtime = current;
        hash = sha256(token);
      }
    } catch {
      // The file vanished: keep the token we have rather than lock the administrator out.
    }
  };
  return {
    verify(presented) {
      refresh();
      return matchesHash(presented, hash);
    },
    file,
  };
}
