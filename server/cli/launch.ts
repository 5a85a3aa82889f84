/**
 * How the long-running `gatehouse serve` process is started: the settings that must be given
 * before the process exists (V8 sizes its young generation at start-up, glibc reads its malloc
 * tunables from the environment at load), so code cannot apply them to itself. Every launcher
 * uses these: the Electron supervisor (both spawners), the bench helpers, the tests' server
 * helpers, and bin/gatehouse.js (`npm start`, the installed `gatehouse serve`), which runs itself
 * again with them when started without. Why each one:
 * docs/decisions/0072-memory-floor.md.
 */

import { parseSwitch } from '../util/switches.js';

/** Node/V8 flags: a 1 MiB semi-space instead of V8's default of growing it to 16 MiB (×2). */
const BASE_NODE_ARGS: readonly string[] = ['--max-semi-space-size=1'];

/**
 * Low-memory mode (GATEHOUSE_LOW_MEMORY=1): JavaScript runs in V8's interpreter only (no
 * optimizing or baseline compiler, whose code and the node binary's compiler pages it would
 * touch are most of the difference) and V8 sizes for memory over speed. Idle memory falls below
 * 80 MB; the price is CPU per request (docs/decisions/0073-low-memory-mode.md). Not `--lite-mode`:
 * that implies `--jitless`, which turns WebAssembly off and with it Node's `fetch` (undici's
 * HTTP parser), which external sign-in providers use.
 */
export const LOW_MEMORY_NODE_ARGS: readonly string[] = ['--no-opt', '--no-sparkplug', '--optimize-for-size'];

/** GATEHOUSE_LOW_MEMORY, off unless set. */
export function parseLowMemory(raw: string | undefined): boolean | undefined {
  return parseSwitch(raw, false);
}

/** Whether the environment asks for low-memory mode. */
export function lowMemoryRequested(env: Record<string, string | undefined>): boolean {
  return parseLowMemory(env.GATEHOUSE_LOW_MEMORY) === true;
}

/** The Node/V8 flags for a server that will run with `env`. */
export function serveNodeArgs(env: Record<string, string | undefined>): string[] {
  return [...BASE_NODE_ARGS, ...(lowMemoryRequested(env) ? LOW_MEMORY_NODE_ARGS : [])];
}

/** Whether this process runs in low-memory mode (its V8 flags, whatever asked for them). */
export function lowMemoryActive(execArgv: readonly string[] = process.execArgv): boolean {
  return LOW_MEMORY_NODE_ARGS.every((arg) => execArgv.includes(arg));
}

/** Environment: allocations of 128 KiB and more are mmapped, so freed argon2 blocks go back. */
export const SERVE_ENV: Readonly<Record<string, string>> = { MALLOC_MMAP_THRESHOLD_: '131072' };

/**
 * The artefact every launcher runs, relative to the project root: the server bundled into one
 * ES module by scripts/bundle-server.mjs (docs/decisions/0071-bundled-server.md).
 */
export const SERVER_BUNDLE = 'dist/gatehouse.mjs';

/** Whether this process was started with the launch settings above (bin/gatehouse.js asks). */
export function launchSettingsApplied(execArgv: readonly string[], env: Record<string, string | undefined>): boolean {
  return serveNodeArgs(env).every((arg) => execArgv.includes(arg)) && Object.entries(SERVE_ENV).every(([key, value]) => env[key] === value);
}
