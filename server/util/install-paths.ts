/**
 * Where the installation's files are, the one place that answers it: the project root holds
 * package.json, and every file read at run time (migrations, page templates and assets, the
 * control panel's build) has a fixed path below it. Found by walking up from this module, because
 * the same code runs from server/ (tsx, tests), dist/server/ (tsc output), dist/gatehouse.mjs
 * (the bundle every launcher runs) and inside Electron's app.asar (packaged).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function findRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) return process.cwd();
    dir = parent;
  }
}

export const projectRoot = findRoot();

/** A path below the project root, e.g. `installPath('server', 'db', 'migrations')`. */
export function installPath(...segments: string[]): string {
  return join(projectRoot, ...segments);
}

/** The installed package's version (package.json), read once. */
let cachedVersion: string | undefined;
export function packageVersion(): string {
  if (cachedVersion === undefined) {
    try {
      const pkg = JSON.parse(readFileSync(installPath('package.json'), 'utf8')) as { version?: string };
      cachedVersion = pkg.version ?? '0.0.0';
    } catch {
      cachedVersion = '0.0.0';
    }
  }
  return cachedVersion;
}
