/** Text output of the admin commands: aligned tables and `key: value` blocks. */

/** Columns padded to their widest cell; the last column is not padded. */
export function formatTable(headers: string[], rows: string[][]): string {
  const widths = headers.map((header, i) => Math.max(header.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

/** `Label:  value` lines, labels aligned; an array value continues on indented lines. */
export function formatFields(fields: [string, string | string[]][]): string {
  const width = Math.max(...fields.map(([label]) => label.length)) + 2;
  const lines: string[] = [];
  for (const [label, value] of fields) {
    const values = Array.isArray(value) ? value : [value];
    lines.push(`${`${label}:`.padEnd(width)}${values[0] ?? ''}`);
    for (const more of values.slice(1)) lines.push(`${' '.repeat(width)}${more}`);
  }
  return lines.join('\n');
}

/** Prints a value as one JSON document (for `--json`). */
export function printJson(value: unknown): void {
  console.log(JSON.stringify(value, null, 2));
}
