/**
 * The bundle's lazily loaded packages (scripts/bundle/lazy-packages.mjs, issue 45, decision 0360): an
 * import of one is a stand-in, the package's own file is required on the first use and not
 * before, and what the server uses of each works through it — classes constructed, static
 * methods called, `instanceof` against the real class. A dependency's require of one at its own
 * load (@fastify/static's `const { glob } = require('glob')`, Fastify's light-my-request,
 * prom-client's @opentelemetry/api, @fastify/ajv-compiler's ajv/dist/jtd, @fastify/rate-limit's
 * ip-address, pino's thread-stream) loads nothing: a
 * function export read before the load is a wrapper that loads the package when called or
 * constructed (decision 0368), and a package that is a class (ajv/dist/jtd) is constructed
 * through its stand-in (decision 0475). Built with the bundle's own plugin and banner into a
 * temporary directory, the lazy files under chunks/ as in dist/, and run in a child.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { build } from 'esbuild';
// @ts-expect-error: a plain .mjs script without types
import { BANNER, LAZY_MODULES, LAZY_PACKAGES, bundleLazyPackages, lazyModules, lazyPackages } from '../../scripts/bundle/lazy-packages.mjs';
import { PRESETS as SOURCE_PRESETS } from '../../server/presets/catalogue/index.js';

const LAZY_FILES = [
  'lazy-ajv-dist-jtd.cjs', 'lazy-glob.cjs', 'lazy-ip-address.cjs', 'lazy-ldapts.cjs', 'lazy-light-my-request.cjs', 'lazy-opentelemetry-api.cjs', 'lazy-presets-catalogue.cjs', 'lazy-saxes.cjs',
  'lazy-thread-stream.cjs', 'lazy-ua-parser-js.cjs', 'lazy-uqr.cjs', 'lazy-xml-crypto.cjs', 'lazy-xmldom-xmldom.cjs',
];
const dir = mkdtempSync(join(tmpdir(), 'gatehouse-lazy-packages-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// What the dependencies do at their own load: destructure or keep the package (CommonJS).
const DEPENDENCY = `
const { glob, Glob } = require('glob');
const lightMyRequest = require('light-my-request');
const OtelApi = require('@opentelemetry/api');
const AjvJTD = require('ajv/dist/jtd');
const { Address6 } = require('ip-address');
const ThreadStream = require('thread-stream');
module.exports = { glob, Glob, lightMyRequest, OtelApi, AjvJTD, Address6, ThreadStream };
`;

const ENTRY = `
import dependency from './dependency.cjs';
import { DOMParser } from '@xmldom/xmldom';
import { ExclusiveCanonicalization, SignedXml } from 'xml-crypto';
import { Client, FilterParser, InvalidCredentialsError } from 'ldapts';
import { SaxesParser } from 'saxes';
import { renderSVG } from 'uqr';
import UAParser from 'ua-parser-js';
import { PRESETS, findPreset } from '${join(process.cwd(), 'server/presets/catalogue/index.ts')}';
const loaded = () => Object.keys(require.cache).filter((f) => /lazy-/.test(f)).map((f) => f.split('/').pop()).sort();
const before = loaded();
const { glob, Glob, lightMyRequest, OtelApi, AjvJTD, Address6, ThreadStream } = dependency;
const kinds = [typeof glob, typeof Glob, typeof lightMyRequest, typeof OtelApi, typeof AjvJTD, Object.keys(AjvJTD).includes('KeywordCxt'), typeof Address6, typeof ThreadStream];
const beforeUse = loaded();
// As @fastify/rate-limit normalises an IPv6 client's address, and pino names its transport's stream.
const mapped = new Address6('::ffff:127.0.0.1');
const addresses = [mapped.isMapped4(), mapped.to4().correctForm(), new Address6('2001:db8::1/64').startAddress().correctForm(), mapped instanceof Address6];
const threadStream = ThreadStream.name;
const globbed = (await glob('lazy-*.cjs', { cwd: ${JSON.stringify(join(dir, 'chunks'))} })).sort();
const walker = new Glob('lazy-uqr.cjs', { cwd: ${JSON.stringify(join(dir, 'chunks'))} });
const globs = [globbed, walker instanceof Glob, walker.walkSync(), typeof glob.sync];
const afterGlob = loaded();
const injected = await lightMyRequest((req, res) => res.end('hi ' + req.url), { url: '/x' });
const span = OtelApi.trace.getSpan(OtelApi.context.active()) ?? null;
const jtd = new AjvJTD();
const validateJtd = jtd.compile({ properties: { n: { type: 'int32' } } });
const jtdAnswers = [jtd instanceof AjvJTD, validateJtd({ n: 1 }), validateJtd({ n: 'x' })];
const doc = new DOMParser().parseFromString('<a xmlns="urn:x"><b>1</b></a>', 'text/xml');
const c14n = new ExclusiveCanonicalization().process(doc.documentElement, {}).toString();
const signer = typeof SignedXml;
const filter = FilterParser.parseString('(&(uid=ann)(objectClass=person))').toString();
const refused = new InvalidCredentialsError('no') instanceof InvalidCredentialsError;
const client = new Client({ url: 'ldap://127.0.0.1:1' }).isConnected;
let names = 0;
const saxes = new SaxesParser();
saxes.on('opentag', () => names++);
saxes.write('<svg><g/></svg>').close();
const qr = renderSVG('otpauth://totp/x', { ecc: 'M' }).startsWith('<svg');
// As the sessions lists name a device (accounts/session.ts): constructed through the stand-in.
const parser = new UAParser('Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0');
const device = [parser.getBrowser().name, parser.getBrowser().major, parser.getOS().name, parser instanceof UAParser];
const presets = [PRESETS.map((p) => p.id), findPreset('grafana')?.name, typeof findPreset('grafana')?.application];
console.log(JSON.stringify({ before, kinds, beforeUse, addresses, threadStream, globs, afterGlob, injected: [injected.statusCode, injected.payload], span, jtdAnswers, after: loaded(), c14n, signer, filter, refused, client, names, qr, device, presets }));
`;

describe('lazily loaded packages in the bundle', () => {
  it('loads each package on its first use, and each works through the stand-in', async () => {
    writeFileSync(join(dir, 'entry.ts'), ENTRY);
    writeFileSync(join(dir, 'dependency.cjs'), DEPENDENCY);
    await build({
      entryPoints: [join(dir, 'entry.ts')], outfile: join(dir, 'entry.mjs'), absWorkingDir: process.cwd(), nodePaths: [join(process.cwd(), 'node_modules')],
      bundle: true, format: 'esm', platform: 'node', target: 'node20', banner: { js: BANNER }, plugins: [lazyPackages, lazyModules], logLevel: 'silent',
    });
    mkdirSync(join(dir, 'chunks'));
    for (const file of await bundleLazyPackages(join(dir, 'chunks'))) writeFileSync(file.path, file.contents);
    const out = JSON.parse(execFileSync(process.execPath, [join(dir, 'entry.mjs')], { encoding: 'utf8' }));
    expect(LAZY_PACKAGES).toEqual(['xml-crypto', '@xmldom/xmldom', 'ldapts', 'saxes', 'uqr', 'glob', 'light-my-request', '@opentelemetry/api', 'ajv/dist/jtd', 'ip-address', 'thread-stream', 'ua-parser-js']);
    expect(LAZY_MODULES.map((m: { name: string }) => m.name)).toEqual(['presets-catalogue']);
    expect(out).toEqual({
      before: [],
      kinds: ['function', 'function', 'function', 'object', 'function', true, 'function', 'function'],
      beforeUse: [],
      addresses: [true, '127.0.0.1', '2001:db8::', true],
      threadStream: 'ThreadStream',
      globs: [LAZY_FILES, true, ['lazy-uqr.cjs'], 'function'],
      afterGlob: ['lazy-glob.cjs', 'lazy-ip-address.cjs', 'lazy-thread-stream.cjs'],
      injected: [200, 'hi /x'],
      span: null,
      jtdAnswers: [true, true, false],
      after: LAZY_FILES,
      c14n: '<a xmlns="urn:x"><b>1</b></a>',
      signer: 'function',
      filter: '(&(uid=ann)(objectClass=person))',
      refused: true,
      client: false,
      names: 2,
      qr: true,
      device: ['Firefox', '128', 'Linux', true],
      presets: [SOURCE_PRESETS.map((p) => p.id), 'Grafana', 'function'],
    });
  });
});
