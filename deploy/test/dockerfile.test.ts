import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, read, serviceFolders } from "./deployables.js";
import { stages } from "./dockerfile.js";

describe("the Dockerfile", () => {
  it("copies only sources that exist, every workspace package manifest before npm ci, and builds with scripts/build.ts", () => {
    for (const [name, stage] of stages) {
      for (const src of stage.copies) expect(existsSync(join(ROOT, src)), `${name}: COPY ${src}`).toBe(true);
    }
    const deps = stages.get("manifests");
    const workspaces = [
      "libs/contracts",
      "libs/kit",
      "libs/sandbox",
      "gateway",
      ...serviceFolders.map((s) => `services/${s}`),
      "cli",
      "runtime",
    ];
    for (const w of workspaces)
      expect(deps?.copies, `manifests stage copies ${w}/package.json`).toContain(`${w}/package.json`);
    expect(stages.get("build")?.runs.join(" ")).toContain("npm ci");
    expect(stages.get("build")?.runs.join(" ")).toContain("scripts/build.ts");
  });

  it("leaves dev-only files out of the build context", () => {
    const ignored = read(".dockerignore").split("\n");
    for (const entry of ["**/node_modules", "**/test", ".git", ".env"]) expect(ignored).toContain(entry);
    // Only the build script of scripts/ reaches it.
    expect(ignored).toContain("scripts");
    expect(ignored).toContain("!scripts/build.ts");
  });
});
