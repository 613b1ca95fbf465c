import { problem } from "@platform/kit/problems";

const MAX_NAME_LENGTH = 200;

/** A token's human name: trimmed, "token" when empty, at most 200 characters. */
export function tokenName(raw: string): string {
  const name = raw.trim() || "token";
  if (name.length > MAX_NAME_LENGTH) {
    throw problem("invalid-field", `Token name is longer than ${MAX_NAME_LENGTH} characters.`, { field: "name" });
  }
  return name;
}

// The rule lives in the kit: the CLI judges keys by it too.
export { type TokenState, tokenState } from "@platform/kit/api-keys";
