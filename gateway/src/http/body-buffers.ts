import type { ServerResponse } from "node:http";
import type { Http2ServerResponse } from "node:http2";

/** Bodies smaller than this are allocated as usual: reusing them saves nothing measurable. */
const POOLED_FROM_BYTES = 256 * 1024;
/** Pooled buffers are whole MiB, so answers of similar size share them. */
const GRANULE_BYTES = 1024 * 1024;

/**
 * Reused buffers for response bodies of megabytes (availability answers). Each freshly
 * allocated 2 MB Buffer is external memory to V8, and a few of them start a full mark-compact
 * of the gateway's ~40 MB heap: under availability load that was a mark-compact every other
 * request and half of the gateway's CPU (`npm run bench -- --suite availability`;
 * docs/benchmarks/availability.md, "Token parts and reused body buffers").
 * A buffer goes back to the pool when its response has finished, i.e. every byte was handed to
 * the socket; a response closed before that keeps its buffer, which the GC then takes.
 */
export class BodyBuffers {
  private readonly free: Buffer[] = [];
  private freeBytes = 0;

  /** `maxFreeBytes`: what the pool keeps between responses at most. */
  constructor(private readonly maxFreeBytes = 32 * 1024 * 1024) {}

  /** A buffer of exactly `size` bytes for the body of `response`, reused once it has finished. */
  take(size: number, response: ServerResponse | Http2ServerResponse): Buffer {
    if (size < POOLED_FROM_BYTES) return Buffer.allocUnsafe(size);
    let pick = -1;
    for (let i = 0; i < this.free.length; i++) {
      const length = this.free[i]!.length;
      if (length >= size && (pick < 0 || length < this.free[pick]!.length)) pick = i;
    }
    let whole: Buffer;
    if (pick >= 0) {
      whole = this.free.splice(pick, 1)[0]!;
      this.freeBytes -= whole.length;
    } else {
      whole = Buffer.allocUnsafe(Math.ceil(size / GRANULE_BYTES) * GRANULE_BYTES);
    }
    response.once("finish", () => this.give(whole));
    return whole.subarray(0, size);
  }

  private give(whole: Buffer): void {
    if (this.freeBytes + whole.length > this.maxFreeBytes) return;
    this.free.push(whole);
    this.freeBytes += whole.length;
  }
}
