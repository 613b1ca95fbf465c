import { isCalendarDate } from "@platform/kit/dates";
// Typed fields, shared by custom fields and 8P fields: a schema names each field's type and
// a value must be of it.

export const FIELD_TYPES = ["string", "number", "boolean", "date", "array", "object"] as const;

export type FieldType = (typeof FIELD_TYPES)[number];

export interface FieldDefinition {
  key: string;
  label: string;
  type: FieldType;
  /** Allowed values of a string field; empty for any. */
  options: string[];
}

/** JSON as the API carries it. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** Why `value` does not fit `field`, or undefined when it does. Null never fits: absence is a missing key. */
export function valueMismatch(field: FieldDefinition, value: JsonValue): string | undefined {
  const expected = `'${field.key}' must be ${field.type === "array" || field.type === "object" ? "an" : "a"} ${field.type}`;
  switch (field.type) {
    case "string":
      if (typeof value !== "string") return expected;
      if (field.options.length > 0 && !field.options.includes(value)) {
        return `'${field.key}' must be one of: ${field.options.join(", ")}`;
      }
      return undefined;
    case "number":
      return typeof value === "number" && Number.isFinite(value) ? undefined : expected;
    case "boolean":
      return typeof value === "boolean" ? undefined : expected;
    case "date":
      return typeof value === "string" && isCalendarDate(value) ? undefined : `'${field.key}' must be an ISO 8601 date`;
    case "array":
      return Array.isArray(value) ? undefined : expected;
    case "object":
      return value !== null && typeof value === "object" && !Array.isArray(value) ? undefined : expected;
  }
}
