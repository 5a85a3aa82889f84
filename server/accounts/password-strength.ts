/**
 * How guessable a new password is, measured by zxcvbn (@zxcvbn-ts/core with the common and English
 * dictionaries) in a worker thread of its own, never on the event loop: one estimate costs from
 * 2 ms to over 500 ms for long repetitive inputs (measured here, docs/decisions/0121-password-policy-and-zxcvbn-worker.md), and loading
 * the dictionaries ~300 ms. Only the first STRENGTH_INPUT_LIMIT characters are weighed: a longer
 * password is at least as strong as its start, and the cost grows faster than the length.
 *
 * The worker starts on the first estimate (most processes never set a password) and ends after
 * 10 s without one (STRENGTH_WORKER_IDLE_MS), giving back the dictionaries' memory: ~85 MB of resident memory while it
 * lives (issue 45, docs/decisions/0341-idle-memory-causes.md), against ~0.3 s to start it again
 * for the next password set after a quiet spell. Estimates queue in it one at a time.
 * The same worker answers whether the password is on the common-password list that ships in
 * @zxcvbn-ts/language-common (its `passwords-common` dictionary: 49,233 passwords, most common first;
 * MIT licence).
 */
import { createRequire } from 'node:module';
import { IdleWorker } from '../util/idle-worker.js';

/** Characters of a password that zxcvbn weighs. */
export const STRENGTH_INPUT_LIMIT = 64;
/** How long the worker outlives its last estimate (bench/refresh.ts waits this out before measuring). */
export const STRENGTH_WORKER_IDLE_MS = 10_000;

export interface StrengthEstimate {
  /** zxcvbn's score, 0 (too guessable) to 4 (very unguessable). */
  score: 0 | 1 | 2 | 3 | 4;
  /** On the shipped common-password list (case-insensitive). */
  common: boolean;
  /** zxcvbn's warning and suggestions, in English; empty when it has none. */
  warning: string;
  suggestions: string[];
}

/** The worker's body (util/idle-worker.ts): plain CommonJS, so it needs no file of its own beside the build. */
const WORKER_SOURCE = `
const { workerData, parentPort } = require('node:worker_threads');
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
      result: {
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

const strength = new IdleWorker<{ password: string; userInputs: string[] }, StrengthEstimate>(
  'password strength',
  WORKER_SOURCE,
  () => {
    const require = createRequire(import.meta.url);
    return {
      core: require.resolve('@zxcvbn-ts/core'),
      common: require.resolve('@zxcvbn-ts/language-common'),
      en: require.resolve('@zxcvbn-ts/language-en'),
      limit: STRENGTH_INPUT_LIMIT,
    };
  },
  STRENGTH_WORKER_IDLE_MS,
);

/** zxcvbn's estimate of `password` (its first STRENGTH_INPUT_LIMIT characters), penalising `userInputs` (e-mail, name). */
export function estimateStrength(password: string, userInputs: string[] = []): Promise<StrengthEstimate> {
  return strength.call({ password, userInputs: userInputs.filter(Boolean).slice(0, 10) });
}
