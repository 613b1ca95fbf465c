// scripts/node-flags.sh: the node flags every platform process runs with (npm start, npm run
// stack, the events bench, the infrastructure tests; the images' NODE_OPTIONS). Runs on the
// unit suite's node, which CI makes both Node 20 and Node 22.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const FRAME = "--experimental-async-context-frame";

const flagsFor = (node: string) =>
  execFileSync("bash", ["scripts/node-flags.sh", node], { cwd: ROOT, encoding: "utf8" }).trim();

/**
 * Which AsyncLocalStorage a node started with `flags` runs: Node's async_hooks one has a
 * `_propagate` method (called from a hook on every new promise), its context-frame one has none.
 */
const storageUnder = (flags: string[]) =>
  execFileSync(
    process.execPath,
    [
      ...flags,
      "-p",
      'typeof new (require("node:async_hooks").AsyncLocalStorage)()._propagate === "function" ? "async_hooks" : "frame"',
    ],
    { encoding: "utf8" },
  ).trim();

describe("scripts/node-flags.sh", () => {
  it("gives a node the async context frame flag exactly when that node accepts it", () => {
    expect(flagsFor(process.execPath)).toBe(process.allowedNodeEnvironmentFlags.has(FRAME) ? FRAME : "");
  });

  it("starts AsyncLocalStorage without async_hooks on every node that can (Node 22.7 and later)", () => {
    const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
    const canFrame = major > 22 || (major === 22 && minor >= 7);
    const flags = flagsFor(process.execPath).split(" ").filter(Boolean);
    expect(storageUnder(flags)).toBe(canFrame ? "frame" : "async_hooks");
  });

  it("is what the images' NODE_OPTIONS carry on their Node 22 (the Dockerfile's NODE_FLAGS)", () => {
    const dockerfile = readFileSync(join(ROOT, "Dockerfile"), "utf8");
    expect(dockerfile).toMatch(new RegExp(`^ARG NODE_FLAGS=${FRAME}$`, "m"));
    expect(dockerfile).toMatch(/NODE_OPTIONS="--enable-source-maps \$\{NODE_FLAGS\}"/);
    expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:22-/m);
  });

  it("is what npm start gives the embedded runtime's node", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> };
    expect(pkg.scripts["start"]).toMatch(/^node \$\(bash scripts\/node-flags\.sh\) /);
  });
});
