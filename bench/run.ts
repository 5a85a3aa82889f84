/**
 * `npm run bench [-- <scenario> ...]`: runs benchmark scenarios against a real server on a fresh
 * data directory, prints one table (scenario, throughput, p50, p99, server CPU-seconds per 1,000
 * operations, the figure judged, target, met) and writes every figure to `bench/results.json`.
 * Each scenario is `bench/<name>.ts` exporting `scenario: Scenario`; files starting with `_` are
 * shared helpers. With no name, every scenario runs. Exits 1 when a target is missed or a
 * scenario fails, so the command can gate a release. Running some scenarios updates their entries
 * in results.json and keeps the others. `npm run bench -- --markdown` prints the stored figures as
 * the Markdown table of docs/benchmarks.md without running anything.
 */
import { lowMemoryRequested, serveNodeArgs } from '../server/cli/launch.js';
import { describeCost, type Cost } from './_cost.js';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
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
  /** The figure the target is judged on when it is neither throughput nor p99 (e.g. "p95 4.2 ms"). */
  measured?: string;
  /** Free-form extra figures (p95, RSS, …), kept in results.json. */
  extra?: Record<string, number | string>;
  /** CPU per operation against the signature's cost, and where it went (bench/_cost.ts). */
  cost?: Cost;
  target: string;
  met: boolean;
}

export interface Scenario {
  name: string;
  description: string;
  run(): Promise<BenchResult[]>;
}

const here = dirname(fileURLToPath(import.meta.url));

/** Pause between scenarios. */
const SETTLE_MS = 2_000;

/** Earlier names of scenarios, still accepted on the command line. */
const ALIASES: Record<string, string> = { token: 'refresh', jwks: 'discovery' };

/** The issue's order for the table; scenarios not listed follow alphabetically. */
const ORDER = ['refresh', 'code-flow', 'userinfo', 'sign-in', 'sign-in-mfa', 'discovery', 'members', 'webhooks', 'memory', 'startup', 'cli', 'scale'];
/** Run only when named: `scale` builds a database of hundreds of MB the first time. */
const NAMED_ONLY = ['scale'];
/** Scenarios that measure PostgreSQL mode with `--db postgres` (stored as "<name> (postgres, N instances)"). */
const ENGINE_AWARE = ['refresh', 'sign-in'];
const rank = (key: string) => {
  const name = key.split(' (')[0]!;
  return ORDER.includes(name) ? ORDER.indexOf(name) : ORDER.length;
};

