import type { JsonSchema } from "../route.js";

/** The query of a list endpoint: the spec's pagination parameters (sort when it has sort fields) and filters. */
export function pageQuery(sortFields: string[], filters: Record<string, JsonSchema> = {}): JsonSchema {
  return {
    type: "object",
    properties: {
      cursor: { type: "string", description: "Opaque cursor from nextCursor; omit for the first page" },
      limit: { type: "integer", description: "Page size; clamped to 1..100", default: 25 },
      ...(sortFields.length > 0
        ? { sort: { type: "string", description: `One of ${sortFields.join(", ")}; prefix - for descending` } }
        : {}),
      ...filters,
    },
  };
}
