import { parseSort } from "@platform/kit/pagination";
import type { JsonSchema } from "./common.js";

/** A list endpoint's sort allowlist and default; its cursors are bound to the effective sort. */
export interface PageSpec {
  sortFields: readonly string[];
  /** The spec's default sort, e.g. "-updatedAt"; undefined when the list has no sort parameter. */
  defaultSort: string | undefined;
  /** Query parameters that filter the list: a value that fails its schema is 400 invalid-filter. */
  filters: readonly string[];
}

const DEFAULT_LIMIT = 25;
const MAX_LIMIT = 100;

/**
 * The query of a list endpoint (the spec's pagination parameters, sort when it has sort
 * fields, and filters) together with its page spec, for the guard to check sort and cursor.
 */
export function pageQuery(
  sortFields: string[],
  defaultSort: string | undefined,
  filters: Record<string, JsonSchema> = {},
): { query: JsonSchema; page: PageSpec } {
  return {
    page: { sortFields, defaultSort, filters: Object.keys(filters) },
    query: {
      type: "object",
      properties: {
        cursor: { type: "string", description: "Opaque cursor from nextCursor; omit for the first page" },
        limit: { type: "integer", description: `Page size; clamped to 1..${MAX_LIMIT}`, default: DEFAULT_LIMIT },
        ...(sortFields.length > 0
          ? {
              sort: {
                type: "string",
                // Typed clients get the allowlist as a union; the guard answers anything else
                // with invalid-sort-field before the schema is checked.
                enum: sortFields.flatMap((f) => [f, `-${f}`]),
                description: `One of ${sortFields.join(", ")}; prefix - for descending (default ${defaultSort})`,
              },
            }
          : {}),
        ...filters,
      },
    },
  };
}

/** The pagination parameters of a list query, as its schema admits them. */
export interface PageQuery {
  cursor?: string;
  limit?: number;
  sort?: string;
}

/** What a list RPC receives: the cursor as sent (the guard verified it), the clamped limit, the normalised sort. */
export interface PageRequest {
  cursor: string;
  limit: number;
  sort: string;
}

/** The page part of a list request whose query passed the guard and the schema of `pageQuery`. */
export function pageRequest(page: PageSpec, query: PageQuery): PageRequest {
  return {
    cursor: query.cursor ?? "",
    limit: Math.min(MAX_LIMIT, Math.max(1, query.limit ?? DEFAULT_LIMIT)),
    sort: page.defaultSort === undefined ? "" : parseSort(query.sort, [...page.sortFields], page.defaultSort).key,
  };
}

/** The response of a list endpoint: one page of items, and the cursor of the next (null on the last). */
export function pageSchema(itemRef: string): JsonSchema {
  return {
    type: "object",
    required: ["items", "nextCursor"],
    properties: {
      items: { type: "array", items: { $ref: `${itemRef}#` } },
      nextCursor: { type: ["string", "null"], description: "Pass as cursor for the next page; null on the last" },
    },
    additionalProperties: false,
  };
}
