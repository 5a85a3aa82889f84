/**
 * App presets from the command line (spec presets-and-operations.md: "the CLI has `gatehouse
 * preset list` and `gatehouse app create --preset <id> --base-url <url>`"), as child processes of
 * the built CLI against a real server: the list with each preset's status, one preset's inputs and
 * sources, creating from a preset with its other inputs as --input, the set-up text with the
 * secret as a placeholder, and errors naming the flag.
 */
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failed, ok } from '../helpers/cli-result.js';
import { CLI, cleanEnv, ensureBuilt, removeTempDirs, runCli, startServer, tempDir, type ServerProcess } from '../helpers/server-process.js';

let server: ServerProcess;
let env: NodeJS.ProcessEnv;
let token: string;

const gatehouse = (...args: string[]) => runCli(args, env);

beforeAll(async () => {
  ensureBuilt();
  const dataDir = tempDir('gatehouse-cli-presets-');
  server = await startServer(process.execPath, [CLI, 'serve', '--port', '0', '--data-dir', dataDir], cleanEnv());
  token = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
  env = cleanEnv({ GATEHOUSE_DATA_DIR: dataDir, GATEHOUSE_URL: server.url });
  const group = await fetch(`${server.url}/api/admin/groups`, {
    method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ id: 'admins', name: 'Admins' }),
  });
  expect(group.status).toBe(201);
}, 300_000);

afterAll(async () => {
  await server?.stop();
  removeTempDirs();
});

describe('gatehouse preset', () => {
  it('lists every preset with its protocol and whether it is tested here', async () => {
    const out = ok(await gatehouse('preset', 'list'));
    const lines = out.split('\n');
    expect(lines[0]).toMatch(/^ID +NAME +PROTOCOL +STATUS$/);
    expect(lines.find((l) => l.startsWith('apache-mod-auth-openidc '))).toMatch(/ oidc +tested here$/);
    expect(lines.find((l) => l.startsWith('grafana '))).toMatch(/^grafana +Grafana +oidc +checked 10\.4$/);
    expect(lines.find((l) => l.startsWith('home-assistant '))).toMatch(/ forward-auth +tested here$/);
    expect(lines.find((l) => l.startsWith('proxmox-ve '))).toMatch(/ oidc +docs 9\.1$/);
    expect(out).toContain('Create one with `gatehouse app create --preset ID --base-url URL`');
    const json = JSON.parse(ok(await gatehouse('preset', 'list', '--json')));
    expect(json.presets.length).toBeGreaterThanOrEqual(20);
  });

  it('shows a preset\'s inputs as flags, its checks and its sources', async () => {
    const out = ok(await gatehouse('preset', 'show', 'grafana'));
    expect(out).toContain('Preset:');
    expect(out).toContain('grafana — Grafana');
    expect(out).toContain('--base-url URL  Grafana address (root_url), e.g. https://grafana.lan.example');
    expect(out).toContain('--input adminGroup=VALUE  Group whose members are Grafana Admins (optional), e.g. admins');
    expect(out).toContain('settings checked here (Grafana 10.4 from its documentation)');
    expect(out).toContain('Configure Generic OAuth authentication, Steps (callback /login/generic_oauth)');
    failed(await gatehouse('preset', 'show', 'wordpress'), 'There is no preset "wordpress". (preset_not_found)');
  });
});

describe('gatehouse app create --preset', () => {
  it('creates from the preset with --base-url and --input, prints the secret once with the set-up text filled in, and app setup prints it only as a placeholder', async () => {
    const out = ok(await gatehouse('app', 'create', '--preset', 'grafana', '--base-url', 'https://grafana.lan.example', '--input', 'admin-group=admins'));
    expect(out).toContain('Created application grafana (Grafana) from the grafana preset.');
    expect(out).toContain('Redirect URIs: https://grafana.lan.example/login/generic_oauth');
    const secret = /Client secret: +(ghs_\S+)/.exec(out)![1]!;
    // The set-up text right away, with the secret just shown in place of its placeholder (issue 44, m1).
    expect(out).toContain('What to configure in the app:');
    expect(out).toContain('--- grafana.ini ---');
    expect(out).toContain(`client_secret = ${secret}`);
    expect(out).not.toContain('<client-secret>');
    expect(out).toContain('Later: `gatehouse app setup grafana` prints it again, with the secret as a placeholder.');
    const setup = ok(await gatehouse('app', 'setup', 'grafana'));
    expect(setup).not.toContain(secret);
    expect(setup).toContain('--- grafana.ini ---');
    expect(setup).toContain('client_secret = <client-secret>');
    expect(setup).toContain(`auth_url = ${server.url}/api/auth/oauth2/authorize`);
    const read = await fetch(`${server.url}/api/admin/applications/grafana`, { headers: { authorization: `Bearer ${token}` } });
    expect((await read.json()).preset).toEqual({ id: 'grafana', version: 1 });
  });

  it('names the flag of a bad input, refuses the application\'s own flags with --preset, and inputs without it', async () => {
    failed(
      await gatehouse('app', 'create', '--preset', 'grafana', '--base-url', 'ftp://grafana.lan.example', '--input', 'editorGroup=nobody', '--id', 'grafana2'),
      'The inputs of the Grafana preset are not valid. (validation_failed)',
      '  --base-url: must be an http(s) URL',
      '  --input editorGroup=: there is no group "nobody"',
    );
    failed(await gatehouse('app', 'create', '--preset', 'wordpress', '--base-url', 'https://blog.lan.example'), 'The request is not valid. (validation_failed)', '  preset: there is no preset "wordpress" (GET /api/admin/presets lists them)');
    failed(
      await gatehouse('app', 'create', '--preset', 'outline', '--base-url', 'https://wiki.lan.example', '--audience', 'https://wiki.lan.example'),
      "--preset sets the application's settings; leave out --audience (change them afterwards with `gatehouse app update`).",
    );
    failed(await gatehouse('app', 'create', '--name', 'Wiki', '--base-url', 'https://wiki.lan.example'), '--base-url and --input are the inputs of a preset: give --preset too.');
    failed(await gatehouse('app', 'create', '--preset', 'outline', '--input', 'baseUrl'), '--input takes KEY=VALUE, got "baseUrl".');
  });
});
