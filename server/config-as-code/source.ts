/**
 * A configuration file as text, and the export as text: YAML 1.2 (core schema) through the
 * `yaml` package, which keeps every node's place in the text, so each problem found later — by
 * the schemas or by a service's rules — is reported with the line it is on. Syntax errors (a bad
 * indent, a duplicate key, a second document) are problems too, each with its line; a file with
 * any of them is not read further.
 *
 * Parsing and writing run in a worker thread (util/idle-worker.ts), never on the event loop: the
 * package parses a 60 KB file (100 applications) in ~90 ms and writes it in ~17 ms on the test
 * machine under load, and a file may be 1 MB. The worker answers the document as plain values and,
 * for every key and list item, the line it is on; a path not in the file is placed at its nearest
 * ancestor (a missing field at its entry's key).
 */
import { createRequire } from 'node:module';
import type { FieldError } from '../http/problem.js';
import { IdleWorker } from '../util/idle-worker.js';

/** Aliases a file may expand (`*anchor`): enough for shared lists, too few to blow up memory. */
const MAX_ALIAS_COUNT = 100;
/** A worker thread is a second V8 isolate (~15 MB resident): ended soon after the last file (issue 45). */
const IDLE_MS = 10_000;

export interface Source {
  /** The document as plain values (maps as objects, sequences as arrays). */
  value: unknown;
  /** The line a path (`applications.grafana.redirectUris.0`) is on; its nearest ancestor's when absent. */
  lineOf(path: string): number | undefined;
}

type Message = { op: 'parse'; text: string } | { op: 'write'; value: unknown; comment: string };
type Parsed = { problems: FieldError[]; value?: unknown; lines?: [string, number][] };

/**
 * The worker's body. `lines`: each map key's path (joined with dots, as the problems name them)
 * with the line of the key, each list item's with its own line.
 */
const WORKER_SOURCE = `
const { workerData, parentPort } = require('node:worker_threads');
const YAML = require(workerData.yaml);
const sentence = (message) => {
  const text = String(message).replace(/ at line \\d+, column \\d+[\\s\\S]*$/, '').trim();
  return /[.!?]$/.test(text) ? text : text + '.';
};
function parse(text) {
  const counter = new YAML.LineCounter();
  const lineAt = (offset) => counter.linePos(offset).line;
  const doc = YAML.parseDocument(text, { lineCounter: counter, prettyErrors: false, uniqueKeys: true, version: '1.2' });
  if (doc.errors.length) return { problems: doc.errors.map((e) => ({ path: '(file)', line: lineAt(e.pos[0]), message: sentence(e.message) })) };
  let value;
  try {
    value = doc.toJS({ maxAliasCount: workerData.maxAliasCount });
  } catch (error) {
    // Too many alias expansions (a "billion laughs" file), the one failure left after parsing.
    return { problems: [{ path: '(file)', line: 1, message: sentence(error.message) }] };
  }
  const lines = [];
  const walk = (node, path) => {
    if (YAML.isMap(node)) {
      for (const pair of node.items) {
        if (!YAML.isScalar(pair.key)) continue;
        const at = path === '' ? String(pair.key.value) : path + '.' + String(pair.key.value);
        if (pair.key.range) lines.push([at, lineAt(pair.key.range[0])]);
        walk(pair.value, at);
      }
    } else if (YAML.isSeq(node)) {
      node.items.forEach((item, i) => {
        const at = path === '' ? String(i) : path + '.' + i;
        if (item && item.range) lines.push([at, lineAt(item.range[0])]);
        walk(item, at);
      });
    }
  };
  // The document itself (a problem of the whole file, such as a list where a map belongs).
  if (doc.contents && doc.contents.range) lines.push(['(file)', lineAt(doc.contents.range[0])]);
  walk(doc.contents, '');
  return { problems: [], value, lines };
}
function write(value, comment) {
  const doc = new YAML.Document(value);
  doc.commentBefore = comment;
  // lineWidth 0: long values (URLs, descriptions) stay on one line, whatever their length.
  return doc.toString({ lineWidth: 0 });
}
parentPort.on('message', ({ id, op, text, value, comment }) => {
  try {
    parentPort.postMessage({ id, result: op === 'parse' ? parse(text) : write(value, comment) });
  } catch (error) {
    parentPort.postMessage({ id, error: String((error && error.message) || error) });
  }
});
`;

const yamlWorker = new IdleWorker<Message, unknown>(
  'configuration file',
  WORKER_SOURCE,
  () => ({ yaml: createRequire(import.meta.url).resolve('yaml'), maxAliasCount: MAX_ALIAS_COUNT }),
  IDLE_MS,
);

/** Parses `text`; syntax problems come back as `problems`, each with its line. */
export async function parseSource(text: string): Promise<{ source?: Source; problems: FieldError[] }> {
  const parsed = (await yamlWorker.call({ op: 'parse', text })) as Parsed;
  if (parsed.problems.length) return { problems: parsed.problems };
  const lines = new Map(parsed.lines);
  return {
    problems: [],
    source: {
      value: parsed.value,
      lineOf(path) {
        // The path, else its nearest ancestor (a key may hold dots itself: an e-mail address).
        for (let at = path; at; at = at.includes('.') ? at.slice(0, at.lastIndexOf('.')) : '') {
          const line = lines.get(at);
          if (line !== undefined) return line;
        }
        return undefined;
      },
    },
  };
}

/** `value` as YAML text, with `comment` (lines) above it. */
export async function writeYaml(value: unknown, comment: string): Promise<string> {
  return (await yamlWorker.call({ op: 'write', value, comment })) as string;
}
