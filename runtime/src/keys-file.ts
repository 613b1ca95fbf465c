import { chmodSync, writeFileSync } from "node:fs";

/**
 * Writes the sandbox keys (live API keys of the sandbox's orgs) readable by the owner only.
 * `mode` applies only when the file is created, so an existing file is narrowed too.
 */
export function writeKeysFile(path: string, keys: unknown): void {
  writeFileSync(path, `${JSON.stringify(keys, null, 2)}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
}
