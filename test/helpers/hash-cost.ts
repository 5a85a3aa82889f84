/**
 * The password-hashing cost of servers a test runs in its own process (issue 45), and their
 * compiled route schemas shared with every other app of the process.
 */
import { useHashCost } from '../../server/accounts/passwords.js';
import { shareCompiledSchemas } from '../../server/http/lazy-compile.js';

/**
 * argon2id at 256 KiB and one pass instead of 19 MiB and two: tests whose subject is not hashing
 * (nearly all) sign people up and in by the hundred, and at the server's cost that was a large
 * share of the suite's time. `makeApp({ passwordHashing: 'production' })` keeps the server's cost
 * for a test about hashing; servers started as processes always have it.
 */
export const TEST_HASH_COST = { memoryCost: 256, timeCost: 1 };

/**
 * New hashes of this process at TEST_HASH_COST (a hash carries its cost: verifying is unaffected),
 * and each route schema compiled once for all the apps this process builds (http/lazy-compile.ts).
 */
export function useTestHashCost(): void {
  useHashCost(TEST_HASH_COST);
  shareCompiledSchemas();
}
