import fs from "node:fs";

/** How long a write that found the pipe full (EAGAIN) waits before it tries again, as sonic-boom waits. */
const BUSY_RETRY_MS = 100;
/** Retries of a synchronous flush at exit that finds the pipe full, 10 ms apart. */
const EXIT_RETRIES = 50;

/**
 * Log lines written to a file descriptor asynchronously, in batches: the lines are kept as they
 * come, and joined and written once `batchBytes` of them are waiting and no write is in flight,
 * or on `flush`; what waits at exit is written by `flushSync`.
 *
 * What pino's own destination (sonic-boom 4) does, for a tenth of the CPU: it measures the
 * UTF-8 length of its whole pending batch again on every line (`Buffer.byteLength` of a string
 * that grows by one line each time) and copies each written batch once more. That cost about
 * 4 µs of CPU a line at 4 KiB batches on this project's VM, and grows with the batch (27 µs at
 * 64 KiB); this costs 0.4 µs (docs/benchmarks/gateway.md, "The gateway near the floor"). The
 * gateway writes a line per request.
 *
 * As with sonic-boom: a full pipe (EAGAIN, a non-blocking stdout) is tried again later, a short
 * write goes on from where it stopped, other failures lose the batch (nothing else can be done
 * with a log line), and nothing bounds what waits while the reader is stuck.
 */
export class BatchedLog {
  readonly #fd: number;
  readonly #batchBytes: number;
  #lines: string[] = [];
  /** Pending characters (UTF-16 units): the batch's size, near enough. */
  #pending = 0;
  #writing = false;
  #waiters: (() => void)[] = [];

  constructor(fd: number, batchBytes: number) {
    this.#fd = fd;
    this.#batchBytes = batchBytes;
  }

  write(line: string): boolean {
    this.#lines.push(line);
    this.#pending += line.length;
    if (!this.#writing && this.#pending >= this.#batchBytes) this.#writeBatch();
    return true;
  }

  /** Writes what waits now; `done` runs once it and everything before it is written. */
  flush(done?: (err?: Error) => void): void {
    if (done) this.#waiters.push(() => done());
    if (!this.#writing) {
      if (this.#pending > 0) this.#writeBatch();
      else this.#settle();
    }
  }

  /** What waits, written synchronously (at exit); a write in flight finishes on its own. */
  flushSync(): void {
    let buffer = this.#take();
    let retries = 0;
    while (buffer.length > 0) {
      try {
        buffer = buffer.subarray(fs.writeSync(this.#fd, buffer));
      } catch (err) {
        if (!busy(err) || retries++ >= EXIT_RETRIES) return;
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
      }
    }
  }

  #take(): Buffer {
    const buffer = Buffer.from(this.#lines.join(""));
    this.#lines = [];
    this.#pending = 0;
    return buffer;
  }

  #writeBatch(): void {
    this.#writing = true;
    this.#send(this.#take());
  }

  #send(buffer: Buffer): void {
    fs.write(this.#fd, buffer, 0, buffer.length, null, (err, written) => {
      if (err) {
        if (busy(err)) {
          setTimeout(() => this.#send(buffer), BUSY_RETRY_MS);
          return;
        }
      } else if (written < buffer.length) {
        this.#send(buffer.subarray(written));
        return;
      }
      this.#writing = false;
      // Lines that came while this batch was written: the next batch now if it is full, or if
      // a flush waits for them.
      if (this.#pending >= this.#batchBytes || (this.#pending > 0 && this.#waiters.length > 0)) this.#writeBatch();
      else if (this.#pending === 0) this.#settle();
    });
  }

  #settle(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const waiter of waiters) waiter();
  }
}

function busy(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return code === "EAGAIN" || code === "EBUSY";
}
