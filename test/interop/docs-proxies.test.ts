/**
 * The reverse-proxy blocks of docs/postgresql.md are real (issue 39, item 5), checked with
 * Debian 12's own software:
 * - the nginx block, as written, passes `nginx -t` on nginx 1.22 (and the `http2 on;` the guide
 *   used to give does not), and the Caddyfile passes `caddy validate` on Caddy 2.6;
 * - each then runs in front of two real Gatehouse processes (the upstream addresses and the
 *   listen address moved to free ports on 127.0.0.1, TLS left out: `nginx -t` has checked it) and
 *   shows what the guide's "Rolling restarts" promises: stopping one instance fails no request,
 *   the restarted instance serves again within the documented 10 s of answering /readyz, and
 *   stopping the other one after that wait fails no request either.
 * And docs/operations.md's "Behind a reverse proxy (one instance)" Caddyfile passes `caddy validate`.
 * Each proxy and instance is started here, on a free port, and stopped by the pid started.
 *
 * And the forward-auth snippets of the README's "Protect an app without OIDC" (Caddy) and of
 * docs/protect-apps-without-oidc.md (Caddy, nginx, Traefik; issue 34) are real too:
 * - each block is, line for line without comments and blank lines (and, for Caddy and nginx,
 *   indentation), what the documented command prints: the built `gatehouse app show media
 *   --proxy … --upstream http://127.0.0.1:8096` against a Gatehouse whose issuer is
 *   https://id.lan.example, with the application made by `gatehouse app create …
 *   --forward-auth-host media.lan.example --forward-auth-host '*.media.lan.example'`; so the docs
 *   cannot drift from the server's snippets (server/forward-auth/snippets.ts);
 * - the Caddy block passes `caddy validate`, the nginx block `nginx -t` (in an http block, with a
 *   temporary certificate for the one it names, in a private mount namespace whose /etc/hosts
 *   gives id.lan.example an address, since nginx resolves proxy_pass hosts when it loads);
 * - the Traefik block parses as YAML into the same middleware, routers and services.
 * The README shows only Caddy's, to stay within its size (test/unit/docs.test.ts).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { freePort } from '../helpers/free-port.js';
import { CLI, ROOT, cleanEnv, ensureBuilt, removeTempDirs, runCli, startServer, tempDir, type ServerProcess } from '../helpers/server-process.js';

const GUIDE = readFileSync(join(ROOT, 'docs/postgresql.md'), 'utf8');
/** The documented wait after a restarted instance answers /readyz, before stopping the next. */
const DOCUMENTED_WAIT_MS = 10_000;

function block(language: string): string {
  const match = new RegExp('```' + language + '\\n([\\s\\S]*?)```').exec(GUIDE);
  if (!match) throw new Error(`docs/postgresql.md has no ${language} block`);
  return match[1]!;
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { env, timeout: 60_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, output: stdout + stderr }),
    );
  });
}

const dir = tempDir('gatehouse-docs-proxies-');
const caddyEnv = { ...process.env, HOME: dir, XDG_DATA_HOME: join(dir, 'data'), XDG_CONFIG_HOME: join(dir, 'config') };

/** The guide's nginx block inside a whole configuration of our own (temporary paths only). */
function nginxConf(serverBlock: string, name: string): string {
  for (const sub of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(dir, name, sub), { recursive: true });
  const text = [
    `pid ${join(dir, name, 'nginx.pid')};`,
    'worker_processes 2;',
    'events { worker_connections 256; }',
    'http {',
    '  access_log off;',
    ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((kind) => `  ${kind}_temp_path ${join(dir, name, kind === 'client_body' ? 'body' : kind)};`),
    serverBlock
      .replace('/etc/ssl/id.example.com.crt', join(dir, 'cert.pem'))
      .replace('/etc/ssl/id.example.com.key', join(dir, 'key.pem')),
    '}',
  ].join('\n');
  const file = join(dir, name, 'nginx.conf');
  writeFileSync(file, text);
  return file;
}

const nginxArgs = (conf: string) => ['-c', conf, '-e', join(dirname(conf), 'error.log'), '-p', `${dirname(conf)}/`];
const dirname = (file: string) => file.slice(0, file.lastIndexOf('/'));

// The certificate the nginx block names (nginx -t and nginx itself load it).
beforeAll(() =>
  run('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-days', '2', '-subj', '/CN=id.example.com']),
);

