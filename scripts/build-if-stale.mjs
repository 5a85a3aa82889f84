// Builds what `npm start`, `npm test` and `npm run gatehouse` need, only when sources are newer
// than the last build: the server (esbuild → dist/server/ and dist/electron/ file by file, then
// → dist/gatehouse.mjs, the artefact every launcher runs) and the control panel (vite →
// renderer/dist/).
//
// - No type checking here (decision 0351): esbuild emits what tsc would in ~1 s, where tsc took
//   most of a minute on a fresh clone. Type errors are `npm run typecheck`'s (and CI's); the
//   desktop installers' `npm run build` still runs tsc.
// - Freshness is judged by a stamp file touched after each build, not by the mtime of any
//   emitted file.
// - Several processes (parallel test files, a start while tests run) may call this at once; a
//   lock directory makes them build one at a time, and the later ones find the build fresh.
// - The native helper (native/idle-memory, built by node-gyp at `npm install`) is rebuilt when its
//   source is newer than its build, so a checkout that changed it runs the new one; where it was
//   never built (no compiler at install) it is left alone, as npm left it.
import { execSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const stamp = join(root, 'dist/.server-build-stamp');
const bundle = join(root, 'dist/gatehouse.mjs');
const lock = join(root, 'dist/.build-lock');
const LOCK_STALE_MS = 5 * 60_000;

function newest(dir, filter = () => true) {
  let latest = 0;
  if (!existsSync(dir)) return latest;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist') continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) latest = Math.max(latest, newest(path, filter));
    else if (filter(path)) latest = Math.max(latest, statSync(path).mtimeMs);
  }
  return latest;
}

function mtime(path) {
  return existsSync(path) ? statSync(path).mtimeMs : 0;
}

const sleep = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/** Whether the builder that holds the lock is gone (its pid file names a dead process). */
function holderGone() {
  try {
    const pid = Number(readFileSync(join(lock, 'pid'), 'utf8'));
    if (!pid) return false;
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return error.code === 'ESRCH';
  }
}

function acquireLock() {
  mkdirSync(join(root, 'dist'), { recursive: true });
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'pid'), String(process.pid));
      return;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      // A builder that died leaves its lock behind: take it over.
      if (holderGone() || Date.now() - mtime(lock) > LOCK_STALE_MS) rmSync(lock, { recursive: true, force: true });
      else sleep(200);
    }
  }
}

function serverStale() {
  const sources = Math.max(
    newest(join(root, 'server'), (p) => p.endsWith('.ts')),
    newest(join(root, 'electron'), (p) => p.endsWith('.ts')),
    mtime(join(root, 'tsconfig.json')),
    mtime(join(root, 'scripts/bundle-server.mjs')),
    newest(join(root, 'scripts/bundle')),
  );
  return !existsSync(join(root, 'dist/server/cli.js')) || !existsSync(bundle) || sources > mtime(stamp);
}

const nativeDir = join(root, 'native/idle-memory');
const nativeBuild = join(nativeDir, 'build/Release/idle_memory.node');
function nativeStale() {
  if (!existsSync(nativeBuild)) return false;
  return Math.max(newest(join(nativeDir, 'src')), mtime(join(nativeDir, 'binding.gyp'))) > mtime(nativeBuild);
}

const rendererIndex = join(root, 'renderer/index.html');
function rendererStale() {
  if (!existsSync(rendererIndex)) return false;
  const sources = Math.max(newest(join(root, 'renderer')), mtime(rendererIndex));
  return sources > mtime(join(root, 'renderer/dist/index.html'));
}

async function build() {
  if (nativeStale()) {
    console.error('Building the native helper (native/idle-memory)…');
    try {
      execSync('npx --no-install node-gyp rebuild', { cwd: nativeDir, stdio: 'pipe' });
    } catch (error) {
      // An optional dependency: the server runs without it (and says so in its log).
      console.error(`The native helper did not build; the server runs without it: ${String(error.stderr ?? error.message).trim().split('\n').at(-1)}`);
    }
  }
  // The control panel (vite, its own process) builds while the server does: on a fresh clone the
  // two together take about as long as the panel alone.
  let panel = Promise.resolve(true);
  if (rendererStale()) {
    console.error('Building the control panel…');
    const vite = join(root, 'node_modules/vite/bin/vite.js');
    panel = new Promise((resolve) => {
      spawn(process.execPath, [vite, 'build', '--config', 'renderer/vite.config.ts', '--logLevel', 'warn'], { cwd: root, stdio: 'inherit' })
        .on('error', () => resolve(false))
        .on('exit', (code) => resolve(code === 0));
    });
  }
  let failed = false;
  if (serverStale()) {
    const startedAt = Date.now();
    console.error('Building the server…');
    try {
      const { bundleServer, emitServer } = await import('./bundle-server.mjs');
      await Promise.all([emitServer(), bundleServer()]);
      // Stamp with the build's start time, so a source saved during the build is rebuilt next time.
      writeFileSync(stamp, '');
      utimesSync(stamp, new Date(startedAt), new Date(startedAt));
    } catch (error) {
      // esbuild has printed each syntax error with its file and line.
      console.error(`Building the server failed: ${error.message.split('\n')[0]}`);
      failed = true;
    }
  }
  if (!(await panel)) {
    console.error('The control panel build failed; see the errors above.');
    failed = true;
  }
  if (failed) return 1;
  return 0;
}

if (!nativeStale() && !serverStale() && !rendererStale()) process.exit(0);
acquireLock();
let code = 1;
try {
  code = await build();
} finally {
  rmSync(lock, { recursive: true, force: true });
}
process.exit(code);
