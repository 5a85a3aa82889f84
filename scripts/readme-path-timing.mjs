#!/usr/bin/env node
// The README's quick start timed from `git clone` (issue 44, item 4; decision 0351): clone this
// repository into a scratch folder, `npm install` (or `npm ci` with --ci), the first build that
// `npm start` runs (scripts/build-if-stale.mjs), then the server until /healthz and /admin/ answer
// 200; with --browser, the README path in Chromium too (test/e2e/readme-path.test.ts, run in the
// clone). Prints each step's wall time, the total and the load average before and after.
//
//   node scripts/readme-path-timing.mjs [--ci] [--browser] [--keep] [--fresh-cache] [--from <repo>] [--ref <commit>]
//
// - npm uses its usual cache (~/.npm) unless --fresh-cache gives it an empty one, so the figure
//   says which: a warm cache is a developer's second clone, an empty one a newcomer's first.
// - It installs from the registry as a newcomer would: minutes, never part of `npm test`.
// - The clone is of the committed HEAD (uncommitted changes are not in it), or of --ref (an older
//   commit, for a same-run baseline), in a temporary folder removed at the end (--keep leaves it).
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';

const args = process.argv.slice(2);
const flag = (name) => args.includes(name);
const fromIndex = args.indexOf('--from');
const source = fromIndex >= 0 ? args[fromIndex + 1] : new URL('..', import.meta.url).pathname;
const refIndex = args.indexOf('--ref');
const ref = refIndex >= 0 ? args[refIndex + 1] : undefined;
const scratch = mkdtempSync(join(tmpdir(), 'gatehouse-readme-path-'));
const clone = join(scratch, 'gatehouse');
const env = { ...process.env };
// Nothing the project reads from the environment leaks in: the README's path sets none.
for (const key of Object.keys(env)) if (key.startsWith('GATEHOUSE_')) delete env[key];
if (flag('--fresh-cache')) env.npm_config_cache = join(scratch, 'npm-cache');

const load = () => loadavg().map((n) => n.toFixed(2)).join(' ');
const steps = [];
async function step(name, run) {
  const startedAt = performance.now();
  const note = await run();
  const seconds = (performance.now() - startedAt) / 1000;
  steps.push({ name, seconds, note });
  console.error(`${name}: ${seconds.toFixed(1)} s${note ? ` (${note})` : ''}`);
}
const sh = (command, commandArgs, options = {}) =>
  execFileSync(command, commandArgs, { cwd: clone, env, stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 << 20, ...options }).toString();

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

async function until(url, deadline) {
  for (;;) {
    try {
      const response = await fetch(url);
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${url} did not answer 200 in time`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const loadBefore = load();
let server;
try {
  await step('git clone', () => {
    sh('git', ['clone', '--quiet', source, clone], { cwd: scratch });
    if (ref) sh('git', ['checkout', '--quiet', ref]);
    return sh('git', ['log', '-1', '--format=%h']).trim();
  });
  await step(flag('--ci') ? 'npm ci' : 'npm install', () => {
    sh('npm', [flag('--ci') ? 'ci' : 'install', '--no-audit', '--no-fund']);
    let listed;
    try {
      listed = sh('npm', ['ls', '--all', '--parseable']);
    } catch (error) {
      listed = String(error.stdout ?? ''); // npm ls exits 1 on a peer-dependency complaint; the list is still there
    }
    const packages = new Set(listed.trim().split('\n').slice(1)).size;
    const size = sh('du', ['-sm', 'node_modules']).split('\t')[0];
    return `${packages} packages, ${size} MB, ${flag('--fresh-cache') ? 'empty' : 'usual'} npm cache`;
  });
  await step('first build', () => {
    sh(process.execPath, ['scripts/build-if-stale.mjs']);
  });
  await step('server ready', async () => {
    const port = await freePort();
    // `npm start` is `node bin/gatehouse.js serve` after the build above; a free port, not 8787.
    server = spawn(process.execPath, ['bin/gatehouse.js', 'serve'], { cwd: clone, env: { ...env, PORT: String(port) }, stdio: 'ignore' });
    const deadline = Date.now() + 60_000;
    await until(`http://127.0.0.1:${port}/healthz`, deadline);
    await until(`http://127.0.0.1:${port}/admin/`, deadline);
    return `/healthz and /admin/ 200 on port ${port}`;
  });
  server.kill('SIGTERM');
  server = undefined;
  if (flag('--browser')) {
    await step('browser (e2e)', () => {
      const out = sh('npx', ['vitest', 'run', '--project', 'e2e', 'test/e2e/readme-path.test.ts']);
      return out.match(/README path: ([^\n(]*)/)?.[1]?.trim() ?? 'passed';
    });
  }
} finally {
  server?.kill('SIGTERM');
  if (flag('--keep')) console.error(`clone kept in ${clone}`);
  else rmSync(scratch, { recursive: true, force: true });
}

const total = steps.reduce((sum, s) => sum + s.seconds, 0);
const minutes = (s) => {
  const whole = Math.round(s);
  return `${Math.floor(whole / 60)}:${String(whole % 60).padStart(2, '0')}`;
};
console.log('README path from git clone (scripts/readme-path-timing.mjs)');
for (const s of steps) console.log(`  ${s.name.padEnd(14)} ${minutes(s.seconds).padStart(6)}  ${s.note ?? ''}`);
console.log(`  ${'total'.padEnd(14)} ${minutes(total).padStart(6)}`);
console.log(`  load average ${loadBefore} before, ${load()} after (${cpus().length} cores)`);
