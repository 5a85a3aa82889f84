// `npm run desktop`: the Electron shell on this checkout.
//
// Electron 42 and later have no install step: `npm install` never downloads anything, and the
// binary is fetched on first launch (node_modules/electron/install.js). On a machine that cannot
// reach the download, Electron's own launcher prints a stack trace. This one asks for the binary
// first, and when it cannot be had says so in words, in one screen, with the ways out, before any
// build starts. With the binary in place it builds what is stale and runs `electron .`.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { arch, homedir, platform } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const electronDir = dirname(createRequire(import.meta.url).resolve('electron/package.json'));
const { version, engines } = JSON.parse(readFileSync(join(electronDir, 'package.json'), 'utf8'));

/** Where the executable sits inside the unpacked zip, as node_modules/electron/install.js has it. */
const EXECUTABLE = { darwin: 'Electron.app/Contents/MacOS/Electron', win32: 'electron.exe' }[platform()] ?? 'electron';

/** The Electron executable when it is there (the same look-up as node_modules/electron/index.js). */
function installedBinary() {
  const pathFile = join(electronDir, 'path.txt');
  const relative = existsSync(pathFile) ? readFileSync(pathFile, 'utf8') : EXECUTABLE;
  const override = process.env.ELECTRON_OVERRIDE_DIST_PATH;
  const binary = override ? join(override, relative) : join(electronDir, 'dist', relative);
  if (!override && !existsSync(pathFile)) return undefined;
  return existsSync(binary) ? binary : undefined;
}

/** The zip and address @electron/get uses, honouring ELECTRON_MIRROR (and npm's electron_mirror). */
function download() {
  const zip = `electron-v${version}-${platform()}-${arch()}.zip`;
  const mirror = process.env.ELECTRON_MIRROR || process.env.npm_config_electron_mirror;
  const base = `${mirror || 'https://github.com/electron/electron/releases/download/'}v${version}`;
  // @electron/get keeps a download in <cache>/<sha256 of the address without the file name>/<zip>.
  const cacheDir = createHash('sha256').update(new URL(base).toString()).digest('hex');
  return { zip, url: `${base}/${zip}`, cacheDir };
}

/** @electron/get's default cache folder per OS (env-paths' cache directory for "electron"). */
function defaultCache() {
  if (platform() === 'win32') return join(process.env.LOCALAPPDATA ?? join(homedir(), 'AppData', 'Local'), 'electron', 'Cache');
  if (platform() === 'darwin') return join(homedir(), 'Library', 'Caches', 'electron');
  return join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'electron');
}

/** Runs Electron's own first-launch download quietly; returns the reason when it fails. */
async function fetchBinary() {
  console.error(`Gatehouse desktop: fetching Electron ${version} (first launch)…`);
  const result = spawnSync(process.execPath, [join(electronDir, 'install.js')], { encoding: 'utf8', timeout: 15 * 60_000 });
  if (result.status === 0 && installedBinary()) return undefined;
  const output = `${result.stderr ?? ''}\n${result.stdout ?? ''}`;
  // The first line of its stack trace, without the error's class name ("TypeError: fetch failed").
  const first = output.split('\n').find((line) => /\S/.test(line) && !/^\s+at /.test(line) && !/^Downloading/.test(line));
  let reason = (first ?? (result.error ? result.error.message : `exit code ${result.status}`)).replace(/^\w*Error:\s*/, '').trim();
  if (/fetch failed|ENOTFOUND|EAI_AGAIN/i.test(reason)) reason += await nameProblem(new URL(download().url).hostname);
  return reason;
}

/** " (github.com: no such host)" when the download host's name does not resolve, else "". */
async function nameProblem(host) {
  try {
    await Promise.race([lookup(host), new Promise((_, reject) => setTimeout(() => reject(new Error('timeout')), 3000).unref())]);
    return '';
  } catch (error) {
    return ` (${host}: ${error.code === 'ENOTFOUND' ? 'no such host; is this machine offline?' : 'its name does not resolve'})`;
  }
}

function nodeTooOld() {
  const wanted = /(\d+)\.(\d+)/.exec(engines?.node ?? '');
  if (!wanted) return undefined;
  const [major, minor] = process.versions.node.split('.').map(Number);
  const ok = major > Number(wanted[1]) || (major === Number(wanted[1]) && minor >= Number(wanted[2]));
  return ok ? undefined : `${wanted[1]}.${wanted[2]}`;
}

function explain(reason) {
  const { zip, url, cacheDir } = download();
  const issuer = process.env.GATEHOUSE_ISSUER ?? `http://127.0.0.1:${process.env.PORT ?? '8787'}`;
  const tooOld = nodeTooOld();
  const lines = [
    '',
    'Gatehouse desktop cannot start: the Electron binary could not be downloaded.',
    '',
    `  npm install does not fetch Electron ${version}; its first launch downloads it (about 110 MB),`,
    `  and that failed: ${reason}`,
    `  Address: ${url}`,
    '',
    'Three ways out:',
    '  1. Run `npm run desktop` on a machine with internet access (it keeps the binary in node_modules).',
    '  2. Bring the zip from a machine that has it, and point electron_config_cache at it: copy that',
    `     machine's Electron cache folder (${defaultCache()} on this OS) to <dir>, or put`,
    `     ${zip} into <dir>/${cacheDir}/`,
    '     then: electron_config_cache=<dir> npm run desktop',
    '  3. Use a mirror of Electron releases on your network (it fetches <mirror>v' + version + '/<zip>):',
    '     ELECTRON_MIRROR=https://mirror.example.lan/electron/ npm run desktop',
    '',
    'Without the desktop shell everything works: `npm start` runs the server, and the control panel is',
    `at ${issuer}/admin/ in any browser (the admin token: \`npm run gatehouse -- admin-token\`).`,
    ...(tooOld ? ['', `Note: the desktop build needs Node ${tooOld} or later (Electron ${version}); this is Node ${process.versions.node}.`] : []),
  ];
  console.error(lines.join('\n'));
}

let binary = installedBinary();
if (!binary) {
  const reason = await fetchBinary();
  binary = installedBinary();
  if (!binary) {
    explain(reason ?? 'the binary is still missing after the download');
    process.exit(1);
  }
}

// The server and panel the shell loads (compiled main process, bundled server, built panel).
const build = spawnSync(process.execPath, [join(root, 'scripts/build-if-stale.mjs')], { stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);

const child = spawn(binary, [root, ...process.argv.slice(2)], { stdio: 'inherit', windowsHide: false });
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
child.on('close', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
