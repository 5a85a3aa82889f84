/**
 * How the long-running `gatehouse serve` process is started: the settings that must be given
 * before the process exists (V8 sizes its young generation at start-up, glibc reads its malloc
 * tunables from the environment at load), so code cannot apply them to itself. Every launcher
 * uses these: the Electron supervisor (both spawners), the bench helpers, the tests' server
 * helpers, and bin/gatehouse.js (`npm start`, the installed `gatehouse serve`), which runs itself
 * again with them when started without. Why each one: docs/decisions.md, "Benchmark suite and
 * global costs".
 */

/** Node/V8 flags: a 1 MiB semi-space instead of V8's default of growing it to 16 MiB (×2). */
export const SERVE_NODE_ARGS: readonly string[] = ['--max-semi-space-size=1'];

/** Environment: allocations of 128 KiB and more are mmapped, so freed argon2 blocks go back. */
export const SERVE_ENV: Readonly<Record<string, string>> = { MALLOC_MMAP_THRESHOLD_: '131072' };

/**
 * The artefact every launcher runs, relative to the project root: the server bundled into one
 * ES module by scripts/bundle-server.mjs (docs/decisions.md, "Bundled server artefact").
 */
export const SERVER_BUNDLE = 'dist/gatehouse.mjs';

/** Whether this process was started with the launch settings above (bin/gatehouse.js asks). */
export function launchSettingsApplied(execArgv: readonly string[], env: Record<string, string | undefined>): boolean {
  return SERVE_NODE_ARGS.every((arg) => execArgv.includes(arg)) && Object.entries(SERVE_ENV).every(([key, value]) => env[key] === value);
}
