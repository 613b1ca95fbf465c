import { type DescEnum, type DescField, type DescMessage, ScalarType } from "@bufbuild/protobuf";
import type { JsonSchema } from "./common.js";

// The JSON Schema of a protobuf message in its canonical JSON form (`toJson` with the default
// options, as events are published): lowerCamelCase names, 64-bit integers as strings, enums by
// name, well-known types as their JSON. Fields at their default value are omitted from that
// form, so no property is required. Used to document the revenue events' payloads.

const LONG = new Set([ScalarType.INT64, ScalarType.UINT64, ScalarType.SINT64, ScalarType.FIXED64, ScalarType.SFIXED64]);

function scalar(type: ScalarType): JsonSchema {
  if (type === ScalarType.BOOL) return { type: "boolean" };
  if (type === ScalarType.STRING) return { type: "string" };
  if (type === ScalarType.BYTES) return { type: "string", contentEncoding: "base64" };
  if (LONG.has(type)) return { type: "string", pattern: "^-?[0-9]+$" };
  if (type === ScalarType.DOUBLE || type === ScalarType.FLOAT) return { type: "number" };
  return { type: "integer" };
}

const enumSchema = (e: DescEnum): JsonSchema => ({ type: "string", enum: e.values.map((v) => v.name) });

/** Well-known types have a JSON form of their own. */
const WELL_KNOWN: Record<string, JsonSchema> = {
  "google.protobuf.Timestamp": { type: "string", format: "date-time" },
  "google.protobuf.Duration": { type: "string", description: "seconds with an s suffix, e.g. 1.5s" },
  "google.protobuf.Struct": { type: "object" },
  "google.protobuf.Value": {},
  "google.protobuf.ListValue": { type: "array" },
  "google.protobuf.FieldMask": { type: "string" },
  "google.protobuf.Empty": { type: "object" },
  "google.protobuf.StringValue": { type: "string" },
  "google.protobuf.BoolValue": { type: "boolean" },
  "google.protobuf.BytesValue": { type: "string", contentEncoding: "base64" },
  "google.protobuf.DoubleValue": { type: "number" },
  "google.protobuf.FloatValue": { type: "number" },
  "google.protobuf.Int32Value": { type: "integer" },
  "google.protobuf.UInt32Value": { type: "integer" },
  "google.protobuf.Int64Value": { type: "string", pattern: "^-?[0-9]+$" },
  "google.protobuf.UInt64Value": { type: "string", pattern: "^[0-9]+$" },
};

function field(f: DescField, seen: ReadonlySet<string>): JsonSchema {
  switch (f.fieldKind) {
    case "scalar":
      return scalar(f.scalar);
    case "enum":
      return enumSchema(f.enum);
    case "message":
      return protoJsonSchema(f.message, seen);
    case "list":
      return {
        type: "array",
        items:
          f.listKind === "scalar"
            ? scalar(f.scalar)
            : f.listKind === "enum"
              ? enumSchema(f.enum)
              : protoJsonSchema(f.message, seen),
      };
    case "map":
      return {
        type: "object",
        additionalProperties:
          f.mapKind === "scalar"
            ? scalar(f.scalar)
            : f.mapKind === "enum"
              ? enumSchema(f.enum)
              : protoJsonSchema(f.message, seen),
      };
  }
}

/** The JSON Schema of `message`'s canonical JSON; a message that contains itself is an open object where it recurs. */
export function protoJsonSchema(message: DescMessage, seen: ReadonlySet<string> = new Set()): JsonSchema {
  const known = WELL_KNOWN[message.typeName];
  if (known) return known;
  if (seen.has(message.typeName)) return { type: "object" };
  const inner = new Set([...seen, message.typeName]);
  return {
    type: "object",
    // Open to fields a later version of the message adds (a closed object would make adding one breaking).
    properties: Object.fromEntries(message.fields.map((f) => [f.jsonName, field(f, inner)])),
  };
}
