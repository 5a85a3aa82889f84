/**
 * A fetch `Headers` as a plain record, exactly what `Object.fromEntries(headers)` gives in Node
 * (lower-case names, a repeated header's values joined with ", ", the last set-cookie). Not that
 * call itself: the DOM library @xmldom/xmldom's types pull in declares `Headers` without the
 * iterator Node's has.
 */
export function headerRecord(headers: Headers): Record<string, string> {
  const record: Record<string, string> = {};
  headers.forEach((value, name) => {
    record[name] = value;
  });
  return record;
}

const CONNECTION_HEADERS = new Set(['date', 'connection', 'keep-alive']);

/**
 * An answer's own headers as strings, without those that belong to the connection (`date`,
 * `connection`, `keep-alive`), so an answer over the network and one from `inject` compare equal.
 */
export function answerHeaders(headers: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers)
      .filter(([name]) => !CONNECTION_HEADERS.has(name))
      .map(([name, value]) => [name, String(value)]),
  );
}
