/**
 * `gatehouse config export | apply` as child processes of the built CLI against a real server
 * process: the plan in words, a dry run, secrets resolved from the CLI's own environment and from
 * files beside the configuration file, a file's problems as `FILE:LINE: path: message` (every one
 * of them: 20 mistakes in 5 applications are 20 lines), prune
 * asking first, `--json`, and export to stdout or a file.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, cleanEnv, ensureBuilt, removeTempDirs, runCli, startServer, tempDir, type ServerProcess } from '../helpers/server-process.js';
import { failed, ok } from '../helpers/cli-result.js';
import { EXISTING_MEDIA, MISTAKES, MISTAKES_FILE } from '../helpers/config-mistakes.js';

let server: ServerProcess;
let env: NodeJS.ProcessEnv;
let token: string;
let dir: string;

const CLIENT_SECRET = 'cs-from-the-cli-environment-0123456789ab';
const HOOK_SECRET = `whsec_${Buffer.alloc(32, 3).toString('base64')}`;
const gatehouse = (args: string[], extra: NodeJS.ProcessEnv = {}) => runCli(args, { ...env, ...extra });

async function api(method: string, path: string) {
  const res = await fetch(`${server.url}${path}`, { method, headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, text: await res.text() };
}

const FILE = `version: 1
groups:
  family:
    name: Family
applications:
  notes:
    name: Notes
    audience: https://notes.example.com/api
    redirectUris: [https://notes.example.com/cb]
    grantTypes: [client_credentials]
    clientSecret: \${NOTES_CLIENT_SECRET}
    webhookUrl: https://hooks.example.com/notes
    webhookSecret: file:secrets/notes-hook
  wiki:
    name: Wiki
    audience: https://wiki.example.com/api
    redirectUris: [https://wiki.example.com/cb]
`;

beforeAll(async () => {
  ensureBuilt();
  const dataDir = tempDir('gatehouse-cli-config-');
  server = await startServer(process.execPath, [CLI, 'serve', '--port', '0', '--data-dir', dataDir], cleanEnv());
  token = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
  env = cleanEnv({ GATEHOUSE_DATA_DIR: dataDir, GATEHOUSE_URL: server.url, NOTES_CLIENT_SECRET: CLIENT_SECRET });
  // The configuration lives in a folder of its own, with its secrets beside it.
  dir = tempDir('gatehouse-config-repo-');
  writeFileSync(join(dir, 'gatehouse.yaml'), FILE);
  (await import('node:fs')).mkdirSync(join(dir, 'secrets'));
  writeFileSync(join(dir, 'secrets', 'notes-hook'), `${HOOK_SECRET}\n`);
}, 300_000);

afterAll(async () => {
  await server?.stop();
  removeTempDirs();
});

describe('gatehouse config', () => {
  it('apply --dry-run prints the plan and changes nothing; apply makes it, printing generated secrets once; again: nothing to change', async () => {
    const file = join(dir, 'gatehouse.yaml');
    expect(ok(await gatehouse(['config', 'apply', file, '--dry-run']))).toBe(
      [
        'create group family',
        'create application notes',
        'create application wiki',
        '',
        'Dry run: 3 to create, 0 to update, 0 to delete. Nothing was changed.',
        '',
      ].join('\n'),
    );
    expect((await api('GET', '/api/admin/applications/notes')).status).toBe(404);

    const lines = ok(await gatehouse(['config', 'apply', file])).split('\n');
    expect(lines.slice(0, 9)).toEqual([
      'create group family',
      'create application notes',
      'create application wiki',
      '',
      `Applied ${file}: 3 created, 0 updated, 0 deleted.`,
      '',
      'New secrets, shown only now (store them where the applications read them):',
      expect.stringMatching(/^ {2}applications\.wiki\.clientSecret: ghs_[\w-]{43}$/),
      '',
    ]);
    expect(lines).toHaveLength(9);

    // The secret from the CLI's environment is the client's; the file's is the webhooks'.
    const grant = await fetch(`${server.url}/api/auth/oauth2/token`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`notes:${CLIENT_SECRET}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials',
    });
    expect(grant.status).toBe(200);

    expect(ok(await gatehouse(['config', 'apply', file]))).toBe(`Nothing to change: the server already matches ${file}.\n`);
  });

  it('export prints the YAML document, or writes it with --out; its secrets are the file\'s references', async () => {
    const served = (await api('GET', '/api/admin/config')).text;
    expect(ok(await gatehouse(['config', 'export']))).toBe(served);
    expect(served).toContain('    clientSecret: ${NOTES_CLIENT_SECRET}\n    webhookSecret: file:secrets/notes-hook\n');
    expect(served).not.toContain(CLIENT_SECRET);
    expect(served).not.toContain(HOOK_SECRET);
    const out = join(dir, 'exported.yaml');
    expect(ok(await gatehouse(['config', 'export', '--out', out]))).toBe(`Wrote the configuration to ${out}.\n`);
    expect(readFileSync(out, 'utf8')).toBe(served);
    expect((await import('node:fs')).statSync(out).mode & 0o777).toBe(0o600);
  });

  it('a changed file: the plan field by field; --json answers the API\'s plan', async () => {
    const file = join(dir, 'changed.yaml');
    writeFileSync(file, FILE.replace('name: Family', 'name: The family').replace('    name: Wiki\n', '    name: Wiki\n    consent: explicit\n'));
    expect(ok(await gatehouse(['config', 'apply', file, '--dry-run']))).toBe(
      [
        'update group family',
        '    name: "Family" → "The family"',
        'update application wiki',
        '    consent: "implicit" → "explicit"',
        '',
        'Dry run: 0 to create, 2 to update, 0 to delete. Nothing was changed.',
        '',
      ].join('\n'),
    );
    const answer = JSON.parse(ok(await gatehouse(['config', 'apply', file, '--json', '--dry-run'])));
    expect(answer.plan[1]).toEqual({ action: 'update', kind: 'application', id: 'wiki', changes: [{ field: 'consent', before: 'implicit', after: 'explicit' }] });
  });

  it('a file with problems: each as FILE:LINE: path: message, references the CLI could not resolve among them; exit 1', async () => {
    const file = join(dir, 'broken.yaml');
    writeFileSync(file, [
      'version: 1',
      'applications:',
      '  notes:',
      '    name: Notes',
      '    audience: https://notes.example.com/api',
      '    redirectUris: [http://notes.example.com/cb]',
      '    clientSecret: ${NOT_IN_THE_ENVIRONMENT}',
      '    webhookSecret: file:secrets/missing',
      '',
    ].join('\n'));
    failed(
      await gatehouse(['config', 'apply', file]),
      'The configuration file has 3 problems; nothing was changed. (invalid_configuration)',
      `  ${file}:6: applications.notes.redirectUris.0: http is allowed only for loopback or private-network hosts; use https`,
      `  ${file}:7: applications.notes.clientSecret: the environment variable NOT_IN_THE_ENVIRONMENT is not set (in the environment of gatehouse config apply)`,
      `  ${file}:8: applications.notes.webhookSecret: there is no file ${join(dir, 'secrets', 'missing')}`,
    );
    failed(await gatehouse(['config', 'apply', join(dir, 'nowhere.yaml')]), `Cannot read ${join(dir, 'nowhere.yaml')}: ENOENT.`);
  });

  it('--prune asks before it deletes; without a terminal it needs --yes', async () => {
    const file = join(dir, 'smaller.yaml');
    writeFileSync(file, FILE.replace(/ {2}wiki:\n(?: {4}.*\n)+/, ''));
    failed(
      await gatehouse(['config', 'apply', file, '--prune']),
      'gatehouse config apply --prune asks before it deletes, and there is no terminal to ask on: add --yes to delete what the file leaves out.',
    );
    expect((await api('GET', '/api/admin/applications/wiki')).status).toBe(200);
    expect(ok(await gatehouse(['config', 'apply', file, '--prune', '--yes']))).toBe(
      [
        'delete application wiki',
        '',
        `Applied ${file}: 0 created, 0 updated, 1 deleted.`,
        '',
      ].join('\n'),
    );
    expect((await api('GET', '/api/admin/applications/wiki')).status).toBe(404);
  });

  it('20 mistakes in 5 applications: 20 lines, FILE:LINE: path: message, in the order of the file', async () => {
    const res = await fetch(`${server.url}/api/admin/applications`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(EXISTING_MEDIA) });
    expect(res.status).toBe(201);
    const file = join(dir, 'mistakes.yaml');
    writeFileSync(file, MISTAKES_FILE);
    failed(
      await gatehouse(['config', 'apply', file, '--dry-run']),
      'The configuration file has 20 problems; nothing was changed. (invalid_configuration)',
      ...MISTAKES.map(([line, path, message]) => `  ${file}:${line}: ${path}: ${message}`),
    );
  });
});
