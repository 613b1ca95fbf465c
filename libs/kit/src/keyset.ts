import type { CursorCodec } from "./cursor.js";
import type { Queryable, Row } from "./db.js";
import { type Page, pageOf, type Sort } from "./pagination.js";
import { problem } from "./problems.js";

// Keyset pagination on (sort key, id), shared by every service's list endpoints: the store
// builds the WHERE/ORDER BY with `keyset` (or reads the page with `keysetRows`), the handler
// pages with `keysetPage`.

/** Positional parameters of a query assembled from optional parts. */
export interface Params {
  readonly values: unknown[];
  /** Adds a value and returns its placeholder (`$3`). */
  add(value: unknown): string;
}

export function params(): Params {
  const values: unknown[] = [];
  return {
    values,
    add(value) {
      values.push(value);
      return `$${values.length}`;
    },
  };
}

/** A sort key of a list: its SQL expression, the type its cursor value casts to, and whether it can be NULL. */
export interface SortKey {
  expr: string;
  type: "timestamptz" | "text" | "int";
  nullable: boolean;
}

/** Where a page ended: the sort value of its last row (ISO text for times) and that row's id. */
export type Position = [value: string | number | null, id: string];

/** A listed row with the position a cursor after it points to. */
export interface Keyed<T> {
  item: T;
  position: Position;
}

/** What a store needs to fetch one keyset page. */
export interface PageQuery {
  sort: { key: SortKey; descending: boolean };
  after?: Position;
  /** Rows to fetch: the page size plus one, to tell whether another page follows. */
  limit: number;
}

const DEFAULT_LIMIT = 25;
const MAX_LIMIT = 100;

/** The gateway clamps `limit`; a direct caller's 0 (unset) is the default page size. */
export function pageLimit(limit: number): number {
  if (limit <= 0) return DEFAULT_LIMIT;
  return Math.min(MAX_LIMIT, limit);
}

/** A decoded cursor as a position of `key`; anything else is 400 invalid-cursor. */
export function toPosition(decoded: unknown[], key: SortKey): Position {
  const [value, id] = decoded;
  const invalid = () => problem("invalid-cursor", "The cursor does not point into this list.");
  if (decoded.length !== 2 || typeof id !== "string") throw invalid();
  if (value === null) {
    if (!key.nullable) throw invalid();
    return [null, id];
  }
  const ok =
    key.type === "int"
      ? Number.isInteger(value)
      : typeof value === "string" && (key.type === "text" || !Number.isNaN(Date.parse(value)));
  if (!ok) throw invalid();
  return [value as string | number, id];
}

/** The cursor value of a row's sort key (times as ISO text, which round-trips through JSON). */
export function positionValue(raw: unknown): string | number | null {
  if (raw === null || raw === undefined) return null;
  if (raw instanceof Date) return raw.toISOString();
  return typeof raw === "number" ? raw : String(raw);
}

/**
 * Keyset pagination on (sort key, id), ids breaking ties in the sort's direction. NULL sort
 * values come last in both directions, so a page that ends on a NULL continues among the
 * NULLs by id alone, and one that ends on a value still has every NULL ahead of it.
 */
export function keyset(
  key: SortKey,
  idExpr: string,
  descending: boolean,
  after: Position | undefined,
  p: Params,
): { where: string; orderBy: string } {
  const dir = descending ? "DESC" : "ASC";
  const cmp = descending ? "<" : ">";
  const nulls = key.nullable ? " NULLS LAST" : "";
  const orderBy = `${key.expr} ${dir}${nulls}, ${idExpr} ${dir}`;
  if (!after) return { where: "TRUE", orderBy };
  const [value, id] = after;
  if (value === null) return { where: `(${key.expr} IS NULL AND ${idExpr} ${cmp} ${p.add(id)})`, orderBy };
  const beyond = `(${key.expr}, ${idExpr}) ${cmp} (${p.add(value)}::${key.type}, ${p.add(id)})`;
  return { where: key.nullable ? `(${beyond} OR ${key.expr} IS NULL)` : beyond, orderBy };
}

/** What one keyset page reads: a table (or join), the list's filters and the id that breaks ties. */
export interface KeysetSource {
  /** The columns a row maps from (`d.*`). */
  columns: string;
  /** The FROM clause, naming the aliases the columns, filters and sort keys use. */
  from: string;
  /** The list's filters; their values are already in the query's params. */
  where: readonly string[];
  /** A unique expression: it breaks ties in the sort, and a row's value of it is its position's id. */
  idExpr: string;
}

/** One page of `source`'s rows in `page`'s sort after its position, each mapped and keyed with its position. */
export async function keysetRows<T>(
  q: Queryable,
  source: KeysetSource,
  page: PageQuery,
  p: Params,
  map: (row: Row) => T,
): Promise<Keyed<T>[]> {
  const { key, descending } = page.sort;
  const k = keyset(key, source.idExpr, descending, page.after, p);
  const rows = await q.query(
    `SELECT ${source.columns}, ${key.expr} AS sort_value, ${source.idExpr} AS position_id FROM ${source.from}
      WHERE ${[...source.where, k.where].join(" AND ")} ORDER BY ${k.orderBy} LIMIT ${p.add(page.limit)}`,
    p.values,
  );
  return rows.map((r) => ({ item: map(r), position: [positionValue(r.sort_value), String(r.position_id)] }));
}

/**
 * One page of a list sorted by `sort` (already normalised): the cursor, which the gateway has
 * verified, is decoded into the position to continue after, and the next cursor is minted
 * bound to the same sort.
 */
export async function keysetPage<T>(
  cursors: CursorCodec,
  keys: Record<string, SortKey>,
  sort: Sort,
  request: { cursor: string; limit: number },
  fetch: (query: PageQuery) => Promise<Keyed<T>[]>,
): Promise<Page<T>> {
  const key = keys[sort.field];
  if (!key) throw new Error(`no sort key for '${sort.field}'`);
  const limit = pageLimit(request.limit);
  const rows = await fetch({
    sort: { key, descending: sort.descending },
    ...(request.cursor ? { after: toPosition(cursors.decode(request.cursor, sort.key), key) } : {}),
    limit: limit + 1,
  });
  const page = pageOf(rows, limit, (r) => r.position, cursors, sort.key);
  return { items: page.items.map((r) => r.item), nextCursor: page.nextCursor };
}
