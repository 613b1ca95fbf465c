// scripts/release.sh in a scratch clone of this repository: what it refuses, and what a release
// records (releases/baseline.json's shape is read by the mixed-version test: keep it).
import { execFileSync, spawnSync } from "node:child_process";
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import semver from "semver";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrationFiles } from "../../scripts/gates/migration-lint.js";

const ROOT = resolve(import.meta.dirname, "../..");
const scratch = mkdtempSync(join(tmpdir(), "platform-release-"));
const clone = join(scratch, "repo");
const git = (...args: string[]) => execFileSync("git", args, { cwd: clone, encoding: "utf8" }).trim();
const release = (...args: string[]) =>
  spawnSync("bash", ["scripts/release.sh", ...args], { cwd: clone, encoding: "utf8", env: { ...process.env, CI: "" } });
/** A release runs the gates and builds the baselines: slow on a busy machine. */
const SLOW = { timeout: 180_000 };
const readJson = (path: string) => JSON.parse(readFileSync(join(clone, path), "utf8"));

let last: string;
let next: string;

beforeAll(() => {
  execFileSync("git", ["clone", "-q", ROOT, clone]);
  // The clone's tools are this checkout's (no install in a test); git must not see the link.
  symlinkSync(join(ROOT, "node_modules"), join(clone, "node_modules"));
  appendFileSync(join(clone, ".git", "info", "exclude"), "node_modules\n");
  git("config", "user.email", "release-test@example.invalid");
  git("config", "user.name", "release test");
  git("config", "commit.gpgsign", "false");
  git("config", "tag.gpgsign", "false");
  last = existsSync(join(clone, "releases", "baseline.json")) ? readJson("releases/baseline.json").version : "0.0.0";
  // Newer than the last release and than any version CHANGELOG.md already records as
  // unreleased (a deliberate breaking change waits under its version until it is released).
  const recorded = [...readFileSync(join(clone, "CHANGELOG.md"), "utf8").matchAll(/^## \[(\d+\.\d+\.\d+)\]/gm)].map(
    (m) => m[1] ?? "0.0.0",
  );
  next = semver.inc(semver.rsort([last, ...recorded])[0] ?? last, "minor") ?? "";
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("scripts/release.sh", () => {
  it(
    "answers --help, and refuses a bad version, a version not newer than the last, a dirty tree, a missing CHANGELOG section",
    SLOW,
    () => {
      expect(release("--help").stdout).toMatch(/^usage: scripts\/release\.sh VERSION/);
      expect(release().status).toBe(2);
      expect(release("1.0").stderr).toMatch(/'1\.0' is not a semver version/);
      if (last !== "0.0.0")
        expect(release(last).stderr).toMatch(new RegExp(`${last} is not newer than the last release, ${last}`));
      expect(release(next).stderr).toMatch(new RegExp(`CHANGELOG.md has no section for ${next}`));
      writeFileSync(join(clone, "stray.txt"), "x");
      const dirty = release(next);
      expect(dirty.status).toBe(1);
      expect(dirty.stderr).toMatch(/the working tree is not clean/);
      rmSync(join(clone, "stray.txt"));
      expect(git("tag", "--list", `v${next}`)).toBe("");
    },
  );

  it("records the baselines, tags the release commit, and writes releases/baseline.json naming it", SLOW, () => {
    const changelog = readFileSync(join(clone, "CHANGELOG.md"), "utf8");
    writeFileSync(
      join(clone, "CHANGELOG.md"),
      changelog.replace("## [Unreleased]\n", `## [Unreleased]\n\n## [${next}] - 2026-12-07\n\n- A test release.\n`),
    );
    git("commit", "-qam", "changelog");
    const run = release(next);
    expect(run.stderr).not.toMatch(/release: /);
    expect(run.status).toBe(0);

    const tagged = git("rev-parse", `v${next}^{commit}`);
    expect(readJson("releases/baseline.json")).toEqual({ version: next, commit: tagged, tag: `v${next}` });
    expect(tagged).toMatch(/^[0-9a-f]{40}$/);
    expect(git("rev-parse", "HEAD~1")).toBe(tagged);
    expect(git("status", "--porcelain")).toBe("");
    expect(JSON.parse(git("show", `${tagged}:package.json`)).version).toBe(next);
    expect(JSON.parse(git("show", `${tagged}:package-lock.json`)).version).toBe(next);
    expect(readFileSync(join(clone, "releases", "baseline", "openapi.json"), "utf8")).toBe(
      readFileSync(join(clone, "api", "openapi.json"), "utf8"),
    );
    expect(Object.keys(readJson("releases/baseline/migrations.json"))).toEqual(migrationFiles(clone));
    expect(readFileSync(join(clone, "releases", "baseline", "proto.binpb")).length).toBeGreaterThan(1000);
    // Released once: the same version again is not newer.
    expect(release(next).stderr).toMatch(/is not newer than the last release/);
  });
});
