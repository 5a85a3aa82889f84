/**
 * The server's CPU per operation set beside the RS256 signature's own cost (issue 27), and split
 * into where it went: signing, SQLite, HTTP, the rest (bench/_profile.ts) and the threads other
 * than the event loop beyond the signatures themselves.
 *
 * - `cpuMs`: user + system time of every thread of the server per operation (/proc);
 * - `signatureMs`: one signature's CPU in an identical process, same key (bench/_signature.ts);
 * - `ratio`: cpuMs ÷ (signatures per operation × signatureMs): 1.0 would be a server that does
 *   nothing but sign; for endpoints that sign nothing it is given against one signature, for scale;
 * - `signingLimit`: operations per second the machine's cores allow if they only signed.
 */
import { cpus } from 'node:os';
import type { CpuSample } from './_server.js';
import type { MainThreadShares } from './_profile.js';
import type { SignatureCost } from './_signature.js';

export interface CostParts {
  /** RSA on the pool (signatures × their cost) plus the main thread's hand-off to it. */
  signing: number;
  sqlite: number;
  http: number;
  rest: number;
  /** CPU of the threads other than the main one beyond the signatures: pool wake-ups, V8 helpers, the WAL checkpointer. */
  otherThreads: number;
}

export interface Cost {
  cpuMs: number;
  mainMs: number;
  signatureMs: number;
  signaturesPerOp: number;
  ratio: number;
  /** Operations per second if every core did nothing but this operation's signatures. */
  signingLimit: number;
  /** ms per operation. */
  parts: CostParts;
  /** Garbage collection on the main thread (part of `rest`), ms per operation. */
  gcMs: number;
  /** The largest self shares inside `rest`, in ms per operation. */
  restTop: { source: string; ms: number }[];
}

export const CORES = cpus().length;

/**
 * Combines the measured CPU per operation (`perOp`: all threads and the main one, ms), the main
 * thread's profile shares (taken in a separate window of the same load: profiling costs a little)
 * and the signature cost.
 */
export function cost(perOp: { totalMs: number; mainMs: number }, shares: MainThreadShares, signature: SignatureCost, signaturesPerOp: number): Cost {
  const main = perOp.mainMs;
  const signed = signaturesPerOp * signature.signMs;
  return {
    cpuMs: perOp.totalMs,
    mainMs: main,
    signatureMs: signature.signMs,
    signaturesPerOp,
    ratio: perOp.totalMs / (Math.max(1, signaturesPerOp) * signature.signMs),
    signingLimit: signaturesPerOp ? (CORES * 1000) / signed : Infinity,
    parts: {
      signing: signed + shares.shares.signing * main,
      sqlite: shares.shares.sqlite * main,
      http: shares.shares.http * main,
      rest: shares.shares.rest * main,
      otherThreads: Math.max(0, perOp.totalMs - main - signed),
    },
    gcMs: shares.gcShare * main,
    restTop: shares.restTop.map(({ source, share }) => ({ source, ms: share * main })),
  };
}

/** CPU used between two samples per operation (ms), or a reason it could not be measured. */
export function perOpOrThrow(before: CpuSample | undefined, after: CpuSample | undefined, ops: number): { totalMs: number; mainMs: number } {
  if (!before || !after || ops <= 0) throw new Error('server CPU could not be read from /proc (Linux only)');
  return { totalMs: (after.totalMs - before.totalMs) / ops, mainMs: (after.mainMs - before.mainMs) / ops };
}

const ms = (n: number) => n.toFixed(3);
const pct = (part: number, whole: number) => `${Math.round((100 * part) / whole)} %`;

/** One line per operation: "0.412 ms = signing 0.271 (66 %) · SQLite … · HTTP … · rest … · other threads …". */
export function describeCost(c: Cost): string {
  const { parts } = c;
  const total = parts.signing + parts.sqlite + parts.http + parts.rest + parts.otherThreads;
  const entries: [string, number][] = [
    ['signing', parts.signing],
    ['SQLite', parts.sqlite],
    ['HTTP', parts.http],
    ['rest', parts.rest],
    ['other threads', parts.otherThreads],
  ];
  const split = entries.map(([name, value]) => `${name} ${ms(value)} (${pct(value, total)})`).join(' · ');
  const rest = c.restTop.length ? `; in rest: GC ${ms(c.gcMs)}, ${c.restTop.map((r) => `${r.source} ${ms(r.ms)}`).join(', ')}` : '';
  return `${ms(c.cpuMs)} ms CPU/op = ${split}${rest}`;
}

/** The flat figures of a cost for results.json (`extra`). */
export function costFigures(c: Cost): Record<string, number | string> {
  return {
    'server CPU ms/op': ms(c.cpuMs),
    'main-thread ms/op': ms(c.mainMs),
    'signature ms (same run)': ms(c.signatureMs),
    'signatures/op': c.signaturesPerOp,
    'CPU ÷ signatures': c.ratio.toFixed(2),
    ...(Number.isFinite(c.signingLimit) ? { 'signing limit ops/s': Math.round(c.signingLimit) } : {}),
    'signing ms/op': ms(c.parts.signing),
    'SQLite ms/op': ms(c.parts.sqlite),
    'HTTP ms/op': ms(c.parts.http),
    'rest ms/op': ms(c.parts.rest),
    'other threads ms/op': ms(c.parts.otherThreads),
    'GC ms/op': ms(c.gcMs),
  };
}
