/**
 * The mail presets for real (issue 37, item 5: "Roundcube with Dovecot, mail through
 * introspection"): Debian's Dovecot 2.3 (dovecot-imapd) and Roundcube 1.6 (roundcube-core,
 * roundcube-sqlite3, served by PHP's built-in server), each in a temporary directory with its own
 * configuration. The Dovecot application and the Roundcube application (naming Dovecot as its
 * IMAP server: resourceServers) are created from their presets; each program gets the files of its
 * GET …/setup alone, placeholders filled in, on top of a bare configuration (where mail is stored,
 * which ports). A person signs in to Roundcube through Gatehouse; Roundcube logs in to IMAP with
 * the access token (XOAUTH2), and Dovecot accepts it after introspecting it with its own client
 * credentials.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOAuthServer, type OAuthServer } from '../helpers/oauth-server.js';
import { freePort } from '../helpers/free-port.js';
import { fill, fromPreset, setupFile, signedInBrowser } from '../helpers/preset-interop.js';

const ROUNDCUBE = '/usr/share/roundcube';

let server: OAuthServer;
let dir: string;
let site: string;
let dovecot: ChildProcess | undefined;
let php: ChildProcess | undefined;
let phpLog = '';

const read = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8') : '');

async function stop(child: ChildProcess | undefined) {
  if (child?.pid && child.exitCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    process.kill(child.pid, 'SIGTERM');
    await exited;
  }
}

/** Dovecot on 127.0.0.1 with the preset's files; the bare part: ports, paths, one mail user database. */
async function startDovecot(imapPort: number, files: { name: string; content: string }[]) {
  const root = join(dir, 'dovecot');
  for (const sub of ['run', 'mail', 'conf.d']) mkdirSync(join(root, sub), { recursive: true });
  chmodSync(root, 0o755);
  chmodSync(join(root, 'mail'), 0o777);
  // The set-up text names /etc/dovecot/…: here the files live in the temporary directory instead.
  for (const file of files) writeFileSync(join(root, file.name), file.content.replaceAll('/etc/dovecot/', `${root}/`));
  chmodSync(join(root, 'dovecot-oauth2.conf.ext'), 0o644);
  writeFileSync(join(root, 'dovecot.conf'), [
    `base_dir = ${root}/run`,
    'protocols = imap',
    `listen = 127.0.0.1`,
    'ssl = no',
    'disable_plaintext_auth = no',
    `log_path = ${root}/dovecot.log`,
    'auth_verbose = yes',
    'auth_mechanisms = plain',
    `service imap-login {\n  inet_listener imap {\n    address = 127.0.0.1\n    port = ${imapPort}\n  }\n}`,
    'service anvil {\n  chroot =\n}',
    'service imap-login {\n  chroot =\n}',
    `userdb {\n  driver = static\n  args = uid=nobody gid=nogroup home=${root}/mail/%u\n}`,
    'mail_location = maildir:~/Maildir',
    `!include ${root}/conf.d/10-auth-gatehouse.conf`,
    '',
  ].join('\n'));
  const check = spawnSync('doveconf', ['-c', join(root, 'dovecot.conf'), '-n'], { encoding: 'utf8' });
  expect(check.status, check.stderr).toBe(0);
  dovecot = spawn('dovecot', ['-F', '-c', join(root, 'dovecot.conf')], { stdio: 'ignore' });
  for (let i = 0; i < 100; i++) {
    if (read(join(root, 'dovecot.log')).includes('starting up')) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return { log: () => read(join(root, 'dovecot.log')) };
}

/** Roundcube under PHP's built-in server, its configuration directory the temporary one. */
async function startRoundcube(port: number, imapPort: number, presetConfig: string) {
  const config = join(dir, 'roundcube');
  mkdirSync(join(config, 'tmp'), { recursive: true });
  copyFileSync('/etc/roundcube/defaults.inc.php', join(config, 'defaults.inc.php'));
  copyFileSync('/etc/roundcube/mimetypes.php', join(config, 'mimetypes.php'));
  const db = join(config, 'roundcube.db');
  const init = spawnSync('sqlite3', [db], { input: readFileSync(join(ROUNDCUBE, 'SQL/sqlite.initial.sql')), encoding: 'utf8' });
  expect(init.status, init.stderr).toBe(0);
  writeFileSync(join(config, 'gatehouse.inc.php'), presetConfig);
  writeFileSync(join(config, 'config.inc.php'), [
    '<?php',
    '$config = [];',
    `$config['db_dsnw'] = 'sqlite:///${db}?mode=0646';`,
    `$config['imap_host'] = '127.0.0.1:${imapPort}';`,
    `$config['des_key'] = '${randomBytes(18).toString('base64')}';`,
    `$config['temp_dir'] = '${join(config, 'tmp')}/';`,
    "$config['log_driver'] = 'stdout';",
    "$config['plugins'] = [];",
    "$config['skin'] = 'elastic';",
    // The preset's lines, as the set-up text gives them.
    `include '${join(config, 'gatehouse.inc.php')}';`,
    '',
  ].join('\n'));
  php = spawn('php', ['-S', `127.0.0.1:${port}`, '-t', ROUNDCUBE], { env: { PATH: '/usr/bin:/bin', ROUNDCUBE_CONFIG_DIR: config }, stdio: ['ignore', 'pipe', 'pipe'] });
  php.stdout!.on('data', (c) => (phpLog += c));
  php.stderr!.on('data', (c) => (phpLog += c));
  for (let i = 0; i < 100; i++) {
    if (await fetch(`http://127.0.0.1:${port}/`, { redirect: 'manual' }).then(() => true, () => false)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
}

let dovecotLog: () => string;

beforeAll(async () => {
  server = await startOAuthServer();
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-presets-mail-'));
  chmodSync(dir, 0o755);
  const [imapPort, webPort] = [await freePort(), await freePort()];
  site = `http://localhost:${webPort}`;
  const dovecotApp = await fromPreset(server, 'dovecot', { host: 'localhost' }, 'dovecot');
  const roundcubeApp = await fromPreset(server, 'roundcube', { baseUrl: site, imapApplication: 'dovecot' }, 'roundcube');
  // Dovecot's client secret goes into a URL: URL-encoded, as the preset's caveat says.
  const dovecotFiles = dovecotApp.setup.files.map((f) => ({ ...f, content: fill(f.content, { clientSecret: encodeURIComponent(dovecotApp.app.clientSecret!) }) }));
  dovecotLog = (await startDovecot(imapPort, dovecotFiles)).log;
  await startRoundcube(webPort, imapPort, fill(setupFile(roundcubeApp.setup, 'config.inc.php'), { clientSecret: roundcubeApp.app.clientSecret! }));
}, 90_000);

afterAll(async () => {
  await stop(php);
  await stop(dovecot);
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('Roundcube with Dovecot, configured from the presets\' set-up text', () => {
  it('signs a person in to Roundcube through Gatehouse, and Dovecot accepts the access token after introspecting it', async () => {
    const browser = await signedInBrowser(server, 'roundcube', 'ada@example.com', [new URL(site).host]);
    const visit = await browser.follow(`${site}/?_task=login&_action=oauth`);
    const trace = `${JSON.stringify(visit.hops)}\n--- php\n${phpLog}\n--- dovecot\n${dovecotLog()}`;
    expect(visit.hops.map((h) => new URL(h.url).pathname).slice(0, 3), trace).toEqual(['/', '/api/auth/oauth2/authorize', '/index.php/login/oauth']);
    expect(visit.res.status, trace).toBe(200);
    expect(new URL(visit.url).searchParams.get('_task'), trace).toBe('mail');
    expect(dovecotLog(), trace).toMatch(/imap-login: Info: Login: user=<ada@example\.com>, method=XOAUTH2/);
  });

  it('refuses a token Dovecot may not introspect: without the resource server, introspection is inactive and the IMAP login fails', async () => {
    const response = await server.admin('PATCH', '/api/admin/applications/roundcube', { resourceServers: [] });
    expect(response.status).toBe(200);
    const browser = await signedInBrowser(server, 'roundcube', 'bea@example.com', [new URL(site).host]);
    const visit = await browser.follow(`${site}/?_task=login&_action=oauth`);
    expect(new URL(visit.url).searchParams.get('_task')).not.toBe('mail');
    expect(dovecotLog()).toMatch(/oauth2\(bea@example\.com,[^)]*\): oauth2 failed: Introspection failed: Provided token is not valid/);
    expect(dovecotLog()).not.toMatch(/Login: user=<bea@example\.com>/);
  });
});