describe('docs/postgresql.md: the proxy configurations as written', () => {

  it('the nginx block passes nginx -t on Debian 12 nginx 1.22; the http2 directive it used to have does not', async () => {
    const version = await run('nginx', ['-v']);
    expect(version.output).toMatch(/nginx\/1\.22\./);
    const checked = await run('nginx', ['-t', ...nginxArgs(nginxConf(block('nginx'), 'nginx-check'))]);
    expect(checked.output).toContain('syntax is ok');
    expect(checked.output).toContain('test is successful');
    expect(checked.code).toBe(0);
    const old = block('nginx').replace('listen 443 ssl http2;', 'listen 443 ssl;\n    http2 on;');
    const refused = await run('nginx', ['-t', ...nginxArgs(nginxConf(old, 'nginx-old'))]);
    expect(refused.output).toContain('unknown directive "http2"');
    expect(refused.code).toBe(1);
  });

  it('the Caddyfile passes caddy validate on Debian 12 Caddy 2.6', async () => {
    expect((await run('caddy', ['version'])).output).toMatch(/^v?2\.6\./);
    const file = join(dir, 'Caddyfile');
    writeFileSync(file, block('caddyfile'));
    const validated = await run('caddy', ['validate', '--config', file, '--adapter', 'caddyfile'], caddyEnv);
    expect(validated.output).toContain('Valid configuration');
    expect(validated.code).toBe(0);
  });
});

describe('docs/operations.md: behind a reverse proxy (one instance)', () => {
  it('the Caddyfile passes caddy validate on Debian 12 Caddy 2.6', async () => {
    const section = /## Behind a reverse proxy \(one instance\)\n([\s\S]*?)\n## /.exec(readFileSync(join(ROOT, 'docs/operations.md'), 'utf8'))?.[1];
    const caddyfile = section && /```caddyfile\n([\s\S]*?)```/.exec(section)?.[1];
    expect(caddyfile).toContain('reverse_proxy 127.0.0.1:8787');
    const file = join(dir, 'Caddyfile.one-instance');
    writeFileSync(file, caddyfile!);
    const validated = await run('caddy', ['validate', '--config', file, '--adapter', 'caddyfile'], caddyEnv);
    expect(validated.output).toContain('Valid configuration');
    expect(validated.code).toBe(0);
  });
});

/** The README's forward-auth section and its fenced blocks, by language. */
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const PROTECT = /\n## Protect an app without OIDC\n([\s\S]*?)\n## /.exec(README)?.[1] ?? '';
function readmeBlock(language: string): string {
  const match = new RegExp('```' + language + '\\n([\\s\\S]*?)```').exec(PROTECT);
  if (!match) throw new Error(`README.md's "Protect an app without OIDC" has no ${language} block`);
  return match[1]!;
}

/** docs/protect-apps-without-oidc.md's snippet for a proxy: the block after its bold name. */
const PAGE = readFileSync(join(ROOT, 'docs/protect-apps-without-oidc.md'), 'utf8');
function pageBlock(name: 'Caddy' | 'nginx' | 'Traefik'): string {
  const from = PAGE.indexOf(`**${name}**`);
  const match = /```[a-z]*\n([\s\S]*?)```/.exec(PAGE.slice(from));
  if (from < 0 || !match) throw new Error(`docs/protect-apps-without-oidc.md has no ${name} block`);
  return match[1]!;
}

/**
 * A configuration as the README shows it: comments and blank lines gone; for Caddy and nginx
 * (where they carry no meaning) indentation and runs of spaces too. YAML keeps its indentation.
 */
