#!/usr/bin/env node
/**
 * Did the documentation restructure (issue 39) lose anything? Reads the old README.md and
 * docs/*.md as they were at a base commit, cuts them into sentences (and table rows, list items,
 * code lines), and looks for each in the current README.md and docs/: word for word, or reworded
 * (at least 80 % of its words, and every figure it states, within a few neighbouring paragraphs of
 * one new page). Separately, every figure with a unit (`19.3 ms`, `2,300/s`, `87 MB`, `30 s`, …)
 * must appear somewhere in the new docs. Prints what is missing and exits 1 when anything is.
 *
 *   node scripts/docs-coverage.mjs [--base <commit>] [--verbose] [--ignore <file>]
 *
 * Issue numbers are not content (the records are named by subject, not by the issue that caused
 * them), so "(issue 22)"-style labels are dropped from the old sentences before they are looked for.
 *
 * `--ignore` names a file of sentences judged not to be content (one normalised sentence per line,
 * `#` comments, `\#` for a sentence that starts with one), e.g. a heading that only named an issue.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const ROOT = join(import.meta.dirname, '..');
const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
/** The last commit before the restructure: main at 362e25c. */
const BASE = option('--base', '362e25c');
const VERBOSE = args.includes('--verbose');
const IGNORE_FILE = option('--ignore', join(ROOT, 'scripts', 'docs-coverage.ignore'));

const OLD_FILES = ['README.md', 'docs/decisions.md', 'docs/deploy-postgres.md', 'docs/benchmarks.md'];

function oldText(path) {
  return execFileSync('git', ['show', `${BASE}:${path}`], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 << 20 });
}

function newPages() {
  const out = ['README.md'];
  const walk = (dir) => {
    for (const name of readdirSync(join(ROOT, dir))) {
      const path = join(dir, name);
      if (statSync(join(ROOT, path)).isDirectory()) walk(path);
      else if (name.endsWith('.md')) out.push(path);
    }
  };
  walk('docs');
  return out;
}

