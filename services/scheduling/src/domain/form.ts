import { hashRequest } from "@platform/kit/idempotency";
import { problem } from "@platform/kit/problems";
import type { FieldError, FormAnswer, FormField } from "./model.js";

// Absent and blank answers are treated alike: a client that sends "" or [] for a question it
// skipped means "no answer", and a required field must reject both forms the same way.
function isBlank(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (typeof value === "string") return value.trim() === "";
  return Array.isArray(value) && value.length === 0;
}

function describeOptions(options: string[]): string {
  return options.map((o) => JSON.stringify(o)).join(", ");
}

function fieldProblem(field: FormField, value: unknown): string | undefined {
  switch (field.type) {
    case "select":
      if (typeof value !== "string") return "must be a string (one of the options)";
      return field.options.includes(value) ? undefined : `must be one of ${describeOptions(field.options)}`;
    case "multi-select": {
      if (!Array.isArray(value) || !value.every((v) => typeof v === "string")) {
        return "must be an array of strings (options)";
      }
      const unknown = value.find((v) => !field.options.includes(v));
      if (unknown !== undefined) {
        return `contains ${JSON.stringify(unknown)}, which is not one of ${describeOptions(field.options)}`;
      }
      const duplicate = value.find((v, i) => value.indexOf(v) !== i);
      return duplicate === undefined ? undefined : `contains ${JSON.stringify(duplicate)} more than once`;
    }
    case "text":
      return typeof value === "string" ? undefined : "must be a string";
    case "number":
      return typeof value === "number" && Number.isFinite(value) ? undefined : "must be a finite number";
    case "boolean":
      return typeof value === "boolean" ? undefined : "must be a boolean";
  }
}

/**
 * Checks submitted form values against the schedule's matching form. Returns one error per
 * offending key (`field` = the key): fields in form order first, then unknown keys sorted.
 * Blank answers ("", whitespace, []) count as missing: an error when required, otherwise
 * ignored. Returns [] when the values are acceptable.
 */
export function validateFormValues(fields: FormField[], values: Record<string, unknown>): FieldError[] {
  const errors: FieldError[] = [];
  for (const field of fields) {
    // Own properties only, so a key such as "constructor" is never read off the prototype.
    const value = Object.hasOwn(values, field.key) ? values[field.key] : undefined;
    if (isBlank(value)) {
      if (field.required) errors.push({ field: field.key, message: "is required" });
      continue;
    }
    const message = fieldProblem(field, value);
    if (message) errors.push({ field: field.key, message });
  }
  const known = new Set(fields.map((f) => f.key));
  for (const key of Object.keys(values).sort(compareCodeUnits)) {
    if (!known.has(key)) errors.push({ field: key, message: "unknown field" });
  }
  return errors;
}

/** Throws 422 `form-validation` with `fieldErrors` unless `validateFormValues` finds nothing. */
export function assertValidFormValues(fields: FormField[], values: Record<string, unknown>): void {
  const fieldErrors = validateFormValues(fields, values);
  if (fieldErrors.length > 0) {
    throw problem("form-validation", "The form values do not match the schedule's matching form.", { fieldErrors });
  }
}

// Code-unit order, not localeCompare: the canonical form must not depend on the ICU locale.
function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The canonical form of submitted values: keys sorted, `undefined` entries dropped, arrays
 * copied in the order given (the order of a multi-select answer is what the client chose,
 * so two orders are two different submissions).
 */
export function canonicalFormValues(values: Record<string, FormAnswer>): Record<string, FormAnswer> {
  const out: Record<string, FormAnswer> = {};
  for (const key of Object.keys(values).sort(compareCodeUnits)) {
    const value = values[key];
    if (value === undefined) continue;
    out[key] = Array.isArray(value) ? [...value] : value;
  }
  return out;
}

/**
 * The hash a slot token binds the form values with; booking must present values with the
 * same hash. Key order does not matter; multi-select order does.
 */
export function formValuesHash(values: Record<string, FormAnswer>): string {
  return hashRequest(canonicalFormValues(values));
}