function withoutComments(text: string, keepIndentation: boolean): string[] {
  return text
    .split('\n')
    .map((line) => line.replace(/(^|\s)#.*$/, '').trimEnd())
    .filter((line) => line !== '')
    .map((line) => (keepIndentation ? line : line.trim().replace(/\s+/g, ' ')));
}

describe('README.md and protect-apps-without-oidc.md: the forward-auth snippets are what `gatehouse app show --proxy` prints, and they load', () => {
  const TOKEN = 'docs-proxies-readme-admin-token';
  const printed: Record<string, string> = {};
  let server: ServerProcess | undefined;

  beforeAll(async () => {
    ensureBuilt();
    server = await startServer(
      process.execPath,
      [CLI, 'serve'],
      cleanEnv({ HOST: '127.0.0.1', PORT: String(await freePort()), GATEHOUSE_DATA_DIR: tempDir('gatehouse-docs-readme-'), GATEHOUSE_ISSUER: 'https://id.lan.example', ADMIN_TOKEN: TOKEN }),
    );
    const env = cleanEnv({ GATEHOUSE_URL: server.url, ADMIN_TOKEN: TOKEN });
    const created = await runCli(
      ['app', 'create', '--name', 'Media', '--audience', 'https://media.lan.example', '--redirect-uri', 'https://media.lan.example/unused', '--forward-auth-host', 'media.lan.example', '--forward-auth-host', '*.media.lan.example'],
      env,
    );
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    for (const proxy of ['caddy', 'nginx', 'traefik']) {
      const shown = await runCli(['app', 'show', 'media', '--proxy', proxy, '--upstream', 'http://127.0.0.1:8096'], env);
      expect(shown.stderr).toBe('');
      expect(shown.code).toBe(0);
      printed[proxy] = shown.stdout;
    }
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
  });

  it('names the command, the issuer and the upstream the blocks are printed for', () => {
    const prose = PROTECT.replace(/\s+/g, ' ');
    expect(prose).toContain('`gatehouse app show media --proxy caddy --upstream http://127.0.0.1:8096`');
    expect(prose).toContain('Gatehouse at `https://id.lan.example` and an application `media` protecting `media.lan.example` and `*.media.lan.example`');
    const page = PAGE.replace(/\s+/g, ' ');
    expect(page).toContain("--forward-auth-host media.lan.example --forward-auth-host '*.media.lan.example'");
    expect(page).toContain('Gatehouse at `https://id.lan.example` and the application itself at `http://127.0.0.1:8096`');
  });

  it('each block is, without comments, what the command prints: Caddy\'s in the README, all three on the page', () => {
    const blocks = [
      ['README caddy', readmeBlock('caddyfile'), 'caddy', false],
      ['page caddy', pageBlock('Caddy'), 'caddy', false],
      ['page nginx', pageBlock('nginx'), 'nginx', false],
      ['page traefik', pageBlock('Traefik'), 'traefik', true],
    ] as const;
    for (const [where, block, proxy, keepIndentation] of blocks) {
      expect(withoutComments(block, keepIndentation), where).toEqual(withoutComments(printed[proxy]!, keepIndentation));
      // What the printed snippet says about itself, left out of the docs: it did have comments.
      expect(printed[proxy]!.split('\n')[0], proxy).toMatch(/^# Gatehouse forward auth for "Media" \(media\)/);
    }
    // Compact: no comment and no blank line in the README's copy.
    expect(withoutComments(readmeBlock('caddyfile'), true)).toEqual(readmeBlock('caddyfile').trimEnd().split('\n'));
  });

  it('the Caddy block passes caddy validate (Caddyfile adapter)', async () => {
    const file = join(dir, 'Caddyfile.readme');
    writeFileSync(file, readmeBlock('caddyfile'));
    const validated = await run('caddy', ['validate', '--config', file, '--adapter', 'caddyfile'], caddyEnv);
    expect(validated.output).toContain('Valid configuration');
    expect(validated.code).toBe(0);
  });

  it('the nginx block passes nginx -t inside an http block, with id.lan.example resolvable', async () => {
    const block = pageBlock('nginx');
    expect(block).toMatch(/ssl_certificate +\/etc\/ssl\/certs\/your-site\.pem;/);
    expect(block).toMatch(/ssl_certificate_key +\/etc\/ssl\/private\/your-site\.key;/);
    const conf = nginxConf(
      block.replace('/etc/ssl/certs/your-site.pem', join(dir, 'cert.pem')).replace('/etc/ssl/private/your-site.key', join(dir, 'key.pem')),
      'nginx-readme',
    );
    // nginx looks up proxy_pass hosts as it loads: id.lan.example gets 127.0.0.1 in a hosts file
    // bind-mounted over /etc/hosts in this command's own mount namespace (the machine's is untouched).
    const hosts = join(dir, 'hosts');
    writeFileSync(hosts, `${readFileSync('/etc/hosts', 'utf8')}\n127.0.0.1 id.lan.example\n`);
    const checked = await run('unshare', ['-m', '--propagation', 'private', 'sh', '-c', 'mount --bind "$0" /etc/hosts && exec nginx -t "$@"', hosts, ...nginxArgs(conf)]);
    expect(checked.output).toContain('syntax is ok');
    expect(checked.output).toContain('test is successful');
    expect(checked.code).toBe(0);
    expect(readFileSync('/etc/hosts', 'utf8')).not.toContain('id.lan.example');
  });

  it('the Traefik block parses as YAML into the printed middleware, routers and services', () => {
    const readme = parseYaml(pageBlock('Traefik')) as { http: Record<string, Record<string, Record<string, unknown>>> };
    expect(readme).toEqual(parseYaml(printed.traefik!));
    expect(readme.http.middlewares!['gatehouse-media']).toEqual({
      forwardAuth: { address: 'https://id.lan.example/api/auth/forward', authResponseHeadersRegex: '(?i)^remote[-_]' },
    });
    const hosts = 'Host(`media.lan.example`) || HostRegexp(`^[^.]+\\.media\\.lan\\.example$`)';
    expect(readme.http.routers).toEqual({
      media: { rule: hosts, middlewares: ['gatehouse-media'], service: 'media' },
      'media-gatehouse': { rule: `(${hosts}) && PathPrefix(\`/.gatehouse/\`)`, service: 'gatehouse-media' },
    });
    expect(Object.keys(readme.http.services!)).toEqual(['media', 'gatehouse-media']);
  });
});

interface Sample {
  at: number;
  status: number;
  /** Which instance answered (by its signing key), or undefined for an error. */
  who: string | undefined;
}

describe('docs/postgresql.md: rolling restarts behind each proxy', () => {
  const ports = { a: 0, b: 0, proxy: 0 };
  const servers: Record<'a' | 'b', ServerProcess | undefined> = { a: undefined, b: undefined };
  const kids = new Map<string, 'a' | 'b'>();
  let proxyUrl = '';

  const serve = async (name: 'a' | 'b', dataDir: string) => {
    servers[name] = await startServer(
      process.execPath,
      [CLI, 'serve'],
      cleanEnv({ HOST: '127.0.0.1', PORT: String(ports[name]), GATEHOUSE_DATA_DIR: dataDir, GATEHOUSE_ISSUER: proxyUrl, ADMIN_TOKEN: 'docs-proxies-admin-token' }),
    );
  };
  const jwksKid = async (url: string) => ((await (await fetch(`${url}/api/auth/jwks`)).json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid).join(',');
  const dataDirs = { a: tempDir('gatehouse-docs-a-'), b: tempDir('gatehouse-docs-b-') };

  beforeAll(async () => {
    ensureBuilt();
    [ports.a, ports.b, ports.proxy] = await Promise.all([freePort(), freePort(), freePort()]);
    proxyUrl = `http://127.0.0.1:${ports.proxy}`;
    await Promise.all([serve('a', dataDirs.a), serve('b', dataDirs.b)]);
    kids.set(await jwksKid(servers.a!.url), 'a');
    kids.set(await jwksKid(servers.b!.url), 'b');
  }, 120_000);

  afterAll(async () => {
    await Promise.all([servers.a?.stop(), servers.b?.stop()]);
    removeTempDirs();
  });

  async function sample(): Promise<Sample> {
    const at = Date.now();
    try {
      const answer = await fetch(`${proxyUrl}/api/auth/jwks`, { signal: AbortSignal.timeout(15_000) });
      if (answer.status !== 200) return { at, status: answer.status, who: undefined };
      return { at, status: 200, who: kids.get(((await answer.json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid).join(',')) };
    } catch {
      return { at, status: 0, who: undefined };
    }
  }

  /** A POST through the proxy that reaches an instance: 401 invalid_client from Gatehouse itself. */
  async function tokenPost(): Promise<[number, string]> {
    const answer = await fetch(`${proxyUrl}/api/auth/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `grant_type=client_credentials&client_id=probe-${Math.random().toString(36).slice(2)}&client_secret=x`,
    });
    const text = await answer.text();
    return [answer.status, answer.status === 401 ? (JSON.parse(text) as { error: string }).error : text.slice(0, 80)];
  }

  /** Samples every 100 ms in the background until stopped. */
  function sampler() {
    const samples: Sample[] = [];
    let running = true;
    const done = (async () => {
      while (running) {
        samples.push(await sample());
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    return { samples, stop: async () => ((running = false), await done) };
  }

  async function rollingRestart(startProxy: () => Promise<ChildProcess>) {
    const proxy = await startProxy();
    try {
      // Both instances serve through the proxy.
      const seen = new Set<string | undefined>();
      for (let i = 0; i < 100 && seen.size < 2; i++) {
        const s = await sample();
        if (s.status === 200) seen.add(s.who);
        else await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect([...seen].sort()).toEqual(['a', 'b']);

      const load = sampler();
      // 1. Stop a: nothing fails; b serves.
      await servers.a!.stop();
      const aStopped = Date.now();
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(await tokenPost()).toEqual([401, 'invalid_client']);
      // 2. Start a again; once its /readyz answers, it serves again within the documented wait.
      await serve('a', dataDirs.a);
      let ready = 0;
      while (!ready) {
        const answer = await fetch(`${servers.a!.url}/readyz`).catch(() => undefined);
        if (answer?.status === 200 && ((await answer.json()) as { status: string }).status === 'ready') ready = Date.now();
      }
      await new Promise((resolve) => setTimeout(resolve, DOCUMENTED_WAIT_MS));
      // 3. Stop b: nothing fails; a serves.
      await servers.b!.stop();
      const bStopped = Date.now();
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      expect(await tokenPost()).toEqual([401, 'invalid_client']);
      await load.stop();

      const failed = load.samples.filter((s) => s.status !== 200).map((s) => `${s.status} at +${s.at - aStopped} ms`);
      expect(failed).toEqual([]);
      const backAfter = load.samples.find((s) => s.at >= ready && s.who === 'a')!.at - ready;
      expect(backAfter).toBeLessThan(DOCUMENTED_WAIT_MS);
      expect(load.samples.filter((s) => s.at > aStopped && s.at < ready).every((s) => s.who === 'b')).toBe(true);
      expect(load.samples.filter((s) => s.at > bStopped).every((s) => s.who === 'a')).toBe(true);
      expect(load.samples.filter((s) => s.at > bStopped).length).toBeGreaterThan(5);
      return backAfter;
    } finally {
      await stopProcess(proxy);
      // b again, for the next proxy.
      await serve('b', dataDirs.b);
    }
  }

  it('nginx: a stopped instance costs no request, the restarted one is back within the wait', async () => {
    const conf = nginxConf(
      block('nginx')
        .replace('listen 443 ssl http2;', `listen 127.0.0.1:${ports.proxy};`)
        .replace('10.0.0.11:8787', `127.0.0.1:${ports.a}`)
        .replace('10.0.0.12:8787', `127.0.0.1:${ports.b}`),
      'nginx-run',
    );
    const backAfter = await rollingRestart(async () => {
      const child = spawn('nginx', [...nginxArgs(conf), '-g', 'daemon off;'], { stdio: 'ignore', detached: true });
      await untilListening();
      return child;
    });
    // fail_timeout=5s: tried again at most 5 s after its last failure (a request every 100 ms).
    expect(backAfter).toBeLessThanOrEqual(5_500);
  }, 120_000);

  it('Caddy: a stopped instance costs no request, the restarted one is back within the wait', async () => {
    const file = join(dir, 'Caddyfile.run');
    writeFileSync(
      file,
      '{\n\tadmin off\n\tauto_https off\n}\n' +
        block('caddyfile')
          .replace('id.example.com {', `http://127.0.0.1:${ports.proxy} {`)
          .replace('10.0.0.11:8787', `127.0.0.1:${ports.a}`)
          .replace('10.0.0.12:8787', `127.0.0.1:${ports.b}`),
    );
    const backAfter = await rollingRestart(async () => {
      const child = spawn('caddy', ['run', '--config', file, '--adapter', 'caddyfile'], { stdio: 'ignore', detached: true, env: caddyEnv });
      await untilListening();
      return child;
    });
    // The next active check (health_interval 2s) once the 2 s passive failures are forgotten.
    expect(backAfter).toBeLessThanOrEqual(4_500);
  }, 120_000);

  async function untilListening() {
    for (let i = 0; i < 100; i++) {
      if (await fetch(`${proxyUrl}/readyz`).then(() => true, () => false)) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error('the proxy did not start');
  }
});

async function stopProcess(child: ChildProcess) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  process.kill(-child.pid!, 'SIGTERM');
  const forced = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 10_000);
  await exited;
  clearTimeout(forced);
}
