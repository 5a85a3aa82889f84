/**
 * Where the installation's files are: the project root holds package.json and renderer/dist.
 * Found by walking up from this module, because the same code runs from server/ (tsx, tests),
 * dist/server/ (npm start) and inside Electron's app.asar (packaged).
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

/** The built control panel; GATEHOUSE_RENDERER_DIR overrides it (packaging, development). */
export function rendererDir(env: Record<string, string | undefined> = process.env): string {
  return env.GATEHOUSE_RENDERER_DIR ?? join(projectRoot, 'renderer', 'dist');
}

let cachedVersion: string | undefined;
export function packageVersion(): string {
  if (cachedVersion === undefined) {
    try {
      const pkg = JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { version?: string };
      cachedVersion = pkg.version ?? '0.0.0';
    } catch {
      cachedVersion = '0.0.0';
    }
  }
  return cachedVersion;
}
