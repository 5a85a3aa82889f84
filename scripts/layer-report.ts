/**
 * `npx tsx scripts/layer-report.ts [--list] [--json]`: how well the server's imports keep to the
 * layers (docs/architecture.md, "Layers"), in three counts, read from the real import graph by
 * dependency-cruiser (type-only imports included, as in .dependency-cruiser.cjs):
 *
 * - upward imports: file-to-file imports from a lower layer to a higher one (shared → core,
 *   plugin or composition; core → plugin or composition; plugin → composition), counted once per
 *   pair of files, and how many of them run at run time (not `import type`);
 * - folder pairs that import each other both ways (a top-level file counts as its own folder);
 * - run-time imports from the shared layers and the core features into the plugins.
 *
 * The layers are the ones .dependency-cruiser.cjs enforces (its `layers` export), so the counts
 * and the rules never disagree about which folder is where. `--list` prints every import counted.
 */
import { createRequire } from 'node:module';
import { cruise, type ICruiseResult } from 'dependency-cruiser';

const require = createRequire(import.meta.url);
const root = new URL('..', import.meta.url).pathname;
const config = require(`${root}.dependency-cruiser.cjs`) as { layers: Record<Layer, string>; options: object };

type Layer = 'shared' | 'core' | 'plugins' | 'composition';
const ORDER: Layer[] = ['shared', 'core', 'plugins', 'composition'];
const patterns = ORDER.map((layer) => [layer, new RegExp(config.layers[layer])] as const);

/** The layer of a server file: the first pattern it matches, in the order composition, plugins, shared, then core. */
export function layerOf(path: string): Layer | undefined {
  if (!path.startsWith('server/')) return undefined;
  for (const layer of ['composition', 'plugins', 'shared'] as const) if (patterns.find(([l]) => l === layer)![1].test(path)) return layer;
  return 'core';
}

/** `server/oauth/token/x.ts` → `oauth`; `server/config.ts` → `config.ts`. */
const folderOf = (path: string) => path.slice('server/'.length).split('/')[0]!;

export interface LayerReport {
  upward: { from: string; to: string; typeOnly: boolean }[];
  bothWays: [string, string][];
  intoPlugins: { from: string; to: string }[];
}

/** The counts of a dependency-cruiser result (its `modules`: the import-graph test passes its own). */
export function reportOf(modules: ICruiseResult['modules']): LayerReport {
  const result = { modules };
  const pairs = new Map<string, { from: string; to: string; typeOnly: boolean }>();
  const folders = new Set<string>();
  for (const module of result.modules) {
    const from = module.source;
    if (!from.startsWith('server/')) continue;
    for (const dep of module.dependencies) {
      const to = dep.resolved;
      if (!to.startsWith('server/') || dep.coreModule) continue;
      const typeOnly = dep.dependencyTypes.includes('type-only') || dep.dependencyTypes.includes('type-import');
      const key = `${from} ${to}`;
      const known = pairs.get(key);
      // A file that imports another both ways (a type and a value) counts as a run-time import.
      pairs.set(key, { from, to, typeOnly: (known?.typeOnly ?? true) && typeOnly });
      if (folderOf(from) !== folderOf(to)) folders.add(`${folderOf(from)} ${folderOf(to)}`);
    }
  }
  const rank = (path: string) => ORDER.indexOf(layerOf(path)!);
  const edges = [...pairs.values()];
  const upward = edges.filter((e) => rank(e.to) > rank(e.from));
  const intoPlugins = edges.filter((e) => !e.typeOnly && layerOf(e.to) === 'plugins' && (layerOf(e.from) === 'shared' || layerOf(e.from) === 'core'));
  const bothWays = [...folders]
    .map((pair) => pair.split(' ') as [string, string])
    .filter(([a, b]) => a < b && folders.has(`${b} ${a}`));
  return { upward, bothWays, intoPlugins };
}

export async function layerReport(): Promise<LayerReport> {
  const { output } = await cruise(['server'], { ...config.options, ruleSet: { forbidden: [] } } as never, undefined, {
    tsConfig: { fileName: `${root}tsconfig.json` },
  } as never);
  return reportOf((output as ICruiseResult).modules);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const report = await layerReport();
  if (process.argv.includes('--json')) {
    console.log(JSON.stringify(report, null, 2));
  } else {
    const runTime = report.upward.filter((e) => !e.typeOnly).length;
    console.log(`upward imports (file pairs)              ${report.upward.length} (${runTime} at run time)`);
    console.log(`folder pairs importing each other        ${report.bothWays.length}`);
    console.log(`run-time imports into plugins            ${report.intoPlugins.length} (from shared layers and core features)`);
    if (process.argv.includes('--list')) {
      console.log('\nupward:');
      for (const e of report.upward) console.log(`  ${e.from} -> ${e.to}${e.typeOnly ? ' (type)' : ''}`);
      console.log('\nboth ways:');
      for (const [a, b] of report.bothWays) console.log(`  ${a} <-> ${b}`);
      console.log('\ninto plugins:');
      for (const e of report.intoPlugins) console.log(`  ${e.from} -> ${e.to}`);
    }
  }
}
