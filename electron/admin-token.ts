/**
 * The admin token the panel is given, looked up again on every `gatehouse:get-config` call so a
 * rotation (`gatehouse admin-token --rotate`) reaches the panel without restarting the app.
 * No `electron` import: tested under plain Node.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { readOrCreateAdminToken } from '../server/http/admin-token.js';

/**
 * The token the server accepts: ADMIN_TOKEN when set (the server child inherits our environment,
 * and the server ignores an empty one too), else the file ADMIN_TOKEN_FILE names (read as the
 * server reads it: one trailing line break dropped), otherwise `<data>/admin-token`, created when
 * missing. A file the server cannot read stops the server, which the shell reports on its own.
 */
export function currentAdminToken(dataDir: string, env: Record<string, string | undefined> = process.env): string {
  if (env.ADMIN_TOKEN) return env.ADMIN_TOKEN;
  if (env.ADMIN_TOKEN_FILE) return readFileSync(resolve(env.ADMIN_TOKEN_FILE), 'utf8').replace(/\r?\n$/, '');
  return readOrCreateAdminToken(dataDir);
}
