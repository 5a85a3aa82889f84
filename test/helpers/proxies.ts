/**
 * Real reverse proxies for the forward-auth interoperability tests (test/interop/forward-auth-*):
 * Debian's Caddy and nginx, each started by the test with its own configuration file in a
 * temporary directory, on 127.0.0.1 and a free port, in front of a small backend that echoes
 * what it receives; stopped by the pid the test started. Never the system service.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocketServer } from 'ws';

export interface Echo {
  url: string;
  close(): Promise<void>;
}

/**
 * A backend that answers every request with JSON: its method, URL and headers. A WebSocket
 * (an HTTP/1.1 Upgrade, as Home Assistant's and Uptime Kuma's pages open) gets the same JSON as
 * its first message, then each message back (ws, RFC 6455).
 */
export async function startEcho(): Promise<Echo> {
  const server: Server = createServer((req, res) => {
    const body = JSON.stringify({ method: req.method, url: req.url, headers: req.headers });
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
  const sockets = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, socket, head) => {
    sockets.handleUpgrade(req, socket, head, (ws) => {
      ws.send(JSON.stringify({ method: req.method, url: req.url, headers: req.headers }));
      ws.on('message', (data, binary) => ws.send(data, { binary }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      for (const ws of sockets.clients) ws.terminate();
      sockets.close();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

export interface Proxy {
  name: 'caddy' | 'nginx';
  /** The configuration file it runs, as written. */
  config: string;
  log(): string;
  stop(): Promise<void>;
}

interface Started {
  child: ChildProcess;
  dir: string;
  output: string[];
}

function run(command: string, args: string[], dir: string, env: NodeJS.ProcessEnv = {}): Started {
  const output: string[] = [];
  const child = spawn(command, args, { cwd: dir, env: { PATH: process.env.PATH, HOME: dir, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  return { child, dir, output };
}

/** Resolves once `127.0.0.1:port` answers HTTP (any status), or rejects with the proxy's output. */
async function answering(port: number, started: Started, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (started.child.exitCode !== null) throw new Error(`exited ${started.child.exitCode}:\n${started.output.join('')}`);
    const ok = await new Promise<boolean>((resolve) => {
      const req = httpRequest({ host: '127.0.0.1', port, path: '/', method: 'HEAD', headers: { host: 'probe.invalid' } }, (res) => {
        res.resume();
        resolve(true);
      });
      req.on('error', () => resolve(false));
      req.end();
    });
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`not answering on ${port}:\n${started.output.join('')}`);
}

async function stop(started: Started): Promise<void> {
  const { child } = started;
  if (child.pid && child.exitCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    process.kill(child.pid, 'SIGTERM');
    await exited;
  }
  rmSync(started.dir, { recursive: true, force: true });
}

/**
 * Caddy (`caddy run`) with `site` (a Caddyfile site block: the snippet) after global options that
 * keep it to this test: no admin endpoint, no automatic HTTPS, bound to 127.0.0.1, its state in
 * the temporary directory.
 */
export async function startCaddy(site: string, port: number): Promise<Proxy> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-caddy-'));
  const config = ['{', '\tadmin off', '\tauto_https off', '\tdefault_bind 127.0.0.1', `\tstorage file_system ${join(dir, 'data')}`, '}', '', site].join('\n');
  writeFileSync(join(dir, 'Caddyfile'), config);
  const started = run('caddy', ['run', '--config', join(dir, 'Caddyfile'), '--adapter', 'caddyfile'], dir, {
    XDG_CONFIG_HOME: join(dir, 'config'), XDG_DATA_HOME: join(dir, 'data'),
  });
  await answering(port, started);
  return { name: 'caddy', config, log: () => started.output.join(''), stop: () => stop(started) };
}

/**
 * nginx in the foreground (`daemon off`, one process) with `servers` (the snippet) inside an
 * `http` block whose logs, pid file and temporary paths are in the temporary directory, after
 * `http` (directives of the administrator's own http block, e.g. `underscores_in_headers on;`).
 */
export async function startNginx(servers: string, port: number, http: string[] = []): Promise<Proxy> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-nginx-'));
  for (const sub of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(dir, sub));
  const config = [
    'daemon off;',
    'master_process off;',
    `pid ${join(dir, 'nginx.pid')};`,
    `error_log ${join(dir, 'error.log')} warn;`,
    'events { worker_connections 256; }',
    'http {',
    `    access_log ${join(dir, 'access.log')};`,
    ...['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((sub) => `    ${sub === 'body' ? 'client_body' : sub}_temp_path ${join(dir, sub)};`),
    ...http.map((line) => `    ${line}`),
    servers,
    '}',
    '',
  ].join('\n');
  writeFileSync(join(dir, 'nginx.conf'), config);
  const started = run('nginx', ['-p', dir, '-e', join(dir, 'error.log'), '-c', join(dir, 'nginx.conf')], dir);
  await answering(port, started);
  return {
    name: 'nginx', config,
    log: () => `${started.output.join('')}${readFileSync(join(dir, 'error.log'), 'utf8')}`,
    stop: () => stop(started),
  };
}

export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * One HTTP request to 127.0.0.1:`port` naming `host` (a *.localhost name resolves to loopback in
 * the browser, not necessarily in this process), from `localAddress` when given.
 */
export function get(port: number, host: string, path: string, headers: Record<string, string> = {}, localAddress?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method: 'GET', headers: { host, ...headers }, ...(localAddress ? { localAddress } : {}) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end();
  });
}
