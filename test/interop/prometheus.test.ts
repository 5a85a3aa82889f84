/**
 * Metrics against Debian's real Prometheus tools (spec presets-and-operations.md, "Metrics"):
 * - `promtool check metrics` lints the exposition of a server that has answered token requests;
 * - a Prometheus server, started here on loopback with its own configuration and storage in a
 *   temporary directory, scrapes Gatehouse with the bearer token from a file (the scrape
 *   configuration docs/monitoring.md shows), and its query API then reports `up == 1` and the
 *   token counter the early token path counted.
 * GATEHOUSE_METRICS_ALLOW=none: only the token opens /metrics, so the scrape proves it is sent.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, startOAuthServer, type OAuthServer } from '../helpers/oauth-server.js';
import { freePort } from '../helpers/free-port.js';

const METRICS_TOKEN = 'interop-metrics-token-0123456789';

let server: OAuthServer;
let dir: string;
let prometheus: ChildProcess | undefined;
let prometheusUrl: string;

/** A token request over real HTTP (form POST of the exact path: the answer before Fastify). */
async function clientCredentials(clientId: string, secret: string) {
  return fetch(`${server.url}/api/auth/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret }).toString(),
  });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-prometheus-'));
  server = await startOAuthServer({ GATEHOUSE_METRICS_TOKEN: METRICS_TOKEN, GATEHOUSE_METRICS_ALLOW: 'none' });
  const client = await createClient(server, {
    id: 'reports', name: 'Reports', audience: 'https://reports.example.com/api', clientType: 'web',
    redirectUris: ['https://reports.example.com/callback'], grantTypes: ['client_credentials'],
  });
  expect((await clientCredentials('reports', client.clientSecret!)).status).toBe(200);
  expect((await clientCredentials('reports', 'wrong')).status).toBe(401);
});

afterAll(async () => {
  if (prometheus?.pid && prometheus.exitCode === null) {
    const exited = new Promise((resolve) => prometheus!.once('exit', resolve));
    process.kill(prometheus.pid, 'SIGTERM');
    await exited;
  }
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function scrape(): Promise<string> {
  const res = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  expect(res.status).toBe(200);
  return res.text();
}

describe('Prometheus tools', () => {
  it('promtool check metrics finds nothing to complain about', async () => {
    const text = await scrape();
    // The counters the early token path counted, and its requests timed under the route's path.
    expect(text).toContain('gatehouse_tokens_issued_total{grant_type="client_credentials"} 1\n');
    expect(text).toContain('gatehouse_token_errors_total{error="invalid_client"} 1\n');
    expect(text).toContain('gatehouse_http_request_duration_seconds_count{route="/api/auth/oauth2/token",status_class="2xx"} 1\n');
    expect(text).toContain('gatehouse_http_request_duration_seconds_count{route="/api/auth/oauth2/token",status_class="4xx"} 1\n');
    const check = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect({ status: check.status, stdout: check.stdout, stderr: check.stderr }).toEqual({ status: 0, stdout: '', stderr: '' });
  });

  it('a real Prometheus scrapes it with the bearer token: up == 1 and the token counter', async () => {
    const port = await freePort();
    prometheusUrl = `http://127.0.0.1:${port}`;
    const target = new URL(server.url).host;
    writeFileSync(join(dir, 'metrics-token'), `${METRICS_TOKEN}\n`, { mode: 0o600 });
    writeFileSync(
      join(dir, 'prometheus.yml'),
      [
        'global:',
        '  scrape_interval: 1s',
        'scrape_configs:',
        '  - job_name: gatehouse',
        '    scrape_interval: 1s',
        '    authorization:',
        `      credentials_file: ${join(dir, 'metrics-token')}`,
        '    static_configs:',
        `      - targets: ['${target}']`,
        '',
      ].join('\n'),
    );
    prometheus = spawn(
      'prometheus',
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--log.level=warn',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    prometheus.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));

    const query = async (expr: string) => {
      const res = await fetch(`${prometheusUrl}/api/v1/query?${new URLSearchParams({ query: expr })}`);
      const body = (await res.json()) as { status: string; data: { result: { metric: Record<string, string>; value: [number, string] }[] } };
      return body.data.result;
    };
    const deadline = Date.now() + 60_000;
    let up: Awaited<ReturnType<typeof query>> = [];
    let issued: Awaited<ReturnType<typeof query>> = [];
    while (Date.now() < deadline) {
      if (prometheus.exitCode !== null) throw new Error(`prometheus exited: ${stderr}`);
      try {
        up = await query('up{job="gatehouse"}');
        issued = await query('gatehouse_tokens_issued_total{job="gatehouse"}');
        if (up[0]?.value[1] === '1' && issued.length) break;
      } catch {
        // Not listening yet.
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(up.map((r) => [r.metric.instance, r.value[1]])).toEqual([[target, '1']]);
    expect(issued.map((r) => [r.metric.grant_type, r.value[1]])).toEqual([['client_credentials', '1']]);
    const targets = (await (await fetch(`${prometheusUrl}/api/v1/targets`)).json()) as { data: { activeTargets: { health: string; lastError: string }[] } };
    expect(targets.data.activeTargets.map((t) => [t.health, t.lastError])).toEqual([['up', '']]);
  });
});
