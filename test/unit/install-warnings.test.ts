/**
 * `npm install` on the Node version the README names prints no wall of warnings (issue 44, m11):
 * - no EBADENGINE: every installed package's `engines.node` admits that version;
 * - no "install scripts not yet covered by allowScripts" (npm 11): every installed package with
 *   an install script is named in package.json's `allowScripts`, allowed or denied on purpose.
 * Read from the installed tree (what `npm install` makes of the lockfile), so a dependency bump
 * that would warn fails here first.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

const root = new URL('../..', import.meta.url).pathname;
const semver = createRequire(import.meta.url)('semver') as { satisfies(version: string, range: string): boolean };

interface Manifest {
  name?: string;
  version?: string;
  engines?: { node?: string };
  scripts?: Record<string, string>;
}

/** Every package under node_modules, nested ones included, with where it is. */
function installed(dir = join(root, 'node_modules'), out: { path: string; manifest: Manifest }[] = []) {
  if (!existsSync(dir)) return out;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.name.startsWith('@')) {
      installed(path, out);
      continue;
    }
    const file = join(path, 'package.json');
    if (existsSync(file)) out.push({ path, manifest: JSON.parse(readFileSync(file, 'utf8')) as Manifest });
    installed(join(path, 'node_modules'), out);
  }
  return out;
}

const readme = readFileSync(join(root, 'README.md'), 'utf8');
const named = /^Node (\d+\.\d+) or later/m.exec(readme)?.[1];

describe('npm install on the Node the README names', () => {
  const packages = installed();

  it('names one version, and every installed package admits it (no EBADENGINE warning)', () => {
    expect(named).toMatch(/^\d+\.\d+$/);
    expect(packages.length).toBeGreaterThan(500);
    const refusing = packages
      .filter(({ manifest }) => manifest.engines?.node && !semver.satisfies(`${named}.0`, manifest.engines.node))
      .map(({ manifest }) => `${manifest.name}@${manifest.version} wants node ${manifest.engines!.node}`);
    expect(refusing).toEqual([]);
  });

  it('runs or skips every install script on purpose (allowScripts names each package that has one)', () => {
    const allowScripts = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { allowScripts: Record<string, boolean> }).allowScripts;
    const decided = new Set(Object.keys(allowScripts).map((key) => key.replace(/(.)@.*$/, '$1')));
    const undecided = packages
      .filter(({ manifest }) => ['preinstall', 'install', 'postinstall'].some((hook) => manifest.scripts?.[hook]))
      .filter(({ manifest, path }) => !decided.has(manifest.name ?? '') && !path.startsWith(join(root, 'node_modules/@gatehouse/')))
      .map(({ manifest }) => `${manifest.name}@${manifest.version}`);
    expect([...new Set(undecided)]).toEqual([]);
  });
});
