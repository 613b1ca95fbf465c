// The sandbox's records are plain data, so the long lists of them live in JSON files beside
// the code that derives from them (esbuild bundles a JSON import; tsx and vitest load it as a
// module). TypeScript infers a JSON module's type from its contents, wider than the
// definitions' (strings for literal unions, `undefined` for a member a row leaves out), so
// each loader states the type its rows have, through this one function; the sandbox's tests
// check the contents.

/** The contents of a sandbox JSON file, as the definition type `T` it is written in. */
export const sandboxData = <T>(json: unknown): T => json as T;
