import type { JsonSchema } from "../route.js";

/** A list endpoint's sort allowlist and default; its cursors are bound to the effective sort. */
export interface PageSpec {
  sortFields: readonly string[];
  /** The spec's default sort, e.g. "-updatedAt"; undefined when the list has no sort parameter. */
  defaultSort: string | undefined;
}

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
    page: { sortFields, defaultSort },
    query: {
      type: "object",
      properties: {
        cursor: { type: "string", description: "Opaque cursor from nextCursor; omit for the first page" },
        limit: { type: "integer", description: "Page size; clamped to 1..100", default: 25 },
        ...(sortFields.length > 0
          ? {
              sort: {
                type: "string",
                description: `One of ${sortFields.join(", ")}; prefix - for descending (default ${defaultSort})`,
              },
            }
          : {}),
        ...filters,
      },
    },
  };
}
