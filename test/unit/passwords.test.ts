/** Password hashing: argon2id at the OWASP parameters, and hashes stored by earlier releases still verify. */
import { beforeAll, describe, expect, it } from 'vitest';
import { hashPassword, PASSWORD_HASH_COST, useHashCost, verifyPassword } from '../../server/accounts/passwords.js';

// The server's cost: the files of a worker share their modules (vitest.config.ts), and an earlier
// file's apps set the tests' cheaper one for the process (test/helpers/hash-cost.ts).
beforeAll(() => useHashCost(PASSWORD_HASH_COST));

/** Written by the `argon2` package Gatehouse used before @node-rs/argon2, same parameters. */
const EARLIER_HASH =
  '$argon2id$v=19$m=19456,p=1,t=2$GiZEx5EDFKQiMATQ0QPl3g$JpEmmj0zhDdRlIcTpcgJ0FlSudiMUVPzI6cZ5eqNf9E';

describe('passwords', () => {
  it('hashes with argon2id, 19 MiB, t=2, p=1 and verifies only the right password', async () => {
    const hash = await hashPassword('correct horse battery');
    expect(hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
    expect(await verifyPassword(hash, 'correct horse battery')).toBe(true);
    expect(await verifyPassword(hash, 'correct horse batterY')).toBe(false);
  });

  it('verifies a hash written by the earlier argon2 library', async () => {
    expect(await verifyPassword(EARLIER_HASH, 'correct horse battery')).toBe(true);
    expect(await verifyPassword(EARLIER_HASH, 'wrong horse battery')).toBe(false);
  });

  it('answers false, without throwing, for no hash or a malformed one', async () => {
    expect(await verifyPassword(null, 'correct horse battery')).toBe(false);
    expect(await verifyPassword('$argon2id$garbage', 'correct horse battery')).toBe(false);
  });
});
