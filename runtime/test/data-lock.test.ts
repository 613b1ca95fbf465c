import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DataDirectoryInUse, LOCK_FILE, lockDataDirectory } from "../src/data-lock.js";
import { startErrorLine } from "../src/start-errors.js";

const dirs: string[] = [];
function dir(): string {
  const d = mkdtempSync(join(tmpdir(), "platform-lock-"));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const deadPid = () => spawnSync(process.execPath, ["-e", ""]).pid as number;

describe("data directory lock", () => {
  it("holds the directory for one holder at a time, until released", () => {
    const d = dir();
    const lock = lockDataDirectory(d);
    expect(JSON.parse(readFileSync(join(d, LOCK_FILE), "utf8"))).toMatchObject({ pid: process.pid, host: hostname() });
    expect(() => lockDataDirectory(d)).toThrow(DataDirectoryInUse);
    expect(() => lockDataDirectory(d)).toThrow(new RegExp(`in use by another platform process \\(pid ${process.pid}`));
    lock.release();
    expect(existsSync(join(d, LOCK_FILE))).toBe(false);
    lockDataDirectory(d).release();
  });

  it("takes over a lock whose process is gone, or that holds no lock at all", () => {
    const d = dir();
    writeFileSync(join(d, LOCK_FILE), JSON.stringify({ pid: deadPid(), host: hostname(), startedAt: "x" }));
    const lock = lockDataDirectory(d);
    expect(JSON.parse(readFileSync(join(d, LOCK_FILE), "utf8")).pid).toBe(process.pid);
    lock.release();
    writeFileSync(join(d, LOCK_FILE), "");
    lockDataDirectory(d).release();
  });

  it("never judges a lock of another host stale, and release leaves another holder's lock alone", () => {
    const d = dir();
    writeFileSync(join(d, LOCK_FILE), JSON.stringify({ pid: deadPid(), host: "elsewhere", startedAt: "x" }));
    expect(() => lockDataDirectory(d)).toThrow(/on elsewhere/);
    rmSync(join(d, LOCK_FILE));
    const lock = lockDataDirectory(d);
    writeFileSync(join(d, LOCK_FILE), JSON.stringify({ pid: 1, host: hostname(), startedAt: "x" }));
    lock.release();
    expect(existsSync(join(d, LOCK_FILE))).toBe(true);
  });
});

describe("start errors", () => {
  const settings = { HOST: "127.0.0.1", PORT: 8080, ADMIN_PORT: 8081 };
  const listenError = (code: string, port: number) => Object.assign(new Error(`listen ${code}`), { code, port });

  it("name the variable to change", () => {
    expect(startErrorLine(listenError("EADDRINUSE", 8080), settings)).toBe(
      "Port 8080 on 127.0.0.1 (PORT) is already in use: set PORT to a free port, e.g. PORT=8090 npm start.",
    );
    expect(startErrorLine(listenError("EADDRINUSE", 8081), settings)).toMatch(
      /^Port 8081 on 127\.0\.0\.1 \(ADMIN_PORT\) is already in use: set ADMIN_PORT .* PLATFORM_ADMIN_URL/,
    );
    expect(startErrorLine(listenError("EACCES", 80), { ...settings, PORT: 80 })).toMatch(/Not allowed .* \(PORT\)/);
  });

  it("leave other failures to their stack trace", () => {
    expect(startErrorLine(new Error("boom"), settings)).toBeUndefined();
    expect(startErrorLine(undefined, settings)).toBeUndefined();
  });
});
