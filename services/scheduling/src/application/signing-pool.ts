import { extname } from "node:path";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import type { SlotTokenClaims } from "../domain/slot-token.js";

/** What one signing thread signs: the tails of some hosts' slots of one answer. */
export interface TailJob {
  secret: string;
  claims: Omit<SlotTokenClaims, "expiresAt"> & { expiresAtMs: number };
  hosts: { userId: string; starts: Float64Array }[];
}

/**
 * Threads that sign slot-token tails, so that a large answer's ten thousand HMACs neither hold
 * scheduling's event loop nor wait for one another: two answers in flight are signed on two
 * cores, and one answer's hosts are split between the threads.
 */
export interface SigningPool {
  readonly size: number;
  /** Each host's tails (`SLOT_TOKEN_TAIL_BYTES` a slot), in the job's order. */
  signTails(job: TailJob): Promise<Uint8Array[]>;
  close(): Promise<void>;
}

// The worker beside this module: sign-worker.js beside the bundle (scripts/build.ts builds it
// as an entry of its own); in the sources, sign-worker.ts loaded through tsx's loader, which a
// worker does not inherit from its parent.
const fromSources = extname(fileURLToPath(import.meta.url)) === ".ts";
const startWorker = () =>
  fromSources
    ? new Worker(
        `import("tsx/esm/api").then(({ register }) => { register(); return import(${JSON.stringify(
          new URL("./sign-worker.ts", import.meta.url).href,
        )}); });`,
        { eval: true },
      )
    : new Worker(new URL("./sign-worker.js", import.meta.url));

interface Pending {
  resolve: (tails: Uint8Array[]) => void;
  reject: (err: Error) => void;
}

/**
 * `size` threads, started with the first job (a process that never serves a large answer, or
 * only migrates, starts none). A thread that exits, whatever the cause, fails the jobs then
 * pending (the caller signs those on its own loop) and leaves the pool.
 */
export function signingPool(size: number): SigningPool {
  const pending = new Map<number, Pending>();
  let nextId = 0;
  let turn = 0;
  let closed = false;
  let threads: Worker[] | undefined;
  const start = () => {
    const worker = startWorker();
    worker.unref();
    worker.on("message", (m: { id: number; tails?: Uint8Array[]; error?: string }) => {
      const p = pending.get(m.id);
      if (!p) return;
      pending.delete(m.id);
      if (m.tails) p.resolve(m.tails);
      else p.reject(new Error(`slot token signing failed: ${m.error}`));
    });
    // Without a listener a worker's error would be thrown in this thread; 'exit' follows it.
    worker.on("error", () => {});
    worker.on("exit", () => {
      const at = threads?.indexOf(worker) ?? -1;
      if (at >= 0) threads?.splice(at, 1);
      const failed = new Error("a slot token signing thread exited");
      for (const p of pending.values()) p.reject(failed);
      pending.clear();
    });
    return worker;
  };
  return {
    get size() {
      return closed ? 0 : (threads?.length ?? size);
    },
    signTails(job) {
      if (!closed) threads ??= Array.from({ length: size }, start);
      const worker = closed ? undefined : threads?.[turn++ % Math.max(1, threads.length)];
      if (!worker) return Promise.reject(new Error("no slot token signing thread is running"));
      const id = nextId++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        worker.postMessage(
          { id, job },
          job.hosts.map((h) => h.starts.buffer as ArrayBuffer),
        );
      });
    },
    async close() {
      closed = true;
      await Promise.all((threads ?? []).map((t) => t.terminate()));
    },
  };
}
