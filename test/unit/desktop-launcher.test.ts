/**
 * `npm run desktop` (scripts/desktop.mjs) without an Electron binary: Electron's own first-launch
 * download really runs and fails (its mirror is a closed port on this machine, so the result is
 * the same with or without internet), and the launcher says so in words, in one screen, with the
 * three ways out and the browser alternative, never a stack trace. The cache folder it names is
 * the one Electron's download tool really reads, and with a binary in place it runs `electron .`.
 */
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, ensureBuilt, removeTempDirs, ROOT, tempDir } from '../helpers/server-process.js';

const electronVersion = (JSON.parse(readFileSync(join(ROOT, 'node_modules/electron/package.json'), 'utf8')) as { version: string }).version;
const zip = `electron-v${electronVersion}-${process.platform}-${process.arch}.zip`;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(file: string, env: NodeJS.ProcessEnv, args: string[] = []): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, [file, ...args], { cwd: ROOT, env, timeout: 120_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, stdout, stderr }),
    );
  });
}

/** A loopback port with nothing listening on it. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** No binary anywhere: an empty override folder, an empty cache, a mirror nobody answers on. */
async function offlineEnv(): Promise<NodeJS.ProcessEnv> {
  const env = cleanEnv();
  for (const key of Object.keys(env)) if (/^(electron_|ELECTRON_|npm_config_electron)/i.test(key)) delete env[key];
  return {
    ...env,
    ELECTRON_OVERRIDE_DIST_PATH: tempDir('gatehouse-electron-dist-'),
    electron_config_cache: tempDir('gatehouse-electron-cache-'),
    ELECTRON_MIRROR: `http://127.0.0.1:${await closedPort()}/`,
  };
}

beforeAll(() => ensureBuilt(), 300_000);
afterAll(() => removeTempDirs());

describe('npm run desktop', () => {
  it('without a binary that can be downloaded: one screen of words, exit 1, no stack trace', async () => {
    const env = await offlineEnv();
    const result = await run('scripts/desktop.mjs', env);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    const text = result.stderr;
    const lines = text.trimEnd().split('\n');
    expect(lines.length).toBeLessThanOrEqual(25);
    expect(lines.every((line) => line.length <= 140)).toBe(true);
    expect(text).not.toMatch(/^\s+at /m);
    expect(text).not.toMatch(/Error:/);
    expect(lines[0]).toBe(`Gatehouse desktop: fetching Electron ${electronVersion} (first launch)…`);
    expect(text).toContain('Gatehouse desktop cannot start: the Electron binary could not be downloaded.');
    // The cause, from Electron's own download attempt.
    expect(text).toContain('and that failed: fetch failed');
    expect(text).toContain(`Address: ${env.ELECTRON_MIRROR}v${electronVersion}/${zip}`);
    // The three ways out, and the alternative that always works.
    expect(text).toContain('1. Run `npm run desktop` on a machine with internet access');
    expect(text).toMatch(/2\. Bring the zip .* electron_config_cache/s);
    expect(text).toContain('then: electron_config_cache=<dir> npm run desktop');
    expect(text).toContain('3. Use a mirror of Electron releases on your network');
    expect(text).toContain('ELECTRON_MIRROR=https://mirror.example.lan/electron/ npm run desktop');
    expect(text).toContain('`npm start` runs the server, and the control panel is\nat http://127.0.0.1:8787/admin/ in any browser');
  });

  it('names the cache folder that Electron\'s download tool reads (way 2)', async () => {
    const env = await offlineEnv();
    const { stderr } = await run('scripts/desktop.mjs', env);
    const folder = new RegExp(`${zip.replace(/\./g, '\\.')} into <dir>/([0-9a-f]{64})/`).exec(stderr)?.[1];
    expect(folder).toMatch(/^[0-9a-f]{64}$/);
    const cache = env.electron_config_cache!;
    mkdirSync(join(cache, folder!));
    writeFileSync(join(cache, folder!, zip), 'not really a zip');
    // The download tool finds the file there (and then refuses it: its checksum is wrong).
    const install = await run('node_modules/electron/install.js', { ...env, DEBUG: '@electron/get:*' });
    expect(install.code).toBe(1);
    expect(install.stderr).toContain('Cache hit');
    expect(install.stderr).toContain(`Generated checksum for "${zip}" did not match expected checksum`);
  });

  it.runIf(process.platform !== 'win32')('with a binary in place, builds what is stale and runs it on this checkout, passing its exit code on', async () => {
    const dist = tempDir('gatehouse-electron-dist-');
    const fake = join(dist, process.platform === 'darwin' ? 'Electron.app/Contents/MacOS/Electron' : 'electron');
    mkdirSync(join(fake, '..'), { recursive: true });
    writeFileSync(fake, '#!/bin/sh\necho "electron $*"\nexit 7\n');
    chmodSync(fake, 0o755);
    const result = await run('scripts/desktop.mjs', { ...(await offlineEnv()), ELECTRON_OVERRIDE_DIST_PATH: dist }, ['--trace-warnings']);
    expect(result.stderr).not.toContain('fetching Electron');
    expect(result.stdout.trim().split('\n').at(-1)).toBe(`electron ${ROOT.replace(/\/$/, '')} --trace-warnings`);
    expect(result.code).toBe(7);
  });
});
