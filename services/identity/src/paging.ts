import type { CursorCodec } from "@platform/kit/cursor";
import { type Page, pageOf, type Sort } from "@platform/kit/pagination";
import { pageLimit } from "./domain/listing.js";
import { type Keyed, type PageQuery, type SortKey, toPosition } from "./store/keyset.js";

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
