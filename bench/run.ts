/**
 * `npm run bench -- <scenario> [...]`: runs benchmark scenarios against a real server on a fresh
 * data directory and prints their figures. Each scenario is `bench/<name>.ts` exporting
 * `scenario: Scenario`. With no name, every scenario runs.
 */
import { readdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export interface BenchResult {
  scenario: string;
  /** Operations per second. */
  throughput: number;
  p50Ms: number;
  p99Ms: number;
  /** Server CPU-seconds (user + system, all threads) per 1,000 operations, when measured. */
  cpuSecondsPer1k?: number;
  /** Free-form extra figures (p95, RSS, …) and the target they are measured against. */
  extra?: Record<string, number | string>;
  target: string;
  met: boolean;
}

export interface Scenario {
  name: string;
  description: string;
  run(): Promise<BenchResult[]>;
}

const here = dirname(fileURLToPath(import.meta.url));

async function main() {
  const available = readdirSync(here)
    .filter((f) => f.endsWith('.ts') && !['run.ts'].includes(f) && !f.startsWith('_'))
    .map((f) => basename(f, '.ts'));
  const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'));
  const names = wanted.length ? wanted : available;
  const results: BenchResult[] = [];
  for (const name of names) {
    if (!available.includes(name)) {
      console.error(`Unknown scenario "${name}". Available: ${available.join(', ')}`);
      process.exit(1);
    }
    const mod = (await import(pathToFileURL(join(here, `${name}.ts`)).href)) as { scenario: Scenario };
    console.error(`Running ${name}: ${mod.scenario.description}`);
    results.push(...(await mod.scenario.run()));
  }
  console.table(
    results.map((r) => ({
      scenario: r.scenario,
      'ops/s': Math.round(r.throughput),
      'p50 ms': r.p50Ms.toFixed(2),
      'p99 ms': r.p99Ms.toFixed(2),
      target: r.target,
      met: r.met ? 'yes' : 'NO',
      ...r.extra,
    })),
  );
}

await main();
