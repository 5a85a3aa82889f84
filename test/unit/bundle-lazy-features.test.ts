/**
 * The bundle's lazily loaded features (scripts/bundle/lazy-features.mjs `LAZY_FEATURES`, issue 45,
 * decision 0369): each feature's own code is in dist/chunks/lazy-<name>.mjs and in no chunk the
 * bundle reaches by a literal import (what a start can load), the lazy file imports nothing of the
 * main bundle (what it shares comes through its host), and a start with the features off loads
 * none of the lazy files (the first SAML request then loads SAML's and is answered; a directory
 * source's test, sync run and deletion the sync engine's, against a port nobody listens on; the
 * configuration's export configuration as code's), while a start with LDAP and RADIUS on loads
 * their listeners' and listens (ACME's is checked in dist/ only: panel-tls and acme-pebble run it). Node's
 * module resolve hook records which lazy files a server loads.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script without types
import { LAZY_FEATURES } from '../../scripts/bundle/lazy-features.mjs';
import { CLI, ROOT, cleanEnv, ensureBuilt, removeTempDirs, startServer, tempDir } from '../helpers/server-process.js';

/** A string only each feature's own code has (a log message, a refusal). */
const MARKERS: Record<string, string> = {
  'radius-listener': 'RADIUS listening',
  'ldap-listener': 'LDAP directory listening',
  'saml-protocol': 'the SP requires signed requests and this one is not signed',
  'directory-engine': 'Another instance is running this source now.',
  acme: 'ACME certificate obtained and served',
  'config-as-code': 'is not any of the allowed shapes',
};
const TOKEN = 'lazy-features-admin-token-0123456789';
const features = (LAZY_FEATURES as { name: string }[]).map((f) => f.name);
const lazyFile = (name: string) => `lazy-${name}.mjs`;

beforeAll(() => ensureBuilt());
afterAll(() => removeTempDirs());

