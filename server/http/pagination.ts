/**
 * Keyset pagination shared by every admin list (DESIGN §4.2): `limit` 1–200 (default 50), an
 * opaque `cursor`, stable order by (creation time, id). The cursor is the last row's key,
 * base64url-encoded; a tampered cursor is a 400, never a 500.
 */
import { and, eq, gt, lt, or, type SQL } from 'drizzle-orm';
import type { SQLiteColumn } from 'drizzle-orm/sqlite-core';
import { Type } from 'typebox';
import { badRequest } from './problem.js';

export const DEFAULT_LIMIT = 50;

export const listQueryProperties = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: DEFAULT_LIMIT })),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
};

export interface CursorKey {
  t: number;
  id: string;
}

export function encodeCursor(key: CursorKey): string {
  return Buffer.from(JSON.stringify([key.t, key.id])).toString('base64url');
}

export function decodeCursor(cursor: string): CursorKey {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(value) && value.length === 2 && Number.isSafeInteger(value[0]) && typeof value[1] === 'string') {
      return { t: value[0] as number, id: value[1] };
    }
  } catch {
    // fall through
  }
  throw badRequest('invalid_cursor', 'The cursor is not one this server issued.', [
    { path: 'querystring.cursor', message: 'is not a valid cursor' },
  ]);
}

/** `(time, id) > cursor` for keyset pagination; undefined when there is no cursor. */
export function afterCursor(timeColumn: SQLiteColumn, idColumn: SQLiteColumn, cursor?: string): SQL | undefined {
  if (!cursor) return undefined;
  const key = decodeCursor(cursor);
  const at = new Date(key.t);
  return or(gt(timeColumn, at), and(eq(timeColumn, at), gt(idColumn, key.id)));
}

/** `(time, id) < cursor`: the newest-first counterpart of `afterCursor` (for logs). */
export function beforeCursor(timeColumn: SQLiteColumn, idColumn: SQLiteColumn, cursor?: string): SQL | undefined {
  if (!cursor) return undefined;
  const key = decodeCursor(cursor);
  const at = new Date(key.t);
  return or(lt(timeColumn, at), and(eq(timeColumn, at), lt(idColumn, key.id)));
}

/**
 * Given up to `limit + 1` rows in order, returns the page and the cursor for the next one.
 * Fetching one extra row tells whether there is a next page without a count query.
 */
export function toPage<T>(rows: T[], limit: number, keyOf: (row: T) => CursorKey) {
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  const nextCursor = rows.length > limit && last ? encodeCursor(keyOf(last)) : null;
  return { items, nextCursor };
}
