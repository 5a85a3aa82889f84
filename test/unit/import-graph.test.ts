/**
 * Which way imports run (CONVENTIONS.md; docs/architecture.md, "Layers"): no import cycles in
 * server/ and electron/ (type-only imports included), the core never imports a protocol plugin,
 * features and plugins never import the composition above them, shared layers import neither.
 * The rules are in .dependency-cruiser.cjs; dependency-cruiser reads the real import graph, and
 * fixtures show each rule bite, with its comment (what to do instead) in the failure. And at most
 * MAX_BOTH_WAYS pairs of server folders import each other both ways (scripts/layer-report.ts).
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import { afterAll, describe, expect, it } from 'vitest';
import { reportOf } from '../../scripts/layer-report.js';

const root = new URL('../..', import.meta.url).pathname;
const depcruise = join(root, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');
const config = join(root, '.dependency-cruiser.cjs');
const rules = (createRequire(import.meta.url)(config) as { forbidden: { name: string; comment: string }[] }).forbidden;

/** At most this many pairs of server folders may import each other both ways (issue 48: 36 before the plugin API). */
const MAX_BOTH_WAYS = 20;

interface Violation {
  rule: { name: string };
  from: string;
  to: string;
  cycle?: { name: string }[];
}

type Modules = Parameters<typeof reportOf>[0];

function cruise(cwd: string, paths: string[]): Promise<{ violations: Violation[]; totalCruised: number; modules: Modules }> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [depcruise, ...paths, '--config', config, '--output-type', 'json'],
      { cwd, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        // Exit code 1 just means "violations found"; the JSON says which.
        if (!stdout) return reject(new Error(`dependency-cruiser failed: ${error?.message}\n${stderr}`));
        const { summary, modules } = JSON.parse(stdout) as { summary: { violations: Violation[]; totalCruised: number }; modules: Modules };
        resolve({ ...summary, modules });
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
/** The same, with what to do instead: the failure of the real graph's check says it. */
const explainViolation = (v: Violation) => `${describeViolation(v)}\n    ${rules.find((r) => r.name === v.rule.name)?.comment ?? ''}`;

describe('import graph', () => {
  /** The real graph, read once for the file. */
  let real: ReturnType<typeof cruise> | undefined;
  const realGraph = () => (real ??= cruise(root, ['server', 'electron']));

  // Reading ~530 modules with TypeScript's resolver takes ~7 s of CPU; on a busy 2-core machine
  // that is 40–50 s of wall time, so this test is given room beyond the project's 30 s default.
  it('server/ and electron/ have no cycles and import downwards only', async () => {
    const summary = await realGraph();
    expect(summary.totalCruised).toBeGreaterThan(150);
    expect(summary.violations.map(explainViolation)).toEqual([]);
  }, 180_000);

  it(`at most ${MAX_BOTH_WAYS} pairs of server folders import each other both ways`, async () => {
    const { bothWays } = reportOf((await realGraph()).modules);
    expect(bothWays.length, bothWays.map(([a, b]) => `${a} <-> ${b}`).join('\n')).toBeLessThanOrEqual(MAX_BOTH_WAYS);
  });

  it('the rules catch the core importing a plugin and a shared layer importing the composition, and say what to do instead', async () => {
    const dir = fixture({
      'server/forward-auth/settings.ts': 'export const hosts: string[] = [];\n',
      'server/applications/service.ts': "import { hosts } from '../forward-auth/settings.js';\nexport const list = hosts;\n",
      'server/cli/launch.ts': 'export const parseSwitch = (raw: string) => raw === "1";\n',
      'server/config.ts': "import { parseSwitch } from './cli/launch.js';\nexport const on = parseSwitch('1');\n",
      'server/people/queries.ts': "import type { hosts } from '../forward-auth/settings.js';\nexport type Hosts = typeof hosts;\n",
    });
    const summary = await cruise(dir, ['server']);
    expect(summary.violations.map(describeViolation).sort()).toEqual([
      'core-below-plugins: server/applications/service.ts -> server/forward-auth/settings.ts',
      'core-below-plugins: server/people/queries.ts -> server/forward-auth/settings.ts',
      'shared-below-composition: server/config.ts -> server/cli/launch.ts',
    ]);
    expect(summary.violations.map(explainViolation).find((v) => v.startsWith('core-below-plugins'))).toContain('ctx.hooks');
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
