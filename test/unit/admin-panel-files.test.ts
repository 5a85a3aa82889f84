/**
 * The control panel's files (server/admin-panel/plugin.ts): served from the files listed at
 * start under the panel's root (GATEHOUSE_RENDERER_DIR, a temporary build here), with
 * @fastify/static's `sendFile` and no route of its own (issue 45, decision 0368). Exact wire
 * answers: content types, cache-control (fingerprinted assets for a year, the rest no-cache),
 * HEAD, 404 for an unknown asset, the page for client-side routes, nothing outside the root.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, type TestApp } from '../helpers/app.js';
import { PANEL_CSP } from '../../server/admin-panel/plugin.js';

const root = mkdtempSync(join(tmpdir(), 'gatehouse-panel-'));
const INDEX = '<!doctype html><title>panel</title><script type="module" src="/admin/assets/index-Ab1.js"></script>';
const SCRIPT = 'console.log("panel");';
const STYLE = 'body{margin:0}';
let t: TestApp;
const before = process.env.GATEHOUSE_RENDERER_DIR;

beforeAll(async () => {
  mkdirSync(join(root, 'assets'));
  mkdirSync(join(root, 'icons', 'small'), { recursive: true });
  writeFileSync(join(root, 'index.html'), INDEX);
  writeFileSync(join(root, 'assets', 'index-Ab1.js'), SCRIPT);
  writeFileSync(join(root, 'assets', 'index-Cd2.css'), STYLE);
  writeFileSync(join(root, 'icons', 'small', 'mark.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  writeFileSync(join(root, '.env'), 'SECRET=1');
  // The panel's root is read when the app is built.
  process.env.GATEHOUSE_RENDERER_DIR = root;
  try {
    t = await makeApp({ perFile: true });
  } finally {
    if (before === undefined) delete process.env.GATEHOUSE_RENDERER_DIR;
    else process.env.GATEHOUSE_RENDERER_DIR = before;
  }
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const get = (url: string, method: 'GET' | 'HEAD' = 'GET') => t.app.inject({ method, url });
const IMMUTABLE = 'public, max-age=31536000, immutable';

describe("the control panel's files", () => {
  it('serves each built file with its content type, assets cached for a year and the rest no-cache', async () => {
    const cases = [
      ['/admin/', 'text/html; charset=utf-8', 'no-cache', INDEX],
      ['/admin/index.html', 'text/html; charset=utf-8', 'no-cache', INDEX],
      ['/admin/assets/index-Ab1.js', 'application/javascript; charset=utf-8', IMMUTABLE, SCRIPT],
      ['/admin/assets/index-Cd2.css?v=2', 'text/css; charset=utf-8', IMMUTABLE, STYLE],
      ['/admin/icons/small/mark.svg', 'image/svg+xml', 'no-cache', '<svg xmlns="http://www.w3.org/2000/svg"/>'],
    ];
    for (const [url, type, cache, body] of cases) {
      const res = await get(url!);
      expect([url, res.statusCode, res.headers['content-type'], res.headers['cache-control'], res.headers['content-security-policy'], res.body]).toEqual([
        url, 200, type, cache, PANEL_CSP, body,
      ]);
    }
  });

  it('answers HEAD with the headers and no body', async () => {
    for (const [url, length, cache] of [['/admin/assets/index-Ab1.js', SCRIPT.length, IMMUTABLE], ['/admin/', INDEX.length, 'no-cache']] as const) {
      const res = await get(url, 'HEAD');
      expect([res.statusCode, res.headers['content-length'], res.headers['cache-control'], res.body]).toEqual([200, String(length), cache, '']);
    }
  });

  it('answers 404 for an unknown asset, and the page for any other path (client-side routes)', async () => {
    for (const url of ['/admin/assets/nope.js', '/admin/assets/index-Ab1.js.map', '/admin/assets/', '/admin/assets/..%2f..%2f..%2fpackage.json']) {
      const res = await get(url);
      expect([url, res.statusCode, res.headers['cache-control']]).toEqual([url, 404, undefined]);
    }
    for (const url of ['/admin/applications/notes/members', '/admin/assets', '/admin/icons/small']) {
      const res = await get(url);
      expect([url, res.statusCode, res.headers['cache-control'], res.body]).toEqual([url, 200, 'no-cache', INDEX]);
    }
  });

  it('sends nothing outside the root, nor a dot-file under it', async () => {
    for (const url of ['/admin/..%2f..%2fpackage.json', '/admin/..%2fpackage.json', '/admin/.env', '/admin/%2eenv']) {
      const res = await get(url);
      expect([url, res.statusCode, res.body]).toEqual([url, 200, INDEX]);
    }
    const bare = await get('/admin');
    expect([bare.statusCode, bare.headers.location]).toEqual([301, '/admin/']);
  });
});
