import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT } from "./deployables.js";

// scripts/observability.sh without starting anything: its usage, and the scrape-target files
// Prometheus reads (in a state dir of the test's own).
const dir = mkdtempSync(join(tmpdir(), "obs-script-"));
const run = (...args: string[]) =>
  spawnSync("bash", ["scripts/observability.sh", ...args], {
    cwd: ROOT,
    encoding: "utf8",
    env: { ...process.env, OBSERVABILITY_DIR: dir, ZIPKIN_PORT: "1", PROMETHEUS_PORT: "2" },
  });
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("scripts/observability.sh", () => {
  it("prints its usage with the settings in force, and refuses an unknown command", () => {
    const help = run("--help");
    expect(help.status).toBe(0);
    expect(help.stdout).toContain("ZIPKIN_PORT");
    expect(help.stdout).toContain("now 1)");
    expect(help.stdout).toContain("PROMETHEUS_SCRAPE_INTERVAL");
    const wrong = run("launch");
    expect(wrong.status).toBe(2);
    expect(wrong.stderr).toContain("Usage:");
  });

  it("says nothing runs when its pid files name nothing", () => {
    const status = run("status");
    expect(status.status).toBe(1);
    expect(status.stdout).toContain("zipkin: not running");
    expect(status.stdout).toContain("prometheus: not running");
  });

  it("writes a file_sd target file per name, labelled with each process as its job, and removes it", () => {
    expect(run("targets", "t1", "gateway=9460", "webhooks-delivery=9467").status).toBe(0);
    const file = join(run("targets-dir").stdout.trim(), "t1.json");
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual([
      { targets: ["127.0.0.1:9460"], labels: { job: "gateway", source: "t1" } },
      { targets: ["127.0.0.1:9467"], labels: { job: "webhooks-delivery", source: "t1" } },
    ]);
    const bad = run("targets", "t1", "gateway:9460");
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain("not process=port");
    expect(run("targets", "../escape", "gateway=1").status).toBe(1);
    expect(run("targets", "t1").status).toBe(0);
    expect(existsSync(file)).toBe(false);
  });
});
