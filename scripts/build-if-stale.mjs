// Builds what `npm start`, `npm test` and `npm run gatehouse` need, only when sources are newer
// than the build output: the server (tsc → dist/) and the control panel (vite → renderer/dist/).
import { execSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;

function newest(dir, filter = () => true) {
  let latest = 0;
  if (!existsSync(dir)) return latest;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist') continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) latest = Math.max(latest, newest(path, filter));
    else if (filter(path)) latest = Math.max(latest, statSync(path).mtimeMs);
  }
  return latest;
}

function mtime(path) {
  return existsSync(path) ? statSync(path).mtimeMs : 0;
}

function run(command) {
  execSync(command, { cwd: root, stdio: 'inherit' });
}

const serverSources = Math.max(
  newest(join(root, 'server'), (p) => p.endsWith('.ts')),
  newest(join(root, 'electron'), (p) => p.endsWith('.ts')),
  mtime(join(root, 'tsconfig.json')),
);
if (serverSources > mtime(join(root, 'dist/server/cli.js'))) {
  console.error('Building the server…');
  run('npx tsc -p tsconfig.json');
}

const rendererIndex = join(root, 'renderer/index.html');
if (existsSync(rendererIndex)) {
  const rendererSources = Math.max(newest(join(root, 'renderer')), mtime(rendererIndex));
  if (rendererSources > mtime(join(root, 'renderer/dist/index.html'))) {
    console.error('Building the control panel…');
    run('npx vite build --config renderer/vite.config.ts --logLevel warn');
  }
}