/** Lower case, markup gone, punctuation that does not carry meaning gone, one space between words. */
export function normalise(text) {
  return text
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*]/g, '')
    .replace(/\\\|/g, '|')
    .toLowerCase()
    .replace(/[‘’]/g, "'")
    .replace(/[“”]/g, '"')
    .replace(/[^\p{L}\p{N}.,%/≈≤≥×±~+<>=_'-]+/gu, ' ')
    .replace(/(?<=\D)[.,](?=\s|$)/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** "(issue 22)", "(issue 22 review; util/email.ts)" → "", "(util/email.ts)": labels of the work, not facts. */
const withoutIssueLabels = (text) =>
  text.replace(/\s*\(issues? \d+(?:[^;)]*)\)/g, '').replace(/\((?:issues? \d+[^;)]*); /g, '(');
const words = (normalised) => normalised.split(' ').filter((w) => w.length > 0);
/** Figures: tokens with a digit. */
const figuresOf = (normalised) => words(normalised).filter((w) => /\d/.test(w));

/** Markdown → units: sentences of prose paragraphs, list items' sentences, table rows, code lines. */
export function units(text) {
  const out = [];
  const lines = text.split('\n');
  let paragraph = [];
  let inCode = false;
  const flush = () => {
    if (paragraph.length === 0) return;
    const joined = paragraph.join(' ');
    paragraph = [];
    for (const sentence of joined.split(/(?<=[.;!?])\s+(?=[A-Z`(*"“0-9])|(?<=:)\s+(?=[A-Z`*])/)) out.push(sentence);
  };
  for (const line of lines) {
    if (/^\s*(```|~~~)/.test(line)) {
      flush();
      inCode = !inCode;
      continue;
    }
    if (inCode) {
      if (line.trim()) out.push(line);
      continue;
    }
    if (/^\s*$/.test(line)) flush();
    else if (/^\s*\|/.test(line)) {
      flush();
      if (!/^\s*\|[\s:|-]+\|\s*$/.test(line)) out.push(line);
    } else if (/^#{1,6}\s/.test(line)) {
      flush();
      out.push(line.replace(/^#+\s*/, ''));
    } else if (/^\s*([-*]|\d+\.)\s/.test(line)) {
      flush();
      paragraph.push(line.replace(/^\s*([-*]|\d+\.)\s/, ''));
    } else paragraph.push(line.trim());
  }
  flush();
  return out;
}

/** The new docs as blocks (paragraphs, list items, table rows, code lines), per page, in order. */
function newBlocks() {
  const blocks = [];
  for (const page of newPages()) {
    const text = readFileSync(join(ROOT, page), 'utf8');
    const pageBlocks = [];
    let current = [];
    let inCode = false;
    const flush = () => {
      if (current.length) pageBlocks.push(current.join(' '));
      current = [];
    };
    for (const line of text.split('\n')) {
      if (/^\s*(```|~~~)/.test(line)) {
        flush();
        inCode = !inCode;
        continue;
      }
      if (inCode || /^\s*\|/.test(line) || /^#{1,6}\s/.test(line)) {
        flush();
        if (line.trim()) pageBlocks.push(line);
      } else if (/^\s*$/.test(line)) flush();
      else if (/^\s*([-*]|\d+\.)\s/.test(line)) {
        flush();
        current.push(line);
      } else current.push(line);
    }
    flush();
    for (const block of pageBlocks) blocks.push({ page, text: normalise(block) });
  }
  return blocks;
}

/** Units of a few neighbouring blocks of one page, the places a reworded sentence may have gone. */
function windows(blocks, span = 4) {
  const out = [];
  for (let i = 0; i < blocks.length; i++) {
    const parts = [];
    for (let j = i; j < Math.min(blocks.length, i + span) && blocks[j].page === blocks[i].page; j++) parts.push(blocks[j].text);
    out.push({ page: blocks[i].page, text: parts.join(' '), words: new Set(words(parts.join(' '))) });
  }
  return out;
}

const FIGURE = /(?<![\w.])(?:[≈~≤≥<>]\s?)?\d[\d,.]*(?:\s?[–-]\s?\d[\d,.]*)?\s?(?:%|ms|µs|μs|s|min|minutes?|hours?|h|days?|KB|kB|KiB|MB|MiB|GB|bytes?|bits?|requests\/s|\/s|rps|px|×|x|connections|instances|cores|rows|tokens|members|people)(?![\w])/g;

function main() {
  const ignore = new Set(
    existsSync(IGNORE_FILE)
      ? readFileSync(IGNORE_FILE, 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#')).map((l) => normalise(withoutIssueLabels(l.replace(/^\\/, ''))))
      : [],
  );
  const blocks = newBlocks();
  const corpus = blocks.map((b) => b.text).join(' \n ');
  const wins = windows(blocks);
  const byWord = new Map();
  wins.forEach((w, index) => {
    for (const word of w.words) {
      if (!byWord.has(word)) byWord.set(word, []);
      byWord.get(word).push(index);
    }
  });

  let total = 0;
  let verbatim = 0;
  let reworded = 0;
  let ignored = 0;
  const missing = [];
  const missingFigures = [];
  for (const file of OLD_FILES) {
    const text = oldText(file);
    for (const unit of units(text)) {
      const norm = normalise(withoutIssueLabels(unit));
      const unitWords = [...new Set(words(norm))];
      if (unitWords.length < 3) continue;
      total++;
      if (ignore.has(norm)) {
        ignored++;
        continue;
      }
      if (corpus.includes(norm)) {
        verbatim++;
        continue;
      }
      // Candidate windows: those holding the unit's rarest word.
      const rarest = [...unitWords].sort((a, b) => (byWord.get(a)?.length ?? 0) - (byWord.get(b)?.length ?? 0));
      const candidates = new Set();
      for (const word of rarest.slice(0, 3)) for (const index of byWord.get(word) ?? []) candidates.add(index);
      const figures = [...new Set(figuresOf(norm))];
      let best = { score: 0, page: '', lacking: unitWords, lackingFigures: figures };
      for (const index of candidates) {
        const w = wins[index];
        const lacking = unitWords.filter((word) => !w.words.has(word));
        const score = 1 - lacking.length / unitWords.length;
        if (score > best.score) best = { score, page: w.page, lacking, lackingFigures: figures.filter((f) => !w.words.has(f)) };
      }
      if (best.score >= 0.8 && best.lackingFigures.length === 0) {
        reworded++;
        if (VERBOSE) console.log(`reworded (${best.score.toFixed(2)}, ${best.page}): ${unit.slice(0, 160)}`);
        continue;
      }
      missing.push({ file, unit, best });
    }
    for (const match of text.matchAll(FIGURE)) {
      const figure = normalise(match[0]);
      if (!corpus.includes(figure)) {
        const at = text.lastIndexOf('\n', match.index) + 1;
        missingFigures.push({ file, figure: match[0], line: text.slice(at, text.indexOf('\n', match.index)).trim() });
      }
    }
  }

  for (const m of missing) {
    console.log(`MISSING ${m.file}: ${m.unit.trim()}`);
    console.log(`   best ${(m.best.score * 100).toFixed(0)} % in ${m.best.page || '-'}; lacking words: ${m.best.lacking.slice(0, 12).join(' ')}${m.best.lackingFigures.length ? `; figures: ${m.best.lackingFigures.join(' ')}` : ''}`);
  }
  for (const f of missingFigures) console.log(`FIGURE ${f.file}: "${f.figure}" in: ${f.line.slice(0, 200)}`);
  console.log(
    `\n${total} sentences in the old ${OLD_FILES.join(', ')} (at ${BASE}): ${verbatim} word for word, ${reworded} reworded, ${ignored} judged not content (${relative(ROOT, IGNORE_FILE)}), ${missing.length} missing; ${missingFigures.length} figures missing.`,
  );
  process.exitCode = missing.length + missingFigures.length > 0 ? 1 : 0;
}

main();
