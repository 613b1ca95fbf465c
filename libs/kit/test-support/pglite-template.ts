import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openPglite, PGLITE_TEMPLATE_ENV } from "../src/db.js";

/**
 * vitest globalSetup: runs initdb once per test run and hands the cluster to every worker
 * through PGLITE_TEMPLATE (workers inherit this process's environment), so each of the suite's
 * embedded databases starts from a copy instead of its own initdb.
 */
export async function setup(): Promise<() => void> {
  if (process.env[PGLITE_TEMPLATE_ENV]) return () => {};
  const dir = mkdtempSync(join(tmpdir(), "pglite-template-"));
  const instance = await openPglite();
  const tarball = await instance.dumpDataDir("none");
  await instance.close();
  const file = join(dir, "pgdata.tar");
  writeFileSync(file, new Uint8Array(await tarball.arrayBuffer()));
  process.env[PGLITE_TEMPLATE_ENV] = file;
  return () => {
    delete process.env[PGLITE_TEMPLATE_ENV];
    rmSync(dir, { recursive: true, force: true });
  };
}
