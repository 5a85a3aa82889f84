/**
 * Which way imports run (CONVENTIONS.md): no import cycles in server/ and electron/ (type-only
 * imports included), features never import the composition above them, shared layers never
 * import features. The rules are in .dependency-cruiser.cjs; dependency-cruiser reads the real
 * import graph, and a fixture with the cycle that server/features.ts used to close shows the rules bite.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = new URL('../..', import.meta.url).pathname;
const depcruise = join(root, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');
const config = join(root, '.dependency-cruiser.cjs');

interface Violation {
  rule: { name: string };
  from: string;
  to: string;
  cycle?: { name: string }[];
}

function cruise(cwd: string, paths: string[]): Promise<{ violations: Violation[]; totalCruised: number }> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [depcruise, ...paths, '--config', config, '--output-type', 'json'],
      { cwd, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        // Exit code 1 just means "violations found"; the JSON says which.
        if (!stdout) return reject(new Error(`dependency-cruiser failed: ${error?.message}\n${stderr}`));
        const { summary } = JSON.parse(stdout) as { summary: { violations: Violation[]; totalCruised: number } };
        resolve(summary);
      },
    );
  });
}

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function fixture(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-imports-'));
  dirs.push(dir);
  const tsconfig = { compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true }, include: ['server/**/*.ts'] };
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(tsconfig));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

const describeViolation = (v: Violation) => `${v.rule.name}: ${v.from} -> ${v.to}${v.cycle ? ` (${v.cycle.map((c) => c.name).join(' -> ')})` : ''}`;

describe('import graph', () => {
  it('server/ and electron/ have no cycles and import downwards only', async () => {
    const summary = await cruise(root, ['server', 'electron']);
    expect(summary.totalCruised).toBeGreaterThan(150);
    expect(summary.violations.map(describeViolation)).toEqual([]);
  });

  it('the rules catch a feature importing its options type from server/features.ts, and a shared layer importing a feature', async () => {
    const dir = fixture({
      'server/features.ts': "import { invitationsPlugin } from './invitations/routes.js';\nexport interface FeatureOptions { startWorkers: boolean }\nexport const featurePlugins = [invitationsPlugin];\n",
      'server/invitations/routes.ts': "import type { FeatureOptions } from '../features.js';\nexport const invitationsPlugin = (o: FeatureOptions) => o.startWorkers;\n",
      'server/http/guard.ts': "import { invitationsPlugin } from '../invitations/routes.js';\nexport const guard = invitationsPlugin;\n",
    });
    const summary = await cruise(dir, ['server']);
    expect(summary.violations.map(describeViolation).sort()).toEqual([
      'features-below-composition: server/invitations/routes.ts -> server/features.ts',
      'no-circular: server/features.ts -> server/invitations/routes.ts (server/invitations/routes.ts -> server/features.ts)',
      'shared-below-features: server/http/guard.ts -> server/invitations/routes.ts',
    ]);
  });
});
