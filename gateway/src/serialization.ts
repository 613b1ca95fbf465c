import fastJsonStringify, { type Schema } from "fast-json-stringify";
import type { FastifySerializerCompiler } from "fastify/types/schema.js";
import type { JsonSchema } from "./schemas/common.js";

type Serializer = (doc: unknown) => string;

/** The ids of the shared schemas a schema names with "$ref": "Id#…", and theirs, transitively. */
function referencedIds(
  schema: unknown,
  shared: ReadonlyMap<string, JsonSchema>,
  into = new Set<string>(),
): Set<string> {
  if (Array.isArray(schema)) {
    for (const item of schema) referencedIds(item, shared, into);
  } else if (schema !== null && typeof schema === "object") {
    for (const [key, value] of Object.entries(schema)) {
      if (key === "$ref" && typeof value === "string") {
        const id = value.slice(0, value.indexOf("#"));
        const target = id === "" ? undefined : shared.get(id);
        if (target && !into.has(id)) {
          into.add(id);
          referencedIds(target, shared, into);
        }
      } else {
        referencedIds(value, shared, into);
      }
    }
  }
  return into;
}

/**
 * Response serializers for routes over the gateway's shared ($id'd) schemas.
 *
 * fastify's default compiler hands fast-json-stringify every shared schema for every route,
 * and fast-json-stringify checks and indexes each of them again per route: that was about half
 * of building the gateway (0.6–1.4 s here). This one hands it only the schemas the route's
 * response reaches, and keeps one serializer per distinct response schema, which the shared
 * schemas (module constants) make valid for every gateway built in the process.
 */
export function sharedSchemaSerializers(shared: readonly JsonSchema[]): FastifySerializerCompiler<JsonSchema> {
  const byId = new Map(shared.map((schema) => [String(schema.$id), schema]));
  const compiled = new Map<string, Serializer>();
  return ({ schema }) => {
    const key = JSON.stringify(schema);
    let serializer = compiled.get(key);
    if (!serializer) {
      const external = Object.fromEntries([...referencedIds(schema, byId)].map((id) => [id, byId.get(id)]));
      serializer = fastJsonStringify(schema as unknown as Schema, {
        schema: external as unknown as Record<string, Schema>,
      }) as Serializer;
      compiled.set(key, serializer);
    }
    return serializer;
  };
}
