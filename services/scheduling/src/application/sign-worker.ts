import { parentPort } from "node:worker_threads";
import { SLOT_TOKEN_TAIL_BYTES, slotTokenSigner } from "../domain/slot-token.js";
import type { TailJob } from "./signing-pool.js";

// A signing thread of the pool (signing-pool.ts): signs the tails of the hosts it is sent and
// hands the buffers back without copying them.
parentPort?.on("message", ({ id, job }: { id: number; job: TailJob }) => {
  try {
    const signer = slotTokenSigner(job.secret, { ...job.claims, expiresAt: new Date(job.claims.expiresAtMs) });
    const tails = job.hosts.map(({ userId, starts }) => {
      const out = new Uint8Array(starts.length * SLOT_TOKEN_TAIL_BYTES);
      signer.signTails(userId, starts, 0, starts.length, out);
      return out;
    });
    parentPort?.postMessage(
      { id, tails },
      tails.map((t) => t.buffer as ArrayBuffer),
    );
  } catch (err) {
    parentPort?.postMessage({ id, error: err instanceof Error ? err.message : String(err) });
  }
});