function scenarioNames(): string[] {
  return readdirSync(here)
    .filter((f) => f.endsWith('.ts') && f !== 'run.ts' && !f.startsWith('_'))
    .map((f) => basename(f, '.ts'))
    .sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

/** A scenario that threw still gets a row (and fails the run) instead of hiding the others. */
function failedRow(name: string, error: unknown): BenchResult {
  const message = (error as Error)?.message ?? String(error);
  return { scenario: name, throughput: 0, p50Ms: 0, p99Ms: 0, measured: `failed: ${message.slice(0, 80)}`, target: 'runs', met: false, extra: { error: message } };
}

const fixed = (n: number | undefined, digits: number) => (n === undefined || !Number.isFinite(n) ? '' : n.toFixed(digits));

function printTable(results: BenchResult[]): void {
  console.table(
    results.map((r) => ({
      scenario: r.scenario,
      'ops/s': r.throughput ? Math.round(r.throughput) : '',
      'p50 ms': r.p50Ms ? fixed(r.p50Ms, 2) : '',
      'p99 ms': r.p99Ms ? fixed(r.p99Ms, 2) : '',
      'CPU s/1k ops': fixed(r.cpuSecondsPer1k, 2),
      measured: r.measured ?? '',
      target: r.target,
      met: r.met ? 'yes' : 'NO',
    })),
  );
}

/** Where each costed row's CPU went, one line each (the table has no room for it). */
function printCosts(results: BenchResult[], print: (line: string) => void): void {
  for (const r of results) if (r.cost) print(`- ${r.scenario}: ${describeCost(r.cost)}`);
}

/** `--markdown`: the stored figures as a Markdown table (docs/benchmarks.md). */
function printMarkdown(scenarios: ResultsFile['scenarios']): void {
  const cell = (text: string) => text.replaceAll('|', '\\|');
  console.log('| scenario | ops/s | p50 ms | p99 ms | CPU s/1k ops | measured | target | met | load avg |');
  console.log('|---|---:|---:|---:|---:|---|---|---|---:|');
  for (const name of Object.keys(scenarios).sort((a, b) => rank(a) - rank(b) || a.localeCompare(b))) {
    const { loadAverage, results } = scenarios[name]!;
    for (const r of results) {
      const row = [
        r.scenario,
        r.throughput ? Math.round(r.throughput).toLocaleString('en') : '',
        r.p50Ms ? fixed(r.p50Ms, 1) : '',
        r.p99Ms ? fixed(r.p99Ms, 1) : '',
        fixed(r.cpuSecondsPer1k, 2),
        r.measured ?? '',
        r.target,
        r.met ? 'yes' : '**no**',
        loadAverage.toFixed(1),
      ];
      console.log(`| ${row.map(cell).join(' | ')} |`);
    }
  }
  console.log('');
  for (const name of Object.keys(scenarios)) printCosts(scenarios[name]!.results, console.log);
}

interface ResultsFile {
  machine: Record<string, unknown>;
  /** Per scenario file: when it last ran, the load average then, and its rows. */
  /** `serverFlags`: the Node/V8 settings the served process ran with, in their command-line form (it sets them on itself; GATEHOUSE_LOW_MEMORY adds some). */
  scenarios: Record<string, { ranAt: string; loadAverage: number; serverFlags: string[]; results: BenchResult[] }>;
}

/** The figures of earlier runs, so running one scenario updates its entry and keeps the others. */
function previousResults(file: string): ResultsFile['scenarios'] {
  if (!existsSync(file)) return {};
  try {
    const scenarios = (JSON.parse(readFileSync(file, 'utf8')) as Partial<ResultsFile>).scenarios ?? {};
    for (const alias of Object.keys(ALIASES)) delete scenarios[alias]; // stored under its old name
    return scenarios;
  } catch {
    return {};
  }
}

async function main(): Promise<number> {
  if (process.argv.includes('--markdown')) {
    printMarkdown(previousResults(join(here, 'results.json')));
    return 0;
  }
  const available = scenarioNames();
  // `--scale N` (the scale scenario's size) takes a value; it reaches the scenario as BENCH_SCALE.
  const args = process.argv.slice(2);
  const scaleAt = args.indexOf('--scale');
  if (scaleAt >= 0) {
    process.env.BENCH_SCALE = args[scaleAt + 1];
    args.splice(scaleAt, 2);
  }
  // `--db sqlite|postgres` and `--instances N` (PostgreSQL mode, issue 26) reach the scenarios
  // that support them as BENCH_DB and BENCH_INSTANCES (bench/_postgres.ts); their figures are
  // kept under their own name in results.json.
  let variant = '';
  for (const [flag, env] of [['--db', 'BENCH_DB'], ['--instances', 'BENCH_INSTANCES']] as const) {
    const at = args.indexOf(flag);
    if (at < 0) continue;
    process.env[env] = args[at + 1];
    args.splice(at, 2);
  }
  if (process.env.BENCH_DB === 'postgres') {
    const n = process.env.BENCH_INSTANCES ?? '1';
    variant = ` (postgres, ${n} instance${n === '1' ? '' : 's'})`;
  }
  // `--alg A[,B]` (repeatable; issue 38): the refresh grant of an application per signing
  // algorithm, on one server (bench/_refresh-algorithms.ts); kept as "refresh (algorithms)".
  const algs: string[] = [];
  for (let at = args.indexOf('--alg'); at >= 0; at = args.indexOf('--alg')) {
    algs.push(...(args[at + 1] ?? '').split(','));
    args.splice(at, 2);
  }
  if (algs.length) {
    process.env.BENCH_ALGS = algs.join(',');
    variant = ' (algorithms)';
  }
  const wanted = [...new Set(args.filter((a) => !a.startsWith('-')).map((a) => ALIASES[a] ?? a))];
  if (algs.length && (process.env.BENCH_DB === 'postgres' || wanted.join() !== 'refresh')) {
    console.error('--alg applies to the refresh scenario on SQLite (e.g. npm run bench -- refresh --alg RS256,ES256,EdDSA).');
    return 1;
  }
  if (variant && (!wanted.length || wanted.some((name) => !ENGINE_AWARE.includes(name)))) {
    console.error(`--db postgres applies to ${ENGINE_AWARE.join(' and ')}; name them (e.g. npm run bench -- refresh --db postgres --instances 2).`);
    return 1;
  }
  const unknown = wanted.filter((name) => !available.includes(name));
  if (unknown.length) {
    console.error(`Unknown scenario "${unknown[0]}". Available: ${available.join(', ')} (also ${Object.keys(ALIASES).map((a) => `${a} = ${ALIASES[a]}`).join(', ')})`);
    return 1;
  }
  const names = wanted.length ? wanted : available.filter((name) => !NAMED_ONLY.includes(name));
  const file = join(here, 'results.json');
  const scenarios = previousResults(file);
  const results: BenchResult[] = [];
  for (const [index, name] of names.entries()) {
    // Let the previous scenario's tail (server exit, data-directory removal, the kernel writing
    // back its pages, this process's garbage) finish before the next one is measured.
    if (index > 0) await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const mod = (await import(pathToFileURL(join(here, `${name}.ts`)).href)) as { scenario: Scenario };
    console.error(`Running ${name}: ${mod.scenario.description}`);
    let rows: BenchResult[];
    try {
      rows = await mod.scenario.run();
    } catch (error) {
      console.error(`${name} failed: ${(error as Error)?.stack ?? String(error)}`);
      rows = [failedRow(name, error)];
    }
    // Other work on the machine slows wall-clock figures (CPU-seconds per 1,000 operations are
    // robust to it), so each scenario keeps the 1-minute load average at its end.
    scenarios[`${name}${variant}`] = { ranAt: new Date().toISOString(), loadAverage: Number(loadavg()[0]!.toFixed(2)), serverFlags: serveNodeArgs(process.env), results: rows };
    results.push(...rows);
  }
  printTable(results);
  printCosts(results, console.log);
  const machine = {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    memoryGiB: Number((totalmem() / 2 ** 30).toFixed(1)),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
  };
  const loads = names.map((n) => scenarios[`${n}${variant}`]!.loadAverage).join(', ');
  const mode = lowMemoryRequested(process.env) ? ', low-memory mode (GATEHOUSE_LOW_MEMORY=1)' : '';
  console.error(`${machine.cpus} × ${machine.cpuModel}, Node ${machine.node}${mode}, load average after each scenario: ${loads}`);
  const ordered = Object.fromEntries(Object.keys(scenarios).sort((a, b) => rank(a) - rank(b) || a.localeCompare(b)).map((n) => [n, scenarios[n]!]));
  writeFileSync(file, `${JSON.stringify({ machine, scenarios: ordered } satisfies ResultsFile, null, 2)}\n`);
  console.error('Figures written to bench/results.json');
  return results.every((r) => r.met) ? 0 : 1;
}

process.exitCode = await main();
