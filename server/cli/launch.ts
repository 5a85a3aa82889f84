/**
 * The settings the long-running `gatehouse serve` process runs with, and how it gets them. The
 * process applies them to itself as its first step (`applyLaunchSettings`, from server/cli.ts
 * before the server's code is loaded), so `gatehouse serve`, `npm start` and the desktop app's
 * server child are one process each on every OS (issue 45; docs/decisions/0340-one-process.md):
 * - V8's young generation stays at its initial 1 MiB semi-space: `--semi-space-growth-factor=1`
 *   set at run time has the effect `--max-semi-space-size=1` has on the command line;
 * - glibc's mmap threshold and arena cap are set with mallopt (native/idle-memory) instead of
 *   MALLOC_MMAP_THRESHOLD_ in the environment;
 * - V8 ages and flushes baseline code like bytecode (`--flush-baseline-code`), so the idle
 *   reclaim's aging collections can drop what a burst of requests compiled;
 * - low-memory mode's V8 flags are set at run time, before the code they govern is compiled.
 * A launcher may still pass the command-line forms (the packaged desktop app's utilityProcess,
 * whose V8 is Electron's); they are then not set again. Why each one:
 * docs/decisions/0072-memory-floor.md.
 */
import { createRequire } from 'node:module';
import { setFlagsFromString } from 'node:v8';


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

/** The Node/V8 flags for a server that will run with `env`, for launchers that give them on the command line (Electron's utilityProcess). */
export function serveNodeArgs(env: Record<string, string | undefined>): string[] {
  return [...BASE_NODE_ARGS, ...(lowMemoryRequested(env) ? LOW_MEMORY_NODE_ARGS : [])];
}

/** Whether this process runs in low-memory mode (its V8 flags, given on its command line or set by applyLaunchSettings). */
export function lowMemoryActive(execArgv: readonly string[] = process.execArgv): boolean {
  return applied.lowMemory || LOW_MEMORY_NODE_ARGS.every((arg) => execArgv.includes(arg));
}

/** V8 flushes unused Sparkplug code too (off by default, so a function once compiled by it kept its bytecode for good). */
const FLUSH_BASELINE = '--flush-baseline-code';

/** glibc's mmap threshold: allocations of 128 KiB and more are mmapped, so freed argon2 blocks go back. */
const MMAP_THRESHOLD_BYTES = 131_072;

/**
 * glibc's malloc arenas: at most 2 (the main thread's and one every other thread shares) instead
 * of up to 8 per core, each keeping free fragments malloc_trim cannot return
 * (docs/decisions/0363-malloc-arenas.md).
 */
const ARENA_MAX = 2;

/** Environment, for launchers that start the server under a V8 that may not take flags at run time (Electron's). */
export const SERVE_ENV: Readonly<Record<string, string>> = { MALLOC_MMAP_THRESHOLD_: String(MMAP_THRESHOLD_BYTES), MALLOC_ARENA_MAX: String(ARENA_MAX) };

/** What applyLaunchSettings did (the start-up line and the memory benchmark read it). */
export interface AppliedSettings {
  /** V8 flags set at run time (empty when the command line had them, or under Electron). */
  v8Flags: string[];
  /** Whether glibc's mmap threshold is set (by mallopt, or by MALLOC_MMAP_THRESHOLD_ at start). */
  mmapThreshold: boolean;
  /** Whether glibc's arena count is capped (by mallopt, or by MALLOC_ARENA_MAX at start). */
  arenaMax: boolean;
  lowMemory: boolean;
}

const applied: AppliedSettings = { v8Flags: [], mmapThreshold: false, arenaMax: false, lowMemory: false };

interface MalloptCalls {
  setMmapThreshold?: (bytes: number) => boolean;
  setArenaMax?: (n: number) => boolean;
}

/** The helper's mallopt calls, when native/idle-memory is built (helpers built before one lack it). */
function mallopt(): MalloptCalls {
  try {
    return createRequire(import.meta.url)('@gatehouse/idle-memory') as MalloptCalls;
  } catch {
    return {}; // not built: ops/idle-memory.ts says so in the log
  }
}

/**
 * Applies the launch settings to this process, from inside it; `serve` calls it before loading the
 * server. V8 flags are set only under Node (Electron's V8 may freeze them after start, and its
 * launcher passes them on the command line) and only those the command line lacks.
 */
export function applyLaunchSettings(
  env: Record<string, string | undefined> = process.env,
  execArgv: readonly string[] = process.execArgv,
): AppliedSettings {
  const lowMemory = lowMemoryRequested(env);
  const flags: string[] = [];
  if (!process.versions.electron) {
    if (!execArgv.some((arg) => arg.startsWith('--max-semi-space-size'))) flags.push('--semi-space-growth-factor=1');
    // Baseline (Sparkplug) code ages and is flushed like bytecode; V8 keeps it, and the bytecode under it, for good otherwise (docs/decisions/0361-idle-bytecode-aging.md).
    if (!lowMemory && !execArgv.includes(FLUSH_BASELINE)) flags.push(FLUSH_BASELINE);
    if (lowMemory) flags.push(...LOW_MEMORY_NODE_ARGS.filter((arg) => !execArgv.includes(arg)));
  }
  for (const flag of flags) setFlagsFromString(flag);
  applied.v8Flags = flags;
  applied.lowMemory = lowMemory && !process.versions.electron;
  const helper = mallopt();
  applied.arenaMax = env.MALLOC_ARENA_MAX === String(ARENA_MAX) || helper.setArenaMax?.(ARENA_MAX) === true;
  applied.mmapThreshold = env.MALLOC_MMAP_THRESHOLD_ === String(MMAP_THRESHOLD_BYTES) || helper.setMmapThreshold?.(MMAP_THRESHOLD_BYTES) === true;
  return { ...applied, v8Flags: [...flags] };
}

/** What applyLaunchSettings did in this process (nothing when it was not called). */
export function appliedLaunchSettings(): AppliedSettings {
  return { ...applied, v8Flags: [...applied.v8Flags] };
}

/**
 * The artefact every launcher runs, relative to the project root: the server bundled into one
 * ES module by scripts/bundle-server.mjs (docs/decisions/0071-bundled-server.md).
 */
export const SERVER_BUNDLE = 'dist/gatehouse.mjs';
