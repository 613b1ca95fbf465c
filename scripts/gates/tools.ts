import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository these scripts belong to (whatever tree a gate reads, its tools come from here). */
export const REPO = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** A tool installed from the npm registry (buf): node_modules/.bin/<name>. */
export const bin = (name: string) => join(REPO, "node_modules", ".bin", name);
