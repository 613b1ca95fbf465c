import type { CursorCodec } from "./cursor.js";
import { problem } from "./problems.js";

/** `limit` clamps to 1..max (0 becomes 1, 500 becomes max); absent means `def`; non-numeric is 400. */
export function parseLimit(raw: string | undefined, def = 25, max = 100): number {
  if (raw === undefined || raw === "") return def;
  if (!/^-?\d+$/.test(raw)) {
    throw problem("invalid-field", `limit must be an integer between 1 and ${max}`, { field: "limit" });
  }
  return Math.min(max, Math.max(1, Number(raw)));
}

export interface Sort {
  field: string;
  descending: boolean;
  /** The normalised sort (`-updatedAt`), what cursors are bound to. */
  key: string;
}

/** `sort` is a field name, `-` prefixed for descending, from the endpoint's allowlist. */
export function parseSort(raw: string | undefined, allowed: string[], def: string): Sort {
  const value = raw === undefined || raw.trim() === "" ? def : raw.trim();
  const descending = value.startsWith("-");
  const field = descending ? value.slice(1) : value;
  if (!allowed.includes(field)) {
    throw problem("invalid-sort-field", `sort field '${field}' is not one of: ${allowed.join(", ")}`, {
      field,
      allowedSortFields: allowed,
    });
  }
  return { field, descending, key: descending ? `-${field}` : field };
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/**
 * A page from `limit + 1` fetched rows: the extra row only tells that a next page exists;
 * the cursor points after the last returned item.
 */
export function pageOf<T>(
  rows: T[],
  limit: number,
  positionOf: (row: T) => unknown[],
  codec: CursorCodec,
  sort: string,
): Page<T> {
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  return {
    items,
    nextCursor: rows.length > limit && last !== undefined ? codec.encode(sort, positionOf(last)) : null,
  };
}
