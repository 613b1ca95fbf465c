// The building blocks every context's JSON schemas share, defined once so a timestamp or a
// nullable field reads the same in every part of the OpenAPI document.

/** A JSON Schema (draft 2020-12, as OpenAPI 3.1 takes it), as the routes and the document build them. */
export type JsonSchema = Record<string, unknown>;

/** An RFC 3339 instant (UTC), as every response writes them. */
export const timestamp = { type: "string", format: "date-time" } as const;

/** A field of the given JSON type that is null when unset (always present). */
export const nullable = (type: string, description?: string) =>
  ({ type: [type, "null"], ...(description ? { description } : {}) }) as const;

/** A timestamp that is null when unset. */
export const nullableTimestamp = (description: string) => ({
  type: ["string", "null"],
  format: "date-time",
  description,
});

/** The given schema, null allowed too. */
export const orNull = <T extends Record<string, unknown>>(schema: T) =>
  ({ ...schema, type: [schema.type as string, "null"] }) as const;

/** A string (a query parameter or field), with its description when it has one. */
export const str = (description?: string) => ({ type: "string", ...(description ? { description } : {}) });

/** A resource's sourceRefs: its external references by integration (only `crm` so far), each present when connected. */
export const sourceRefs = (crm: Record<string, unknown>, description?: string) => ({
  type: "object",
  ...(description ? { description } : {}),
  properties: { crm },
  additionalProperties: false,
});

/** The creation and last-change instants most resources carry, in that order. */
export const timestamps = { createdAt: timestamp, updatedAt: timestamp } as const;

/**
 * An object that admits no property but those listed: a request body, of which only the
 * `required` ones must be sent (none when omitted), or, through closedObject, a response
 * object. With its $id and description when given, in the order the document shows them.
 */
export const strictObject = (
  properties: Record<string, unknown>,
  { id, description, required }: { id?: string; description?: string; required?: readonly string[] } = {},
) => ({
  ...(id ? { $id: id } : {}),
  type: "object",
  ...(description ? { description } : {}),
  ...(required ? { required } : {}),
  properties,
  additionalProperties: false,
});

/**
 * A closed response object: every property required (the serializer writes each one, null when
 * unset) and no other; with its $id and description when given.
 */
export const closedObject = (
  properties: Record<string, unknown>,
  { id, description }: { id?: string; description?: string } = {},
) => strictObject(properties, { id, description, required: Object.keys(properties) });
