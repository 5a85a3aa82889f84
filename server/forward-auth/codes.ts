/**
 * One-time codes of the hand-over (spec forward-auth.md, "Signing in to a protected host"): the
 * start endpoint, on the issuer's host where the Gatehouse session cookie lives, issues one for
 * exactly one protected host; `/.gatehouse/callback` on that host spends it. Single use (the row
 * is deleted as it is read: DELETE ... RETURNING, so one request wins, on any instance), 60
 * seconds, bound to the host; stored as SHA-256 only (DESIGN §5). Expired rows are swept by
 * retention (data-lifecycle/retention-rules.ts).
 */
import { eq } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { forwardAuthCodes } from '../db/schema.js';
import { exec, one } from '../db/store.js';
import { randomToken, sha256 } from '../util/crypto.js';

export const CODE_TTL_MS = 60_000;

export interface CodeGrant {
  applicationId: string;
  sessionId: string;
  personId: string;
  /** `name` or `name:port`: the only host that may spend it. */
  host: string;
  rd: string;
}

export async function issueCode(db: Db, now: Date, grant: CodeGrant): Promise<string> {
  const code = randomToken();
  await exec(db.insert(forwardAuthCodes).values({ codeHash: sha256(code), expiresAt: new Date(now.getTime() + CODE_TTL_MS), ...grant }));
  return code;
}

/**
 * Spends a code on `host`: the grant, or undefined when the code is unknown, spent, expired or was
 * issued for another host. A code tried on the wrong host is spent all the same (it has leaked).
 */
export async function spendCode(db: Db, now: Date, code: string, host: string): Promise<CodeGrant | undefined> {
  if (code.length > 100) return undefined;
  const row = await one(db.delete(forwardAuthCodes).where(eq(forwardAuthCodes.codeHash, sha256(code))).returning());
  if (!row || row.expiresAt.getTime() <= now.getTime() || row.host !== host) return undefined;
  return { applicationId: row.applicationId, sessionId: row.sessionId, personId: row.personId, host: row.host, rd: row.rd };
}
