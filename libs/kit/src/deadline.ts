import { Code, ConnectError } from "@connectrpc/connect";

/**
 * Throws DeadlineExceeded when `signal` (an RPC's: its Connect deadline, or its caller gone)
 * has fired. A write checks it just before it commits: its caller has already answered its
 * client with a timeout, so committing now would apply a write nobody is told about; rolled
 * back instead, the client's retry with the same Idempotency-Key applies it exactly once.
 *
 * The signal is passed explicitly rather than kept in async-local storage: background work a
 * handler sets off (the outbox relay's next round, a worker's nudge) would inherit it and fail
 * forever once the request that started it is over.
 */
export function checkDeadline(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new ConnectError("the request's deadline passed", Code.DeadlineExceeded);
}