/** The files the bundle reaches from dist/gatehouse.mjs through literal imports, static or dynamic. */
function reachable(): Map<string, string> {
  const files = new Map<string, string>();
  const queue = [join(ROOT, 'dist/gatehouse.mjs')];
  while (queue.length) {
    const file = queue.pop()!;
    if (files.has(file)) continue;
    const text = readFileSync(file, 'utf8');
    files.set(file, text);
    for (const [, path] of text.matchAll(/(?:from\s*|import\s*\(\s*)"(\.\.?\/[^"]+\.mjs)"/g)) queue.push(join(file, '..', path!));
  }
  return files;
}

describe('lazily loaded features in the bundle', () => {
  it('keeps each feature in its own file, which imports nothing of the main bundle', () => {
    expect(features).toEqual(Object.keys(MARKERS));
    const files = reachable();
    expect(files.size).toBeGreaterThan(10);
    for (const name of features) {
      const own = readFileSync(join(ROOT, 'dist/chunks', lazyFile(name)), 'utf8');
      expect(own).toContain(MARKERS[name]);
      expect(own).not.toMatch(/from\s*"\.\.?\//);
      expect(own).not.toContain('gatehouse-shared:');
      expect([...files].filter(([, text]) => text.includes(MARKERS[name]!)).map(([file]) => file)).toEqual([]);
      expect([...files.values()].some((text) => text.includes(JSON.stringify(lazyFile(name))))).toBe(true);
    }
  });

  it('loads no lazy file at a default start, then each on first use, and the listeners with LDAP and RADIUS on', async () => {
    const dir = tempDir('gatehouse-lazy-features-');
    const hooks = join(dir, 'hooks.mjs');
    const register = join(dir, 'register.mjs');
    writeFileSync(hooks, `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  const file = resolved.url.split('/').pop();
  if (/^lazy-.*\\.mjs$/.test(file)) appendFileSync(process.env.LAZY_LOG, file + '\\n');
  return resolved;
}`);
    writeFileSync(register, `import { register } from 'node:module'; register(${JSON.stringify(pathToFileURL(hooks).href)});`);
    const start = (name: string, env: Record<string, string>) =>
      startServer(process.execPath, ['--import', register, CLI, 'serve', '--data-dir', join(dir, name), '--port', '0'], cleanEnv({ ADMIN_TOKEN: TOKEN, LAZY_LOG: join(dir, `${name}.log`), ...env }));
    const loaded = (name: string) => {
      try {
        return readFileSync(join(dir, `${name}.log`), 'utf8').split('\n').filter(Boolean);
      } catch {
        return [];
      }
    };
    const [off, on] = await Promise.all([
      start('off', {}),
      start('on', { GATEHOUSE_LDAP: 'on', GATEHOUSE_LDAP_HOST: '127.0.0.1', GATEHOUSE_LDAP_PORT: '0', GATEHOUSE_RADIUS: 'on', GATEHOUSE_RADIUS_HOST: '127.0.0.1', GATEHOUSE_RADIUS_PORT: '0', GATEHOUSE_RADIUS_ACCT_PORT: '0' }),
    ]);
    try {
      expect(loaded('off')).toEqual([]);
      expect(loaded('on')).toEqual([lazyFile('ldap-listener'), lazyFile('radius-listener')]);
      expect(on.output().stdout).toMatch(/^Gatehouse listening on .*, LDAP ldap:\/\/127\.0\.0\.1:\d+ \(base [^)]+\), RADIUS udp 127\.0\.0\.1:\d+ \(accounting 127\.0\.0\.1:\d+\)$/m);
      expect(off.output().stdout).toMatch(/^Gatehouse listening on /m);
      expect(off.output().stdout).not.toMatch(/RADIUS|LDAP/);
      const metadata = await fetch(`${off.url}/saml/metadata`);
      expect(metadata.status).toBe(200);
      expect(metadata.headers.get('content-type')).toBe('application/samlmetadata+xml');
      expect(await metadata.text()).toContain(`entityID="${off.url}/saml"`);
      expect(loaded('off')).toEqual([lazyFile('saml-protocol')]);

      const admin = (method: string, path: string, body?: unknown) =>
        fetch(`${off.url}/api/admin${path}`, {
          method,
          headers: { authorization: `Bearer ${TOKEN}`, ...(body ? { 'content-type': 'application/json' } : {}) },
          body: body ? JSON.stringify(body) : undefined,
        });
      const created = await admin('POST', '/directory-sources', { name: 'Nobody', kind: 'ldap', url: 'ldap://127.0.0.1:1', peopleBase: 'ou=people,dc=example,dc=org' });
      expect(created.status).toBe(201);
      const { id } = (await created.json()) as { id: string };
      expect(loaded('off')).toEqual([lazyFile('saml-protocol')]);
      const tested = await admin('POST', `/directory-sources/${id}/test`, {});
      expect(tested.status).toBe(200);
      const test = (await tested.json()) as { ok: boolean; steps: { step: string; ok: boolean }[] };
      expect([test.ok, test.steps.map((s) => [s.step, s.ok])]).toEqual([false, [['connect', false]]]);
      const synced = await admin('POST', `/directory-sources/${id}/sync`, {});
      expect(synced.status).toBe(202);
      const { run } = (await synced.json()) as { run: { id: string; state: string } };
      let state = run.state;
      for (let i = 0; i < 100 && state === 'running'; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        state = ((await (await admin('GET', `/directory-sources/${id}/runs/${run.id}`)).json()) as { state: string }).state;
      }
      expect(state).toBe('failed');
      expect((await admin('DELETE', `/directory-sources/${id}`)).status).toBe(204);
      expect(loaded('off')).toEqual([lazyFile('saml-protocol'), lazyFile('directory-engine')]);

      const config = await admin('GET', '/config');
      expect(config.status).toBe(200);
      expect(config.headers.get('content-type')).toBe('application/yaml; charset=utf-8');
      expect(await config.text()).toMatch(/^version: 1$/m);
      expect(loaded('off')).toEqual([lazyFile('saml-protocol'), lazyFile('directory-engine'), lazyFile('config-as-code')]);
    } finally {
      await Promise.all([off.stop(), on.stop()]);
    }
  });
});
