import { execFileSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { bannerLines, cliExports, defaultAdminPort } from "../src/banner.js";
import { writeKeysFile } from "../src/keys-file.js";
import { checkPortsFree } from "../src/ports.js";
import { startErrorLine } from "../src/start-errors.js";

// Issue 56, points 1, 3 and 4 on the runtime's side: the banner's CLI settings for the ports
// it is on, ports checked before the data directory, keys on disk private and git-ignored.
// (runtime/test/first-run.test.ts starts real processes on a taken port.)
const ROOT = resolve(import.meta.dirname, "../..");
const tmp = mkdtempSync(join(tmpdir(), "platform-first-hour-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const base = { keysFile: "/d/sandbox-keys.json", seeded: false, dataDir: "/d" };

describe("the start banner", () => {
  it("needs no CLI setting on the default ports, and suggests other ports", () => {
    const lines = bannerLines({
      ...base,
      address: "http://127.0.0.1:8080",
      host: "127.0.0.1",
      port: 8080,
      adminPort: 8081,
    });
    expect(lines.filter((l) => l.trim().startsWith("export "))).toEqual([]);
    expect(lines.find((l) => l.includes("Other ports:"))).toContain("export PLATFORM_URL=http://127.0.0.1:8090");
  });

  it("prints the exact export for the ports it is on, and no 'Other ports' line", () => {
    const lines = bannerLines({
      ...base,
      address: "http://127.0.0.1:31080",
      host: "127.0.0.1",
      port: 31080,
      adminPort: 31081,
    });
    const exports = lines.filter((l) => l.trim().startsWith("export "));
    expect(exports.map((l) => l.trim())).toEqual(["export PLATFORM_URL=http://127.0.0.1:31080"]);
    expect(lines.join("\n")).not.toContain("Other ports");
    expect(lines.join("\n")).not.toContain("8090");
  });

  it("adds PLATFORM_ADMIN_URL only when the admin plane is not on the port after PORT", () => {
    expect(cliExports("127.0.0.1", 8080, 9000)).toEqual([
      "export PLATFORM_URL=http://127.0.0.1:8080",
      "export PLATFORM_ADMIN_URL=http://127.0.0.1:9000",
    ]);
    expect(cliExports("0.0.0.0", 31080, 31081)).toEqual(["export PLATFORM_URL=http://127.0.0.1:31080"]);
    // The admin plane off: nothing to say about it.
    expect(cliExports("127.0.0.1", 31080, undefined)).toEqual(["export PLATFORM_URL=http://127.0.0.1:31080"]);
    expect(defaultAdminPort(8080)).toBe(8081);
    expect(defaultAdminPort(31080)).toBe(31081);
  });
});

describe("ports before the data directory", () => {
  let blocker: Server | undefined;
  afterAll(() => blocker?.close());

  it("rejects a taken port with EADDRINUSE and its port, which reads as one line naming the setting", async () => {
    blocker = createServer();
    await new Promise<void>((r) => blocker?.listen(0, "127.0.0.1", () => r()));
    const taken = (blocker.address() as { port: number }).port;
    const err = await checkPortsFree("127.0.0.1", [
      { setting: "PORT", port: 0 },
      { setting: "ADMIN_PORT", port: taken },
    ]).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "EADDRINUSE", port: taken });
    const line = startErrorLine(err, { HOST: "127.0.0.1", PORT: 1, ADMIN_PORT: taken });
    expect(line).toContain(`Port ${taken} on 127.0.0.1 (ADMIN_PORT) is already in use`);
    // A free port passes, and is free again afterwards.
    await expect(checkPortsFree("127.0.0.1", [{ setting: "PORT", port: 0 }])).resolves.toBeUndefined();
  });
});

describe("keys on disk", () => {
  it("writes the keys file readable by its owner only, narrowing an existing file", () => {
    const file = join(tmp, "sandbox-keys.json");
    writeFileSync(file, "[]", { mode: 0o644 });
    chmodSync(file, 0o644);
    writeKeysFile(file, [{ name: "acme-full", key: "k" }]);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it("ignores every .data* directory the docs suggest, so keys never show in git status", () => {
    const ignored = (path: string) => {
      try {
        execFileSync("git", ["check-ignore", "-q", "--no-index", path], { cwd: ROOT });
        return true;
      } catch {
        return false;
      }
    };
    expect(ignored(".data/sandbox-keys.json")).toBe(true);
    expect(ignored(".data-2/sandbox-keys.json")).toBe(true);
    expect(ignored(".data-demo/pg/base")).toBe(true);
    expect(ignored("docs/data.md")).toBe(false);
  });
});

describe("install scripts", () => {
  const json = (path: string) => JSON.parse(readFileSync(join(ROOT, path), "utf8"));

  it("decides every install script of the tree, keeps telemetry off, and documents each decision", () => {
    const lock = json("package-lock.json") as { packages: Record<string, { hasInstallScript?: boolean }> };
    const pkg = json("package.json") as { allowScripts: Record<string, boolean>; scarfSettings: { enabled: boolean } };
    const withScripts = Object.entries(lock.packages)
      .filter(([path, p]) => p.hasInstallScript && path.startsWith("node_modules/"))
      .map(([path]) => path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length));
    expect(withScripts.length).toBeGreaterThan(0);
    // A new dependency with an install script fails here until it is approved or denied (and documented).
    expect(Object.keys(pkg.allowScripts).sort()).toEqual([...new Set(withScripts)].sort());
    expect(pkg.allowScripts["@scarf/scarf"]).toBe(false);
    expect(pkg.scarfSettings.enabled).toBe(false);
    const doc = readFileSync(join(ROOT, "docs/operations.md"), "utf8");
    for (const name of withScripts) expect(doc).toContain(`| \`${name}\` |`);
  });
});
