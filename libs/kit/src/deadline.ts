import { AsyncLocalStorage } from "node:async_hooks";
import { Code, ConnectError } from "@connectrpc/connect";

/**
 * The abort signal of the RPC being served (its Connect deadline, or the caller going away),
 * reachable from the code it runs without threading it through every store: the database
 * refuses to start or commit a transaction past it, and calls to other services inherit it.
 */
interface Deadline {
  signal: AbortSignal;
  /** Epoch ms the caller's timeout ends at, when it sent one. */
  at: number | undefined;
}
const current = new AsyncLocalStorage<Deadline>();

/** Runs `fn` with `signal` (and the caller's timeout, when known) as the deadline of everything it starts. */
export function withDeadline<T>(signal: AbortSignal, timeoutMs: number | undefined, fn: () => T): T {
  return current.run({ signal, at: timeoutMs === undefined ? undefined : Date.now() + timeoutMs }, fn);
}

/** The signal of the RPC in progress, if any. */
export function deadlineSignal(): AbortSignal | undefined {
  return current.getStore()?.signal;
}

/** Milliseconds left of the RPC in progress (at least 1), or undefined when it has no timeout. */
export function remainingMs(): number | undefined {
  const at = current.getStore()?.at;
  return at === undefined ? undefined : Math.max(1, at - Date.now());
}

/**
 * Throws DeadlineExceeded when the RPC in progress is past its deadline (or its caller is
 * gone): the caller has already answered its client with a timeout, so committing now would
 * apply a write nobody is told about (the client's retry with its Idempotency-Key then finds
 * no record and applies it once, as it should).
 */
export function checkDeadline(): void {
  if (current.getStore()?.signal.aborted)
    throw new ConnectError("the request's deadline passed", Code.DeadlineExceeded);
}
