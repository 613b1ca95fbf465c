// What the request-side mappings of several contexts share.

/**
 * The named fields of a request body, each only when the body has it: they pass to the RPC as
 * they are, and an absent one stays unset there (a PATCH leaves it unchanged, a create takes
 * the service's default).
 */
export function bodyFields<T extends object, K extends keyof T>(body: T, ...keys: K[]): Partial<Pick<T, K>> {
  return Object.fromEntries(keys.filter((k) => body[k] !== undefined).map((k) => [k, body[k]])) as Partial<Pick<T, K>>;
}
