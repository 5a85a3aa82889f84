/**
 * The RS256 signature's own cost, measured in the same run as the server it is compared with
 * (issue 27): a process started exactly like the server (same node binary, same launch flags and
 * environment, server/cli/launch.ts) reads the server's own signing key from its data directory
 * and signs a real token's signing input (`header.payload` of a token the server issued, so the
 * same length) with node:crypto, the path oauth/jwt.ts takes: `sign('sha256', input, keyObject)`,
 * RSASSA-PKCS1-v1_5 over the same 2,048-bit key. The signatures run synchronously on that
 * process's main thread, so its CPU time (process.cpuUsage: user + system, every thread) is the
 * operation itself, without the thread-pool hand-off the server pays on top.
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
const [dataDir, input, perBatch, batches] = process.argv.slice(1);
const db = new Database(dataDir + '/gatehouse.db', { readonly: true, fileMustExist: true });
// The key that signs now: of the keys not retired yet, the oldest (oauth/keys.ts).
const row = db.prepare('SELECT private_key_pem AS pem FROM signing_keys WHERE retired_at IS NULL OR retired_at > ? ORDER BY created_at, kid LIMIT 1').get(Date.now());
db.close();
const key = createPrivateKey(row.pem);
const publicKey = createPublicKey(key);
const data = Buffer.from(input);
const signature = sign('sha256', data, key);
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
const signMs = perOp(() => sign('sha256', data, key));
const verifyMs = perOp(() => { if (!verify('sha256', data, publicKey, signature)) throw new Error('does not verify'); });
console.log(JSON.stringify({ signMs, verifyMs, modulusBits: key.asymmetricKeyDetails.modulusLength }));
`;

export interface SignatureCost {
  /** CPU ms of one RS256 signature (median batch). */
  signMs: number;
  /** CPU ms of one RS256 verification (median batch). */
  verifyMs: number;
  /** Every batch's figure, sorted, for results.json. */
  signBatchesMs: number[];
  modulusBits: number;
}

const median = (sorted: number[]) => sorted[Math.floor(sorted.length / 2)]!;

/**
 * Measures the signature and verification cost with the signing key of the server on `dataDir`,
 * over `signingInput` (the `header.payload` part of a token it issued).
 */
export async function signatureCost(dataDir: string, signingInput: string): Promise<SignatureCost> {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  const { stdout } = await run(
    process.execPath,
    [...serveNodeArgs(process.env), '-e', SCRIPT, dataDir, signingInput, String(PER_BATCH), String(BATCHES)],
    { cwd: root, env: { ...process.env, ...SERVE_ENV } },
  );
  const measured = JSON.parse(stdout) as { signMs: number[]; verifyMs: number[]; modulusBits: number };
  return { signMs: median(measured.signMs), verifyMs: median(measured.verifyMs), signBatchesMs: measured.signMs, modulusBits: measured.modulusBits };
}

/** The `header.payload` part of a compact JWT: what was signed. */
export const signingInputOf = (jwt: string) => jwt.slice(0, jwt.lastIndexOf('.'));
