import { closeSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";

/** Name of the lock file inside the data directory. */
export const LOCK_FILE = "platform.lock";

/** The data directory is held by another running process; the message is the one line to show. */
export class DataDirectoryInUse extends Error {
  override readonly name = "DataDirectoryInUse";
}

interface LockInfo {
  pid: number;
  host: string;
  startedAt: string;
}

export interface DataLock {
  readonly path: string;
  /** Removes the lock file if it is still ours. */
  release(): void;
}

/** The lock file's text ("" when it vanished) and what it says, when it says it in full. */
function readLock(path: string): { raw: string; info: LockInfo | undefined } {
  let raw: string;
  try {
    raw = readFileSync(path, "utf8");
  } catch {
    return { raw: "", info: undefined };
  }
  try {
    const info = JSON.parse(raw) as Partial<LockInfo>;
    return typeof info.pid === "number" && typeof info.host === "string"
      ? { raw, info: { pid: info.pid, host: info.host, startedAt: String(info.startedAt ?? "") } }
      : { raw, info: undefined };
  } catch {
    return { raw, info: undefined };
  }
}

/** True when a process with this pid runs here (EPERM: it runs, under another user). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

function tryCreate(path: string, info: LockInfo): boolean {
  let fd: number;
  try {
    fd = openSync(path, "wx", 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw err;
  }
  try {
    writeSync(fd, `${JSON.stringify(info)}\n`);
  } finally {
    closeSync(fd);
  }
  return true;
}

/**
 * Claims a data directory for this process: PGlite is single-writer, and two processes on
 * one directory would each see only their own writes and lose one's on restart. The lock
 * is a file created exclusively (O_EXCL) holding pid, host and start time; a lock whose
 * process is gone (a crash, kill -9) is stale and taken over. A lock from another host
 * (a directory on a network share) is never judged stale from here.
 */
export function lockDataDirectory(dataDir: string): DataLock {
  const path = join(dataDir, LOCK_FILE);
  const mine: LockInfo = { pid: process.pid, host: hostname(), startedAt: new Date().toISOString() };
  for (let attempt = 0; attempt < 3; attempt++) {
    if (tryCreate(path, mine)) {
      return {
        path,
        release() {
          try {
            if (readLock(path).info?.pid === mine.pid) rmSync(path, { force: true });
          } catch {
            // A directory that cannot be written keeps the file: the next start finds its
            // process gone and takes the lock over, so stopping must not fail on it.
          }
        },
      };
    }
    const { raw, info: holder } = readLock(path);
    if (holder && (holder.host !== mine.host || running(holder.pid))) {
      const where = holder.host === mine.host ? `pid ${holder.pid}` : `pid ${holder.pid} on ${holder.host}`;
      throw new DataDirectoryInUse(
        `The data directory ${dataDir} is in use by another platform process (${where}, started ${holder.startedAt}): stop it, or set PLATFORM_DATA_DIR to another directory. (If no such process runs, delete ${path}.)`,
      );
    }
    if (!holder && attempt === 0) {
      // Unreadable: perhaps a starter is writing it this instant; look again shortly.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
      continue;
    }
    // Stale (its process is gone). Removed only if unchanged since judged, so a lock another
    // starter wrote in between survives; then the exclusive create decides who holds it.
    if (readLock(path).raw === raw) rmSync(path, { force: true });
  }
  throw new DataDirectoryInUse(`Could not lock the data directory ${dataDir}; another process keeps claiming it.`);
}
