/** What a CLI run (runCli in server-process.ts) must look like when it succeeds or fails. */
import { expect } from 'vitest';
import type { RunResult } from './server-process.js';

/** Exit 0 with nothing on stderr; answers stdout. */
export function ok(result: RunResult): string {
  expect(result.stderr, result.stdout).toBe('');
  expect(result.code).toBe(0);
  return result.stdout;
}

/** Exit 1, these exact lines on stderr, nothing on stdout, no stack trace. */
export function failed(result: RunResult, ...lines: string[]): void {
  expect(result.stderr.trimEnd().split('\n')).toEqual(lines);
  expect(result.stdout).toBe('');
  expect(result.code).toBe(1);
}
