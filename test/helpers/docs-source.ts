/**
 * What the documentation tests read: the Markdown pages, their links and headings, the
 * configuration page's table, and the environment variables the code reads (found in the source,
 * so a variable added without a line in docs/configuration.md fails test/unit/docs.test.ts).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

export const ROOT = join(import.meta.dirname, '..', '..');

function walk(dir: string, keep: (path: string) => boolean): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...walk(path, keep));
    else if (keep(path)) out.push(path);
  }
  return out.sort();
}

/** README.md and every page under docs/, as paths relative to the project root. */
export function markdownPages(): string[] {
  return ['README.md', ...walk(join(ROOT, 'docs'), (p) => p.endsWith('.md')).map((p) => relative(ROOT, p))];
}

export const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

/** The page's text without fenced code blocks (their contents are not links or headings). */
export function withoutCodeBlocks(text: string): string {
  return text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
}

/**
 * GitHub's heading anchors: lower case, markup and punctuation dropped (hyphens and underscores
 * kept), spaces become hyphens, a repeated anchor gets -1, -2, ….
 */
export function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const match of withoutCodeBlocks(text).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const plain = match[1]!.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/<[^>]+>/g, '');
    const base = plain.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/ /g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  for (const match of text.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) anchors.add(match[1]!);
  return anchors;
}

/** Inline links `[text](target)` outside code, with their line numbers. */
export function linksOf(text: string): { target: string; line: number }[] {
  const prose = withoutCodeBlocks(text).replace(/`[^`\n]*`/g, (span) => ' '.repeat(span.length));
  const out: { target: string; line: number }[] = [];
  prose.split('\n').forEach((line, index) => {
    for (const match of line.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) out.push({ target: match[1]!, line: index + 1 });
  });
  return out;
}

/** One row of a configuration table: the variable, its flag, its default and what it means. */
export interface SettingRow {
  name: string;
  flag: string;
  /** The default cell as written; a value in backticks is checked against the code. */
  defaultCell: string;
  line: number;
}

/** The rows of docs/configuration.md's tables whose header is `variable | flag | default | meaning`. */
export function settingRows(text: string): SettingRow[] {
  const rows: SettingRow[] = [];
  let inTable = false;
  text.split('\n').forEach((line, index) => {
    if (/^\|\s*variable\s*\|\s*flag\s*\|\s*default\s*\|\s*meaning\s*\|/.test(line)) {
      inTable = true;
      return;
    }
    if (!line.startsWith('|')) {
      inTable = false;
      return;
    }
    if (!inTable || /^\|\s*-/.test(line)) return;
    const cells = line.split(/(?<!\\)\|/).slice(1, -1).map((cell) => cell.trim());
    const name = /^`([^`]+)`$/.exec(cells[0] ?? '')?.[1];
    if (name === undefined) throw new Error(`docs/configuration.md:${index + 1}: the first cell must be one variable in backticks, got "${cells[0]}"`);
    rows.push({ name, flag: cells[1] ?? '', defaultCell: cells[2] ?? '', line: index + 1 });
  });
  return rows;
}

/** Code, tests, scripts and CI files (relative paths): where comments cite docs pages. */
export function sourceFiles(): string[] {
  const code = (p: string) => /\.(ts|tsx|mts|cts|mjs|cjs|js|yml|yaml|sh)$/.test(p) || p.endsWith('.ci/run');
  return ['server', 'electron', 'scripts', 'test', 'bench', 'renderer/src', '.github', '.ci']
    .filter((dir) => existsSync(join(ROOT, dir)))
    .flatMap((dir) => walkAll(join(ROOT, dir), code))
    .map((p) => relative(ROOT, p));
}

/** Like walk, but into dot-folders too (.github/workflows). */
function walkAll(dir: string, keep: (path: string) => boolean): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...walkAll(path, keep));
    else if (keep(path)) out.push(path);
  }
  return out;
}

/** The files whose environment reads count: the server, the desktop shell and its launcher. */
export function codeFiles(): string[] {
  return [
    ...walk(join(ROOT, 'server'), (p) => /\.(ts|mjs|js)$/.test(p) && !p.includes(`${join('server', 'db', 'migrations')}`)),
    ...walk(join(ROOT, 'electron'), (p) => /\.(ts|mjs|js)$/.test(p)),
    join(ROOT, 'scripts', 'desktop.mjs'),
  ];
}

const ENV_NAME = String.raw`([A-Z][A-Z0-9_]*[A-Z0-9]_?|npm_config_[a-z_]+)`;
const READS = [
  // env.NAME, process.env.NAME, config.env?.NAME
  new RegExp(String.raw`\benv\??\.${ENV_NAME}\b`, 'g'),
  // env['NAME']
  new RegExp(String.raw`\benv\[\s*['"]${ENV_NAME}['"]\s*\]`, 'g'),
  // config.ts's pick(flag, 'NAME')
  new RegExp(String.raw`\bpick\([^,()]*,\s*'${ENV_NAME}'\)`, 'g'),
  // Any whole string literal 'GATEHOUSE_…' names a variable read by name (positiveIntegerEnv,
  // switchEnv, the retention table, …).
  /['"`](GATEHOUSE_[A-Z0-9_]+)['"`]/g,
];

/** Every environment variable the code reads, with a file that reads it. */
export function environmentReads(): Map<string, string> {
  const found = new Map<string, string>();
  for (const file of codeFiles()) {
    const text = readFileSync(file, 'utf8');
    for (const pattern of READS) {
      for (const match of text.matchAll(pattern)) if (!found.has(match[1]!)) found.set(match[1]!, relative(ROOT, file));
    }
  }
  return found;
}

/**
 * The default the source gives a variable where it reads it, for the reads that carry one inline:
 * `env.NAME ?? 'value'` / `|| 'value'`, or `'NAME', 10` / `'NAME', SOME_CONSTANT` /
 * `'NAME', OBJECT.field` (a call with the default as the next argument), the constant resolved
 * in the same file.
 */
export function inlineDefault(name: string): string | undefined {
  for (const file of codeFiles()) {
    const text = readFileSync(file, 'utf8');
    const fallback = new RegExp(String.raw`\benv\??\.${name}\s*(?:\?\?|\|\|)\s*'([^']*)'`).exec(text);
    if (fallback) return fallback[1];
    const argument = new RegExp(String.raw`'${name}',\s*([\w.]+)`).exec(text);
    if (!argument) continue;
    const value = argument[1]!;
    if (/^[\d_]+$/.test(value)) return value.replace(/_/g, '');
    const [constant, field] = value.split('.');
    const declaration = new RegExp(String.raw`const ${constant}\b[^=]*=\s*([\d_]+|\{)`).exec(text);
    if (!declaration) continue;
    if (field === undefined && declaration[1] !== '{') return declaration[1]!.replace(/_/g, '');
    if (field !== undefined && declaration[1] === '{') {
      const body = text.slice(declaration.index, declaration.index + 2000);
      const member = new RegExp(String.raw`\b${field}:\s*([\d_]+)`).exec(body);
      if (member) return member[1]!.replace(/_/g, '');
    }
  }
  return undefined;
}

/** `npm run <script>` mentions in a page (outside or inside code). */
export function npmRunsOf(text: string): string[] {
  return [...text.matchAll(/\bnpm run ([a-z][\w:-]*)/g)].map((m) => m[1]!);
}
