/** The control panel's build and the package version, found from the project root. */
import { readFileSync } from 'node:fs';
import { installPath } from '../util/install-paths.js';

/** The built control panel; GATEHOUSE_RENDERER_DIR overrides it (packaging, development). */
export function rendererDir(env: Record<string, string | undefined> = process.env): string {
  return env.GATEHOUSE_RENDERER_DIR ?? installPath('renderer', 'dist');
}

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
