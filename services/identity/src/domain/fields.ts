import { problem } from "@platform/kit/problems";

/** Longest free-text value a user or organization field takes (the spec's name limit). */
export const MAX_TEXT_LENGTH = 200;

/**
 * A free-text field value: trimmed, at most 200 characters (else 400 invalid-field naming
 * `field`); an empty value is no value, so it is stored as null.
 */
export function optionalText(raw: string, field: string): string | null {
  const value = raw.trim();
  if (value.length > MAX_TEXT_LENGTH) {
    throw problem("invalid-field", `${field} is longer than ${MAX_TEXT_LENGTH} characters.`, { field });
  }
  return value === "" ? null : value;
}

/** Like `optionalText`, for a field that cannot be empty. */
export function requiredText(raw: string, field: string): string {
  const value = optionalText(raw, field);
  if (value === null) throw problem("invalid-field", `${field} must not be empty.`, { field });
  return value;
}
