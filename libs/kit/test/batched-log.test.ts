import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BatchedLog } from "../src/batched-log.js";

const opened: { fd: number; dir: string }[] = [];
function file() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "batched-log-"));
  const name = path.join(dir, "out.log");
  const fd = fs.openSync(name, "a");
  opened.push({ fd, dir });
  return { fd, read: () => fs.readFileSync(name, "utf8") };
}
afterEach(() => {
  for (const { fd, dir } of opened.splice(0)) {
    fs.closeSync(fd);
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
const flushed = (log: BatchedLog) => new Promise<void>((resolve) => log.flush(() => resolve()));

describe("BatchedLog", () => {
  it("holds lines until a batch is full, then writes them in order", async () => {
    const out = file();
    const log = new BatchedLog(out.fd, 100);
    log.write(`${"a".repeat(40)}\n`);
    log.write(`${"b".repeat(40)}\n`);
    await new Promise((r) => setTimeout(r, 20));
    expect(out.read()).toBe("");
    log.write(`${"c".repeat(40)}\n`);
    for (let i = 0; i < 200; i++) log.write(`line ${i}\n`);
    await flushed(log);
    const lines = out.read().split("\n").filter(Boolean);
    expect(lines.slice(0, 3)).toEqual(["a".repeat(40), "b".repeat(40), "c".repeat(40)]);
    expect(lines.slice(3)).toEqual(Array.from({ length: 200 }, (_, i) => `line ${i}`));
  });

  it("flush writes a part batch and calls back once it is written; with nothing waiting at once", async () => {
    const out = file();
    const log = new BatchedLog(out.fd, 4096);
    await flushed(log);
    log.write("ü one\n");
    await flushed(log);
    expect(out.read()).toBe("ü one\n");
  });

  it("flushSync writes what waits, for the exit hook", () => {
    const out = file();
    const log = new BatchedLog(out.fd, 4096);
    log.write("first\n");
    log.write("second\n");
    log.flushSync();
    expect(out.read()).toBe("first\nsecond\n");
  });
});
