import { problem } from "@platform/kit/problems";

// Helpers every route module uses (the route modules themselves are the other files here).

/**
 * The reading of a field every successful answer of the named service carries (proto3 makes
 * message fields optional): its absence is a broken service, an internal error, not a 404.
 */
export function requiredFrom(service: string) {
  return <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`${service} returned no ${what}`);
    return value;
  };
}

/** An optional JSON body: absent is empty; present, it must be an object (its schema checked the properties). */
export function optionalBody<T extends object>(body: unknown): T {
  if (body === undefined || body === null) return {} as T;
  if (typeof body !== "object" || Array.isArray(body))
    throw problem("invalid-field", "The request body must be an object.");
  return body as T;
}
