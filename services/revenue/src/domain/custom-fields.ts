import { type FieldDefinition, type JsonValue, valueMismatch } from "./field-values.js";

export type CustomFields = Record<string, JsonValue>;

/**
 * The custom fields after a PATCH: keys of `patch` are set, a null value removes its key,
 * keys the patch does not name are kept (top-level merge, no deep merge).
 */
export function mergeCustomFields(current: CustomFields, patch: CustomFields): CustomFields {
  const merged: CustomFields = { ...current };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  return merged;
}

/** The first reason `fields` does not match the schema's definitions (unknown key or wrong type); undefined when they do. */
export function customFieldsMismatch(
  definitions: readonly FieldDefinition[],
  fields: CustomFields,
): string | undefined {
  for (const [key, value] of Object.entries(fields)) {
    const definition = definitions.find((d) => d.key === key);
    if (!definition) return `customFields has no field '${key}' in the deal's schema`;
    const why = valueMismatch(definition, value);
    if (why) return `customFields ${why}`;
  }
  return undefined;
}
