/**
 * A configuration file as text: parsed with the `yaml` package (YAML 1.2, core schema), which
 * keeps every node's place in the text, so each problem found later — by the schemas or by a
 * service's rules — is reported with the line it is on. Syntax errors (a bad indent, a duplicate
 * key, a second document) are problems too, each with its line; a file with any of them is not
 * read further.
 */
import type { Document, Node } from 'yaml';
import type { FieldError } from '../http/problem.js';

/** The yaml package, loaded on first use (a chunk of its own in the bundle: most servers never read a file). */
type Yaml = typeof import('yaml');
let yaml: Yaml | undefined;
export async function loadYaml(): Promise<Yaml> {
  if (yaml) return yaml;
  const loaded = await import('yaml');
  // The package is CommonJS for Node: bundled (esbuild), its exports arrive as `default`.
  yaml = (loaded as unknown as { default?: Yaml }).default ?? loaded;
  return yaml;
}

/** Aliases a file may expand (`*anchor`): enough for shared lists, too few to blow up memory. */
const MAX_ALIAS_COUNT = 100;

export interface Source {
  /** The document as plain values (maps as objects, sequences as arrays). */
  value: unknown;
  /** The line a path (`applications.grafana.redirectUris.0`) is on; its nearest ancestor's when absent. */
  lineOf(path: string): number | undefined;
}

/** Parses `text`; throws nothing: syntax problems come back as `problems`, each with its line. */
export async function parseSource(text: string): Promise<{ source?: Source; problems: FieldError[] }> {
  const { LineCounter, parseDocument } = await loadYaml();
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true, version: '1.2' });
  const lineAt = (offset: number) => lines.linePos(offset).line;
  if (doc.errors.length) {
    return { problems: doc.errors.map((e) => ({ path: '(file)', line: lineAt(e.pos[0]), message: syntaxMessage(e.message) })) };
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (error) {
    // Too many alias expansions (a "billion laughs" file), the one failure left after parsing.
    return { problems: [{ path: '(file)', line: 1, message: syntaxMessage((error as Error).message) }] };
  }
  return {
    problems: [],
    source: {
      value,
      lineOf: (path) => {
        const node = locate(yaml!, doc, path);
        return node?.range ? lineAt(node.range[0]) : undefined;
      },
    },
  };
}

/** The yaml package's message, as one sentence without its position (the line is given apart). */
function syntaxMessage(message: string): string {
  const text = message.replace(/ at line \d+, column \d+.*$/s, '').trim();
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

/**
 * Where a dotted path is: the key of the field it names (`ssoGroupId:`), or a list item itself;
 * for a path that is not in the file (a missing field), the key of its nearest ancestor entry
 * (`notes:`), where that entry begins. A key may hold dots itself (an e-mail address): at each map
 * the longest key that matches the path's next segments is taken.
 */
function locate({ isMap, isPair, isScalar, isSeq }: Yaml, doc: Document, path: string): Node | undefined {
  const isNode = (value: unknown): value is Node => isMap(value) || isSeq(value) || isScalar(value);
  const segments = path.split('.');
  let node: unknown = doc.contents;
  let found: Node | undefined = isNode(node) ? node : undefined;
  for (let i = 0; i < segments.length; ) {
    if (isMap(node)) {
      let pair;
      let taken = 0;
      for (let n = segments.length - i; n >= 1 && !pair; n--) {
        const key = segments.slice(i, i + n).join('.');
        pair = node.items.find((item) => isPair(item) && isScalar(item.key) && String(item.key.value) === key);
        taken = n;
      }
      if (!pair) return found;
      node = pair.value;
      found = isNode(pair.key) ? pair.key : isNode(pair.value) ? pair.value : found;
      i += taken;
    } else if (isSeq(node)) {
      const item = node.items[Number(segments[i])];
      if (!/^\d+$/.test(segments[i]!) || item === undefined) return found;
      node = item;
      if (isNode(item)) found = item;
      i += 1;
    } else {
      return found;
    }
  }
  return found;
}
