/**
 * How guessable a new password is, measured by zxcvbn (@zxcvbn-ts/core with the common and English
 * dictionaries) in a worker thread of its own, never on the event loop: one estimate costs from
 * 2 ms to over 500 ms for long repetitive inputs (measured here, docs/decisions/0121-password-policy-and-zxcvbn-worker.md), and loading
 * the dictionaries ~300 ms. Only the first STRENGTH_INPUT_LIMIT characters are weighed: a longer
 * password is at least as strong as its start, and the cost grows faster than the length.
 *
 * The worker starts on the first estimate (most processes never set a password) and ends after
 * IDLE_MS without one, giving back the dictionaries' memory. Estimates queue in it one at a time.
 * The same worker answers whether the password is on the common-password list that ships in
 * @zxcvbn-ts/language-common (its `passwords-common` dictionary: 49,233 passwords, most common first;
 * MIT licence).
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { backgroundNice } from '../util/background-nice.js';

/** Characters of a password that zxcvbn weighs. */
export const STRENGTH_INPUT_LIMIT = 64;
const IDLE_MS = 60_000;

export interface StrengthEstimate {
  /** zxcvbn's score, 0 (too guessable) to 4 (very unguessable). */
  score: 0 | 1 | 2 | 3 | 4;
  /** On the shipped common-password list (case-insensitive). */
  common: boolean;
  /** zxcvbn's warning and suggestions, in English; empty when it has none. */
  warning: string;
  suggestions: string[];
}

/** The worker's body: plain CommonJS, so it needs no file of its own beside the build (as db/checkpointer.ts). */
const WORKER_SOURCE = `
const { workerData, parentPort } = require('node:worker_threads');
if (workerData.nice !== undefined) try { require('node:os').setPriority(workerData.nice); } catch {}
const core = require(workerData.core);
const common = require(workerData.common);
const en = require(workerData.en);
const zxcvbn = new core.ZxcvbnFactory({
  graphs: common.adjacencyGraphs,
  dictionary: { ...common.dictionary, ...en.dictionary },
  translations: en.translations,
});
const list = new Set(common.dictionary['passwords-common'].map((p) => String(p).toLowerCase()));
parentPort.on('message', ({ id, password, userInputs }) => {
  try {
    const result = zxcvbn.check(password.slice(0, workerData.limit), userInputs);
    parentPort.postMessage({
      id,
      estimate: {
        score: result.score,
        common: list.has(password.toLowerCase()),
        warning: result.feedback.warning || '',
        suggestions: result.feedback.suggestions || [],
      },
    });
  } catch (error) {
    parentPort.postMessage({ id, error: String(error && error.message || error) });
  }
});
`;

interface Pending {
  resolve: (estimate: StrengthEstimate) => void;
  reject: (error: Error) => void;
}

let worker: Worker | undefined;
let nextId = 0;
const pending = new Map<number, Pending>();
let idle: NodeJS.Timeout | undefined;

function start(): Worker {
  const require = createRequire(import.meta.url);
  const w = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: {
      core: require.resolve('@zxcvbn-ts/core'),
      common: require.resolve('@zxcvbn-ts/language-common'),
      en: require.resolve('@zxcvbn-ts/language-en'),
      limit: STRENGTH_INPUT_LIMIT,
      // Background work, like the hashes: at the thread pool's priority (cli/thread-priority.ts), per thread only on Linux.
      nice: process.platform === 'linux' ? backgroundNice() : undefined,
    },
  });
  w.unref();
  w.on('message', (message: { id: number; estimate?: StrengthEstimate; error?: string }) => {
    const waiting = pending.get(message.id);
    pending.delete(message.id);
    if (!waiting) return;
    if (message.estimate) waiting.resolve(message.estimate);
    else waiting.reject(new Error(`password strength: ${message.error ?? 'no answer'}`));
    if (pending.size === 0) scheduleIdleStop();
  });
  const fail = (error: Error) => {
    for (const waiting of pending.values()) waiting.reject(error);
    pending.clear();
    if (worker === w) worker = undefined;
  };
  w.on('error', fail);
  w.on('exit', () => fail(new Error('password strength: the worker stopped')));
  return w;
}

function scheduleIdleStop(): void {
  clearTimeout(idle);
  idle = setTimeout(() => {
    if (pending.size || !worker) return;
    const w = worker;
    worker = undefined;
    void w.terminate();
  }, IDLE_MS);
  idle.unref();
}

/** zxcvbn's estimate of `password` (its first STRENGTH_INPUT_LIMIT characters), penalising `userInputs` (e-mail, name). */
export function estimateStrength(password: string, userInputs: string[] = []): Promise<StrengthEstimate> {
  clearTimeout(idle);
  worker ??= start();
  const w = worker;
  const id = nextId++;
  return new Promise((resolve, reject) => {
    // While an estimate is waiting, the worker keeps the process alive (a CLI `setup` must get its answer).
    w.ref();
    const done = () => (pending.size === 0 ? w.unref() : undefined);
    pending.set(id, { resolve: (e) => (resolve(e), done()), reject: (e) => (reject(e), done()) });
    w.postMessage({ id, password, userInputs: userInputs.filter(Boolean).slice(0, 10) });
  });
}
