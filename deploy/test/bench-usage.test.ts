// npm run bench's command line: a bad flag, number or suite is one line and exit status 2
// before anything starts (scripts/bench-support.ts), never a stack trace or a NaN row.
import { execFile } from "node:child_process";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");

function bench(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      ["--import", "tsx", "scripts/bench.ts", ...args],
      { cwd: ROOT },
      (error, stdout, stderr) => done({ code: error ? (error.code as number | null) : 0, stdout, stderr }),
    );
  });
}

describe.concurrent("npm run bench's command line", () => {
  it("lists every suite under --help", async () => {
    const { code, stdout } = await bench("--help");
    expect(code).toBe(0);
    for (const suite of [
      "analytics",
      "distributed",
      "availability",
      "compression",
      "events",
      "hostile",
      "rpc",
      "ratelimit",
    ]) {
      expect(stdout).toMatch(new RegExp(`^  ${suite} `, "m"));
    }
  });

  // A suite's own flags reach it: its --help comes back with them on the line (a module a suite
  // imports must not parse another suite's flags; the roll suite's --rate was refused once so).
  it.each([
    ["roll", "--rate", "500", "--modes", "roll"],
    ["hostile", "--port", "30100"],
    ["distributed", "--duration", "5"],
  ])("passes --suite %s's own flags to it", async (suite, ...flags) => {
    const { code, stdout, stderr } = await bench("--suite", suite, ...flags, "--help");
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout).toMatch(new RegExp(`--suite ${suite}`));
  });

  it.each([
    [["--suite", "nope"], /^bench: unknown --suite 'nope'; the suites are: analytics, /],
    [["--duration", "x"], /^bench: --duration takes whole numbers of at least 1, not 'x'/],
    [["--connections", "0"], /^bench: --connections takes whole numbers of at least 1, not '0'/],
    [["--bogus"], /^bench: Unknown option '--bogus'/],
  ])("refuses %j with one line and exit status 2", async (args, message) => {
    const { code, stdout, stderr } = await bench(...args);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toMatch(message);
    expect(stderr.trim().split("\n")).toHaveLength(1);
  });
});
