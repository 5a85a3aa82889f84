/**
 * The admin token the panel is given, looked up again on every `gatehouse:get-config` call so a
 * rotation (`gatehouse admin-token --rotate`) reaches the panel without restarting the app.
 * No `electron` import: tested under plain Node.
 */
import { readOrCreateAdminToken } from '../server/http/admin-token.js';

/**
 * The token the server accepts: ADMIN_TOKEN when set (the server child inherits our environment,
 * and the server ignores an empty one too), otherwise `<data>/admin-token`, created when missing.
 */
export function currentAdminToken(dataDir: string, env: Record<string, string | undefined> = process.env): string {
  const fromEnv = env.ADMIN_TOKEN;
  return fromEnv ? fromEnv : readOrCreateAdminToken(dataDir);
}
