/**
 * One-time codes of the hand-over (spec forward-auth.md, "Signing in to a protected host"): the
 * start endpoint, on the issuer's host where the Gatehouse session cookie lives, issues one for
 * exactly one protected host; `/.gatehouse/callback` on that host spends it. Single use (the row
 * is deleted as it is read: DELETE ... RETURNING, so one request wins, on any instance), 60
 * seconds, bound to the host; stored as SHA-256 only (DESIGN §5). Expired rows are swept by
 * retention (data-lifecycle/retention-rules.ts).
 *
 * Bound to the browser too (issue 49, H6; hand-over-state.ts): the row's key is SHA-256 of the
 * code and the challenge the start was given, so only the verifier in the cookie of the browser
 * that started finds it.
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

/** The stored key: the code and the challenge of the browser that started, together. */
const codeKey = (code: string, challenge: string) => sha256(`${code}.${challenge}`);

export async function issueCode(db: Db, now: Date, grant: CodeGrant, challenge: string): Promise<string> {
  const code = randomToken();
  await exec(db.insert(forwardAuthCodes).values({ codeHash: codeKey(code, challenge), expiresAt: new Date(now.getTime() + CODE_TTL_MS), ...grant }));
  return code;
}

/**
 * Spends a code on `host` with the challenge of this browser's verifier: the grant, or undefined
 * when the code is unknown, spent, expired, was issued to another browser (not found: nothing is
 * spent) or for another host. A code tried on the wrong host is spent all the same (it has leaked).
 */
export async function spendCode(db: Db, now: Date, code: string, challenge: string, host: string): Promise<CodeGrant | undefined> {
  if (code.length > 100) return undefined;
  const row = await one(db.delete(forwardAuthCodes).where(eq(forwardAuthCodes.codeHash, codeKey(code, challenge))).returning());
  if (!row || row.expiresAt.getTime() <= now.getTime() || row.host !== host) return undefined;
  return { applicationId: row.applicationId, sessionId: row.sessionId, personId: row.personId, host: row.host, rd: row.rd };
}
