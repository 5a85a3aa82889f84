/**
 * Checks are counted, never logged one by one (spec forward-auth.md): `allowed` (200),
 * `redirected` (sent to sign in: a 302, or nginx's 401 that its snippet turns into that redirect)
 * and `refused` (every other 401 and 403). Exported as
 * `gatehouse_forward_auth_checks_total{result}` by the metrics module.
 */
export type CheckResult = 'allowed' | 'redirected' | 'refused';

const counts: Record<CheckResult, number> = { allowed: 0, redirected: 0, refused: 0 };

/** Counts one check: the one place a check's outcome is recorded. */
export function countCheck(result: CheckResult): void {
  counts[result] += 1;
}

/** The counts since the process started. */
export function checkCounts(): Readonly<Record<CheckResult, number>> {
  return { ...counts };
}
