// Installs what builds the desktop installers (electron-builder, desktop/package.json) into
// desktop/node_modules, once, and again only when desktop/package-lock.json changes. They are
// kept out of the server's `npm install` (223 packages, 82 MB: decision 0351); `npm run dist`,
// `npm run builder` and `npm test` (for test/unit/desktop-packaging.test.ts, which validates
// electron-builder.yml with electron-builder's own code) call this first. Nothing here downloads
// Electron.
import { execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';

const desktop = new URL('../desktop/', import.meta.url).pathname;
const lockfile = join(desktop, 'package-lock.json');
// npm writes node_modules/.package-lock.json at the end of every install.
const installed = join(desktop, 'node_modules/.package-lock.json');

if (!existsSync(installed) || statSync(installed).mtimeMs < statSync(lockfile).mtimeMs) {
  console.error('Installing the desktop build tools (desktop/package.json)…');
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  try {
    execFileSync(npm, ['ci', '--no-audit', '--no-fund', '--loglevel', 'error'], { cwd: desktop, stdio: 'inherit', shell: process.platform === 'win32' });
  } catch {
    console.error('Installing the desktop build tools failed; see npm’s message above.');
    process.exit(1);
  }
}
