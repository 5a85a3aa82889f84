/**
 * Packaging that can be built where an Electron binary exists (not here): electron-builder.yml is
 * read and validated by electron-builder's own code (its schema and package.json checks), sets the
 * targets and fuses the desktop app ships with, packs every file the packaged app loads, and
 * unpacks every native module from the asar; the release workflow has one job per OS that
 * rebuilds native modules for Electron and uploads the installers.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ensureBuilt, ROOT } from '../helpers/server-process.js';

const root = ROOT.replace(/\/$/, '');
// electron-builder's own configuration reader and validator (app-builder-lib, its library), from
// desktop/node_modules: the desktop build tools are kept out of the server's `npm install`
// (decision 0351) and installed by scripts/desktop-tools.mjs, which `npm test` runs first.
const require = createRequire(join(root, 'desktop/package.json'));
try {
  require.resolve('app-builder-lib/package.json');
} catch {
  throw new Error('The desktop build tools are not installed: run `npm run desktop:tools` (npm test does it first).');
}
const { getConfig, validateConfiguration } = require('app-builder-lib/out/util/config/config.js') as {
  getConfig(projectDir: string, configPath: string, fromOptions: null): Promise<Record<string, any>>;
  validateConfiguration(config: Record<string, unknown>, logger: unknown): Promise<void>;
};
const { checkMetadata } = require('app-builder-lib/out/util/packageMetadata.js') as {
  checkMetadata(metadata: unknown, devMetadata: unknown, appPackageFile: string, devPackageFile: string): void;
};
const { DebugLogger } = require('builder-util') as { DebugLogger: new (enabled: boolean) => unknown };

const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Record<string, any>;
let config: Record<string, any>;

beforeAll(async () => {
  ensureBuilt();
  config = await getConfig(root, join(root, 'electron-builder.yml'), null);
}, 300_000);

describe('electron-builder.yml', () => {
  it('is accepted by electron-builder, and so is package.json (deb needs homepage and an author e-mail)', async () => {
    await expect(validateConfiguration(config, new DebugLogger(false))).resolves.toBeUndefined();
    expect(() => checkMetadata(pkg, pkg, 'package.json', 'package.json')).not.toThrow();
    expect(pkg.description).toMatch(/^Self-hosted identity service/);
    expect(pkg.homepage).toMatch(/^https:\/\//);
    expect(pkg.author).toEqual({ name: 'Gatehouse contributors', email: expect.stringMatching(/^[^@\s]+@[^@\s]+$/) });
    // The app's name, so userData (data directory and admin token) is the same folder packaged and in development.
    expect(pkg.productName).toBe('Gatehouse');
    expect(config.productName).toBe('Gatehouse');
    // A wrong key is refused, so the check above means something.
    await expect(validateConfiguration({ ...config, electronFuses: { runAsNode: false, runAsNod: false } }, new DebugLogger(false))).rejects.toThrow(
      /does not match the API schema/,
    );
  });

  it('builds deb and AppImage on Linux, NSIS on Windows, dmg on macOS', () => {
    expect(config.linux.target).toEqual(['AppImage', 'deb']);
    expect(config.win.target).toEqual(['nsis']);
    expect(config.mac.target).toEqual(['dmg']);
  });

  it('sets the fuses: no ELECTRON_RUN_AS_NODE, no NODE_OPTIONS, no --inspect, encrypted cookies, app only from the asar', () => {
    expect(config.electronFuses).toEqual({
      runAsNode: false,
      enableNodeOptionsEnvironmentVariable: false,
      enableNodeCliInspectArguments: false,
      enableCookieEncryption: true,
      onlyLoadAppFromAsar: true,
      enableEmbeddedAsarIntegrityValidation: true,
      grantFileProtocolExtraPrivileges: false,
    });
    expect(config.asar).toBe(true);
  });

  it('packs what the packaged app loads, and unpacks every native module of the server', () => {
    // electron-builder normalises `files` to file sets ({filter: [...]}).
    const patterns = (config.files as (string | { filter: string[] })[]).flatMap((f) => (typeof f === 'string' ? [f] : f.filter));
    const included = patterns.filter((f) => !f.startsWith('!'));
    const packs = (path: string) =>
      included.some((pattern) => (pattern.endsWith('/**') ? path.startsWith(pattern.slice(0, -2)) : path === pattern));
    for (const path of [
      'package.json',
      pkg.main, // dist/electron/main.js
      'dist/electron/preload.cjs',
      'dist/electron/server-process.js',
      'dist/server/cli/launch.js',
      'dist/gatehouse.mjs',
      'renderer/dist/index.html',
      'server/db/migrations/meta/_journal.json',
    ]) {
      expect(existsSync(join(root, path)), path).toBe(true);
      expect(packs(path), path).toBe(true);
    }
    expect(readdirSync(join(root, 'dist/chunks')).length).toBeGreaterThan(0);
    expect(packs('dist/chunks/x.mjs')).toBe(true);

    // Every .node binary the server loads (better-sqlite3, @node-rs/argon2's platform package,
    // native/idle-memory) sits under an asarUnpack pattern: native modules cannot load from the asar.
    const natives: string[] = [];
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (entry.name.endsWith('.node') && !path.includes('/test/')) natives.push(relative(root, path));
      }
    };
    for (const dir of ['better-sqlite3/build/Release', '@node-rs', '@gatehouse/idle-memory/build/Release']) {
      if (existsSync(join(root, 'node_modules', dir))) walk(join(root, 'node_modules', dir));
    }
    expect(natives).toEqual(expect.arrayContaining(['node_modules/better-sqlite3/build/Release/better_sqlite3.node']));
    expect(natives.some((n) => n.startsWith('node_modules/@node-rs/argon2-'))).toBe(true);
    const unpacked = (path: string) => (config.asarUnpack as string[]).some((pattern) => path.startsWith(pattern.replace(/\*\*$/, '')));
    expect(natives.filter((n) => !unpacked(n))).toEqual([]);
    expect(config.npmRebuild).toBe(true);
  });
});

describe('.github/workflows/release.yml', () => {
  const workflow = parse(readFileSync(join(root, '.github/workflows/release.yml'), 'utf8')) as {
    on: Record<string, unknown>;
    jobs: Record<string, { 'runs-on': string; steps: { uses?: string; run?: string; with?: Record<string, string> }[] }>;
  };

  it('has one job per OS that installs, builds, rebuilds native modules for Electron, packages and uploads', () => {
    expect(Object.keys(workflow.on).sort()).toEqual(['push', 'workflow_dispatch']);
    const expected = {
      linux: { os: /^ubuntu-/, flags: '--linux deb AppImage', files: ['release/*.deb', 'release/*.AppImage'] },
      windows: { os: /^windows-/, flags: '--win nsis', files: ['release/*.exe'] },
      macos: { os: /^macos-/, flags: '--mac dmg', files: ['release/*.dmg'] },
    };
    expect(Object.keys(workflow.jobs).sort()).toEqual(Object.keys(expected).sort());
    for (const [name, want] of Object.entries(expected)) {
      const job = workflow.jobs[name]!;
      expect(job['runs-on'], name).toMatch(want.os);
      const runs = job.steps.map((s) => s.run ?? s.uses);
      const index = (text: string) => runs.findIndex((r) => r?.startsWith(text));
      const setupNode = job.steps.find((s) => s.uses?.startsWith('actions/setup-node@'));
      // Electron 45 and its rebuild tool need Node 22.12 or later.
      expect(setupNode?.with?.['node-version'], name).toBe('22.12');
      const order = ['actions/checkout@', 'npm ci', 'npm run build', 'npm run builder -- install-app-deps', 'npm run builder -- --config electron-builder.yml', 'actions/upload-artifact@'].map(index);
      expect(order.every((i) => i >= 0), `${name}: ${runs.join(' | ')}`).toBe(true);
      expect([...order].sort((a, b) => a - b), name).toEqual(order);
      expect(runs.find((r) => r?.startsWith('npm run builder -- --config')), name).toContain(want.flags);
      const upload = job.steps.find((s) => s.uses?.startsWith('actions/upload-artifact@'))!;
      expect(upload.with!.path!.trim().split('\n'), name).toEqual(want.files);
      expect(upload.with!['if-no-files-found'], name).toBe('error');
    }
  });
});
