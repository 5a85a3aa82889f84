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
