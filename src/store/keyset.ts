// Keyset paging for the listings: the opaque cursor (where the last page ended, in the
// listing's order) and the SQL that resumes after it. Rows are ordered by a timestamp and a
// unique key, so a page starts where the last ended even while rows are added or deleted.
import { sql, type Expression, type RawBuilder, type SqlBool } from 'kysely';
import { errors } from '../errors.js';

export type SortOrder = 'asc' | 'desc';

/** Where a page ended: the last row's timestamp (UTC, microseconds, as text) and its key. */
export interface Position {
  at: string;
  key: number | string;
}

/** The listing a cursor was issued for: a cursor is refused by a listing in another order. */
export interface Ordering {
  sort: string;
  order: SortOrder;
}

const VERSION = 1;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}$/;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

export function encodeCursor(ordering: Ordering, position: Position): string {
  const payload = { v: VERSION, s: ordering.sort, o: ordering.order, t: position.at, k: position.key };
  return Buffer.from(JSON.stringify(payload)).toString('base64url');
}

const badCursor = (msg: string) => errors.validation(['cursor'], msg, 'value_error');

function isKey(k: unknown): k is number | string {
  return (typeof k === 'number' && Number.isSafeInteger(k) && k > 0) || (typeof k === 'string' && k.length > 0 && k.length <= 255);
}

/** The position of a cursor issued for `ordering`; a 422 for anything else. */
export function decodeCursor(cursor: string, ordering: Ordering): Position {
  let payload: unknown;
  try {
    if (!BASE64URL.test(cursor)) throw new Error('not base64url');
    payload = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw badCursor('Cursor is not one this listing issued');
  }
  const p = payload as Record<string, unknown> | null;
  if (typeof p !== 'object' || p === null || p.v !== VERSION || typeof p.t !== 'string' || !TIMESTAMP.test(p.t) || !isKey(p.k)) {
    throw badCursor('Cursor is not one this listing issued');
  }
  if (p.s !== ordering.sort || p.o !== ordering.order) {
    throw badCursor(`Cursor was issued for sort=${String(p.s)}&order=${String(p.o)}; start again without a cursor to list in another order`);
  }
  return { at: p.t, key: p.k };
}

/** The timestamp column as a cursor keeps it: UTC with all six fractional digits. */
export function positionText(column: Expression<Date>): RawBuilder<string> {
  return sql<string>`to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US')`;
}

/** Rows after `position` in the listing's order of (timestamp, key). */
export function after(column: Expression<Date>, key: Expression<unknown>, order: SortOrder, position: Position): RawBuilder<SqlBool> {
  const comparison = sql.raw(order === 'desc' ? '<' : '>');
  const keyValue = typeof position.key === 'number' ? sql`${position.key}::bigint` : sql`${position.key}::text`;
  return sql<SqlBool>`((${column}, ${key}) ${comparison} ((${position.at}::timestamp AT TIME ZONE 'UTC'), ${keyValue}))`;
}

/** The rows of one page and the cursor of the next (null on the last), from a query that fetched one row more than `limit`. */
export function pageOf<R>(rows: R[], limit: number, ordering: Ordering, positionOf: (row: R) => Position): { rows: R[]; next: string | null } {
  if (rows.length <= limit) return { rows, next: null };
  const page = rows.slice(0, limit);
  return { rows: page, next: encodeCursor(ordering, positionOf(page[page.length - 1])) };
}
