/**
 * A signature's own cost, measured in the same run as the server it is compared with (issue 27;
 * per algorithm since issue 38): a process started exactly like the server (same node binary, same
 * launch flags and environment, server/cli/launch.ts) reads the server's own signing key of that
 * algorithm (RS256 unless named) from its data directory and signs a real token's signing input
 * (`header.payload` of a token the server issued, so the same length) with node:crypto, as
 * oauth/signing-algorithms.ts does: RS256 `sign('sha256', input, key)` (RSASSA-PKCS1-v1_5, the
 * same 2,048-bit key), ES256 `sign('sha256', input, {key, dsaEncoding: 'ieee-p1363'})`, EdDSA
 * `sign(null, input, key)`. The signatures run synchronously on that process's main thread, so
 * its CPU time (process.cpuUsage: user + system, every thread) is the operation itself, without
 * the thread-pool hand-off the server pays on top for RS256.
 *
 * It also times the verification of the same signature with the public key (what userinfo and
 * introspection pay per token), for the ratio of those endpoints.
 */
import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { SERVE_ENV, serveNodeArgs } from '../server/cli/launch.js';

const run = promisify(execFile);

/** Signatures per batch, and batches (the median is reported: other work on the cores disturbs some). */
const PER_BATCH = 1_000;
const BATCHES = 5;

/** CommonJS run with `node -e` from the project root, so `better-sqlite3` resolves as the server's. */
const SCRIPT = `
const { createPrivateKey, createPublicKey, sign, verify } = require('node:crypto');
const Database = require('better-sqlite3');
const [dataDir, input, perBatch, batches, alg] = process.argv.slice(1);
const db = new Database(dataDir + '/gatehouse.db', { readonly: true, fileMustExist: true });
// The key of this algorithm that signs now: of its keys not retired yet, the oldest (oauth/keys.ts).
const row = db.prepare('SELECT private_key_pem AS pem FROM signing_keys WHERE alg = ? AND (retired_at IS NULL OR retired_at > ?) ORDER BY created_at, kid LIMIT 1').get(alg, Date.now());
db.close();
const digest = alg === 'EdDSA' ? null : 'sha256';
const privateKey = createPrivateKey(row.pem);
const publicKey = createPublicKey(privateKey);
const key = alg === 'ES256' ? { key: privateKey, dsaEncoding: 'ieee-p1363' } : privateKey;
const verifier = alg === 'ES256' ? { key: publicKey, dsaEncoding: 'ieee-p1363' } : publicKey;
const data = Buffer.from(input);
const signature = sign(digest, data, key);
const cpuMicros = () => { const u = process.cpuUsage(); return u.user + u.system; };
function perOp(fn) {
  const results = [];
  for (let b = -1; b < Number(batches); b++) {
    const start = cpuMicros();
    for (let i = 0; i < Number(perBatch); i++) fn();
    if (b >= 0) results.push((cpuMicros() - start) / 1000 / Number(perBatch)); // the first batch warms up
  }
  return results.sort((a, b) => a - b);
}
const signMs = perOp(() => sign(digest, data, key));
const verifyMs = perOp(() => { if (!verify(digest, data, verifier, signature)) throw new Error('does not verify'); });
const details = privateKey.asymmetricKeyDetails;
console.log(JSON.stringify({ signMs, verifyMs, keyBits: details.modulusLength ?? (details.namedCurve === 'prime256v1' ? 256 : 255) }));
`;

export interface SignatureCost {
  /** CPU ms of one signature (median batch). */
  signMs: number;
  /** CPU ms of one verification (median batch). */
  verifyMs: number;
  /** Every batch's figure, sorted, for results.json. */
  signBatchesMs: number[];
  /** The key's size: RSA modulus bits, 256 for P-256, 255 for Ed25519. */
  keyBits: number;
}

const median = (sorted: number[]) => sorted[Math.floor(sorted.length / 2)]!;

/**
 * Measures the signature and verification cost with the server's signing key of `alg` on
 * `dataDir`, over `signingInput` (the `header.payload` part of a token it issued).
 */
export async function signatureCost(dataDir: string, signingInput: string, alg: 'RS256' | 'ES256' | 'EdDSA' = 'RS256'): Promise<SignatureCost> {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  const { stdout } = await run(
    process.execPath,
    [...serveNodeArgs(process.env), '-e', SCRIPT, dataDir, signingInput, String(PER_BATCH), String(BATCHES), alg],
    { cwd: root, env: { ...process.env, ...SERVE_ENV } },
  );
  const measured = JSON.parse(stdout) as { signMs: number[]; verifyMs: number[]; keyBits: number };
  return { signMs: median(measured.signMs), verifyMs: median(measured.verifyMs), signBatchesMs: measured.signMs, keyBits: measured.keyBits };
}

/** The `header.payload` part of a compact JWT: what was signed. */
export const signingInputOf = (jwt: string) => jwt.slice(0, jwt.lastIndexOf('.'));
