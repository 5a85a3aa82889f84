/**
 * Signing keys generated ahead for test apps. Every `makeApp` used to make its three signing keys
 * (RS256, ES256, EdDSA) at build time, and an RSA-2048 key takes 0.1–0.3 s of CPU on this machine
 * (more under load): a large share of the unit project's time, spent on something almost no test
 * is about (issue 45). The helper seeds each new test database instead with key material from a
 * pool, each time under fresh kids (so no two apps share a kid, and a token from one app is still
 * unknown to another), through the server's own `ensureSigningKeys` (sealed at rest on PostgreSQL
 * as the server would). Consecutive apps of a process get different key material; the pool cycles
 * after POOL_SIZE. Tests of key generation and rotation itself go through the server's code,
 * which still generates (rotation, `gatehouse rotate-keys`, a server started as a process).
 *
 * The pool is generated once per machine into the temporary directory (mode 0600: test keys, but
 * private keys all the same), under a lock so parallel test processes make it once.
 */
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Db } from '../../server/db/client.js';
import { ensureSigningKeys, type NewKey } from '../../server/oauth/keys.js';
import { generateKeyMaterial, SIGNING_ALGS, type SigningAlg } from '../../server/oauth/signing-algorithms.js';
import { newId } from '../../server/util/ids.js';

const POOL_SIZE = 32;
const FILE = join(tmpdir(), `gatehouse-test-signing-keys-v1-${process.getuid?.() ?? 'user'}.json`);
const LOCK = `${FILE}.lock`;
const LOCK_STALE_MS = 120_000;

type KeySet = Record<SigningAlg, { jwk: Record<string, string>; privateKeyPem: string }>;

function readPool(): KeySet[] | undefined {
  try {
    const pool = JSON.parse(readFileSync(FILE, 'utf8')) as KeySet[];
    return pool.length === POOL_SIZE && pool.every((set) => SIGNING_ALGS.every((alg) => set[alg]?.privateKeyPem)) ? pool : undefined;
  } catch {
    return undefined;
  }
}

async function generatePool(): Promise<KeySet[]> {
  return Promise.all(
    Array.from({ length: POOL_SIZE }, async () => {
      const materials = await Promise.all(SIGNING_ALGS.map((alg) => generateKeyMaterial(alg)));
      return Object.fromEntries(SIGNING_ALGS.map((alg, i) => [alg, materials[i]!])) as KeySet;
    }),
  );
}

/** The pool: read from the file, or made (by one process at a time) and written there. */
async function loadPool(): Promise<KeySet[]> {
  for (;;) {
    const ready = readPool();
    if (ready) return ready;
    try {
      mkdirSync(LOCK);
    } catch {
      // Another process is making it; a lock left by one that died goes after a while.
      try {
        if (Date.now() - statSync(LOCK).mtimeMs > LOCK_STALE_MS) rmSync(LOCK, { recursive: true, force: true });
      } catch {
        // gone meanwhile
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
      continue;
    }
    try {
      const pool = readPool() ?? (await generatePool());
      writeFileSync(`${FILE}.${process.pid}`, JSON.stringify(pool), { mode: 0o600 });
      renameSync(`${FILE}.${process.pid}`, FILE);
      return pool;
    } finally {
      rmSync(LOCK, { recursive: true, force: true });
    }
  }
}

let pool: Promise<KeySet[]> | undefined;
let taken = 0;

/** Gives a new test database its signing keys from the pool (fresh kids), dated `now`. */
export async function seedSigningKeys(db: Db, now: Date): Promise<void> {
  const set = (await (pool ??= loadPool()))[taken++ % POOL_SIZE]!;
  await ensureSigningKeys(db, now, async (alg): Promise<NewKey> => {
    const kid = newId('kid');
    return { kid, alg, publicJwk: { ...set[alg].jwk, kid, alg, use: 'sig' }, privateKeyPem: set[alg].privateKeyPem };
  });
}
