import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { openPglite, PGLITE_TEMPLATE_ENV } from "../src/db.js";

// A template whose cluster already holds a marker table: a database started from it has the
// table, so the test tells a copy of the template from a fresh initdb.
const dir = mkdtempSync(join(tmpdir(), "kit-template-test-"));
const template = join(dir, "marked.tar");
const suiteTemplate = process.env[PGLITE_TEMPLATE_ENV];

beforeAll(async () => {
  const source = await openPglite();
  await source.exec("CREATE TABLE public.template_marker (n int); INSERT INTO public.template_marker VALUES (7)");
  writeFileSync(template, new Uint8Array(await (await source.dumpDataDir("none")).arrayBuffer()));
  await source.close();
}, 60_000);
afterEach(() => {
  if (suiteTemplate === undefined) delete process.env[PGLITE_TEMPLATE_ENV];
  else process.env[PGLITE_TEMPLATE_ENV] = suiteTemplate;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const marker = async (db: Awaited<ReturnType<typeof openPglite>>) =>
  (await db.query<{ n: number }>("SELECT n FROM public.template_marker")).rows;

describe("openPglite with PGLITE_TEMPLATE", () => {
  it("starts an in-memory database from the template", async () => {
    process.env[PGLITE_TEMPLATE_ENV] = template;
    const db = await openPglite();
    expect(await marker(db)).toEqual([{ n: 7 }]);
    await db.close();
  });

  it("starts a new data directory from it, and opens that directory as it is afterwards", async () => {
    process.env[PGLITE_TEMPLATE_ENV] = template;
    const dataDir = join(dir, "data");
    const first = await openPglite(dataDir);
    await first.exec("INSERT INTO public.template_marker VALUES (8)");
    await first.close();
    // A cluster is there now: it opens with its own rows, not the template's again.
    const again = await openPglite(dataDir);
    expect(await marker(again)).toEqual([{ n: 7 }, { n: 8 }]);
    await again.close();
  }, 60_000);

  it("runs initdb without it", async () => {
    delete process.env[PGLITE_TEMPLATE_ENV];
    const db = await openPglite();
    await expect(marker(db)).rejects.toThrow(/template_marker/);
    await db.close();
  }, 60_000);
});
