import type { JsonSchema } from "../schemas/common.js";

/**
 * The query schema of a route with every parameter it does not declare refused (400
 * invalid-filter naming it), as unknown body fields are: `?stag=Won` must not silently list
 * every deal. Routes without query parameters get an empty allowlist.
 */
export function strictQuery(schema: JsonSchema | undefined): JsonSchema {
  return { type: "object", properties: {}, ...schema, additionalProperties: false };
}

/** The parameters a query schema accepts, for the detail of the problem. */
export function acceptedParameters(schema: JsonSchema | undefined): string[] {
  const properties = schema?.properties;
  return properties && typeof properties === "object" ? Object.keys(properties) : [];
}
