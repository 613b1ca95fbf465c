import { open, unlink } from "node:fs/promises";
import { join } from "node:path";
import type { PGlite } from "@electric-sql/pglite";
import { NodeFS } from "@electric-sql/pglite/nodefs";
import type { Db, Queryable } from "./db.js";
import type { Logger } from "./logger.js";

/** Why the embedded database's directory cannot be written. */
export interface DiskFailure {
  path: string;
  /** The system's error code (EPERM, EROFS, ENOSPC, EIO, …). */
  code: string;
  message: string;
}

/**
 * What a statement meets while the data directory cannot be written: SQLSTATE 58030
 * (io_error), which `isDatabaseUnavailable` counts as unavailable, so callers get a retryable
 * 503 at once instead of a 500 or a wait.
 */
export class DiskFailedError extends Error {
  readonly code = "58030";
  constructor(readonly failure: DiskFailure) {
    super(`the data directory cannot be written: ${failure.path}: ${failure.code} (${failure.message})`);
  }
}

// The WASI errno values Emscripten's file system reports, for the failures that mean the disk
// (not the statement) is at fault.
const DISK_ERRNOS = new Map([
  [2, "EACCES"],
  [19, "EDQUOT"],
  [29, "EIO"],
  [51, "ENOSPC"],
  [63, "EPERM"],
  [69, "EROFS"],
]);

interface EmscriptenNodeFs {
  realPath(node: unknown): string;
  stream_ops: { write(stream: { node: unknown }, ...rest: unknown[]): number };
  node_ops: { mknod(parent: unknown, name: string, ...rest: unknown[]): unknown };
}

/**
 * PGlite's Node file system, with its writes watched. A write Postgres cannot make (WAL,
 * data files) is a PANIC for it, and PGlite 0.5's WASM build then spins at 100% CPU without
 * returning (the event loop, SIGTERM and every request with it). So a failed write or file
 * creation in the data directory calls `onFailure` and unwinds out of the engine with a
 * DiskFailedError: the engine cannot continue, and its owner exits (a supervisor restarts it).
 */
export class WatchedNodeFS extends NodeFS {
  readonly #onFailure: (failure: DiskFailure) => void;

  constructor(dataDir: string, onFailure: (failure: DiskFailure) => void) {
    super(dataDir);
    this.#onFailure = onFailure;
  }

  override async init(pg: PGlite, opts: Parameters<NodeFS["init"]>[1]) {
    const { emscriptenOpts } = await super.init(pg, opts);
    const preRun = [...(emscriptenOpts.preRun ?? []), (mod: { NODEFS: EmscriptenNodeFs }) => this.#watch(mod.NODEFS)];
    return { emscriptenOpts: { ...emscriptenOpts, preRun } as typeof emscriptenOpts };
  }

  #watch(nodefs: EmscriptenNodeFs): void {
    const failed = (err: unknown, path: string): never => {
      const code = DISK_ERRNOS.get((err as { errno?: number }).errno ?? -1);
      if (code === undefined) throw err;
      const failure = { path, code, message: `PGlite could not write ${path}` };
      this.#onFailure(failure);
      throw new DiskFailedError(failure);
    };
    const { write } = nodefs.stream_ops;
    nodefs.stream_ops.write = function (stream, ...rest) {
      try {
        return write.call(this, stream, ...rest);
      } catch (err) {
        return failed(err, nodefs.realPath(stream.node));
      }
    };
    const { mknod } = nodefs.node_ops;
    nodefs.node_ops.mknod = function (parent, name, ...rest) {
      try {
        return mknod.call(this, parent, name, ...rest);
      } catch (err) {
        return failed(err, join(nodefs.realPath(parent), name));
      }
    };
  }
}

export interface DataDirHealth {
  /** Why the directory cannot be written now; undefined while it can. */
  failure(): DiskFailure | undefined;
  /** Records a failure seen elsewhere (a write of the engine) at once. */
  report(failure: DiskFailure): void;
  stop(): void;
}

const PROBE_FILE = ".platform-write-check";

/**
 * Writes, flushes and removes a small file in `dir`; rejects with the system's error. No time
 * limit: the engine's synchronous work can hold the event loop for seconds on a busy machine,
 * which a timer cannot tell from a slow disk (a limit of 4 s took a healthy start down).
 */
async function probe(dir: string): Promise<void> {
  const path = join(dir, PROBE_FILE);
  const file = await open(path, "w");
  try {
    await file.write("ok\n");
    await file.datasync();
  } finally {
    await file.close();
  }
  await unlink(path);
}

/**
 * Checks every `intervalMs` that `dir` can be written (a file written, flushed and removed).
 * When it cannot: one error line names the path and the error, and `failure()` says why until
 * a check succeeds again (one line says so too).
 */
export function watchDataDirectory(opts: { dir: string; logger: Logger; intervalMs?: number }): DataDirHealth {
  const intervalMs = opts.intervalMs ?? 1000;
  let current: DiskFailure | undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;

  const report = (failure: DiskFailure) => {
    if (current) return;
    current = failure;
    opts.logger.error(
      { path: failure.path, code: failure.code, error: failure.message },
      `data directory cannot be written: ${failure.path}: ${failure.code}; the API answers 503 until it can`,
    );
  };

  async function check(): Promise<void> {
    try {
      await probe(opts.dir);
      if (current) opts.logger.warn({ path: opts.dir }, "data directory writable again; serving");
      current = undefined;
    } catch (err) {
      const { code = "EUNKNOWN", message = String(err) } = err as { code?: string; message?: string };
      report({ path: join(opts.dir, PROBE_FILE), code, message });
    }
  }

  const loop = () => {
    if (stopped) return;
    timer = setTimeout(() => void check().finally(loop), intervalMs);
    timer.unref();
  };
  loop();
  return {
    failure: () => current,
    report,
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

/** `db`, refusing every statement with a DiskFailedError while `health` reports a failure. */
export function guardedDb(db: Db, health: Pick<DataDirHealth, "failure">): Db {
  const check = () => {
    const failure = health.failure();
    if (failure) throw new DiskFailedError(failure);
  };
  const guard = (q: Queryable): Queryable => ({
    ...q,
    query: async (sql, params) => {
      check();
      return q.query(sql, params);
    },
    exec: async (sql) => {
      check();
      return q.exec(sql);
    },
  });
  return {
    ...guard(db),
    schema: db.schema,
    kind: db.kind,
    lazy: guard(db.lazy),
    tx: async (fn, options) => {
      check();
      return db.tx(fn, options);
    },
    writeOnly: async (fn) => {
      check();
      return db.writeOnly(fn);
    },
    close: () => db.close(),
  };
}
