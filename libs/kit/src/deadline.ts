import { AsyncLocalStorage } from "node:async_hooks";
import { Code, ConnectError, type Interceptor, type Transport } from "@connectrpc/connect";

/**
 * Deadlines of the RPC being served, kept in async-local storage so that what a handler does
 * inherits them without passing them along: its database queries stop once the call is past
 * its deadline (`checkCallDeadline`, called by libs/kit/src/db.ts before each query), its
 * transactions get a `statement_timeout` of what remains (`callTimeLeftMs`), and its own
 * calls to other services carry what remains of it as their deadline (`inheritDeadline`).
 *
 * Work a handler sets off and leaves running (the outbox relay's next round, a worker's
 * nudge) must not inherit a deadline that fires once the request is over: the entry is closed
 * when the handler returns, and long-lived background loops start `outsideCall`.
 */
interface CallDeadline {
  /** Epoch milliseconds of the deadline; Infinity when the caller set none. */
  readonly at: number;
  /** Whether the handler's signal has fired: at the deadline or when the caller went away. */
  readonly over: boolean;
  /** False once the handler returned. */
  open: boolean;
}

/**
 * Set by kit's lean server (unary-handler.ts) on a call's request and handler context: whether
 * the call's AbortSignal has fired, or would have, answered without making it. That server
 * makes a call's signal (a controller, a deadline timer, a close listener) only when something
 * reads it, and the check before every query would otherwise read it on every call.
 */
export const SIGNAL_FIRED = Symbol("signal fired");

/** Something that carries a call's signal: a handler context or a request. */
export interface SignalHolder {
  readonly signal: AbortSignal;
  readonly [SIGNAL_FIRED]?: () => boolean;
}

/** Whether `holder`'s signal has fired, read without making it where that is possible. */
export function signalFired(holder: SignalHolder): boolean {
  const probe = holder[SIGNAL_FIRED];
  return probe ? probe() : holder.signal.aborted;
}

const calls = new AsyncLocalStorage<CallDeadline>();

/**
 * One call's entry. A class, so `over` is one getter on its prototype: written as a getter in
 * an object literal it was a new closure per call, and an accessor no other object has gives
 * each entry a V8 map of its own in the old generation, which kept the call's request alive
 * until a mark-compact (see SIGNAL_ACCESSOR in unary-handler.ts).
 */
class CallEntry implements CallDeadline {
  open = true;

  constructor(
    readonly at: number,
    private readonly req: SignalHolder,
  ) {}

  /** Asked before every query: the lean server answers without making the call's AbortSignal. */
  get over(): boolean {
    return signalFired(this.req);
  }
}

/** The error of work stopped past its call's deadline: the gateway answers it 504 upstream-timeout. */
export function deadlineExceeded(): ConnectError {
  return new ConnectError("the request's deadline passed", Code.DeadlineExceeded);
}

/**
 * Throws DeadlineExceeded when the signal of `of` (an RPC's handler context or signal: its
 * Connect deadline, or its caller gone) has fired. A write checks it just before it commits:
 * its caller has already answered its client with a timeout, so committing now would apply a
 * write nobody is told about; rolled back instead, the client's retry with the same
 * Idempotency-Key applies it exactly once.
 */
export function checkDeadline(of: AbortSignal | SignalHolder | undefined): void {
  if (of === undefined) return;
  if (of instanceof AbortSignal ? of.aborted : signalFired(of)) throw deadlineExceeded();
}

/**
 * Throws DeadlineExceeded when the RPC being served is past its deadline or its caller is
 * gone; a no-op outside an RPC. On the hot path of every query: one storage lookup.
 */
export function checkCallDeadline(): void {
  const call = calls.getStore();
  if (call?.open && call.over) throw deadlineExceeded();
}

/**
 * Whole milliseconds left until the deadline of the RPC being served (at least 1; throws
 * DeadlineExceeded when none are left), or undefined outside an RPC or without a deadline.
 */
export function callTimeLeftMs(): number | undefined {
  const call = calls.getStore();
  if (!call?.open || call.at === Number.POSITIVE_INFINITY) return undefined;
  const left = call.at - Date.now();
  if (left <= 0 || call.over) throw deadlineExceeded();
  return left;
}

/** Runs `fn` (and whatever it sets off) outside any RPC's deadline: for background loops. */
export function outsideCall<T>(fn: () => T): T {
  return calls.exit(fn);
}

const GRPC_TIMEOUT_UNIT_MS: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 1e-3, n: 1e-6 };

/** The timeout the caller sent: Connect's `connect-timeout-ms`, or gRPC's `grpc-timeout`. */
function timeoutOf(header: Headers): number | undefined {
  const connect = header.get("connect-timeout-ms");
  if (connect !== null) return /^\d{1,10}$/.test(connect) ? Number(connect) : undefined;
  const grpc = header.get("grpc-timeout");
  const m = grpc === null ? null : /^(\d{1,8})([HMSmun])$/.exec(grpc);
  return m ? Number(m[1]) * (GRPC_TIMEOUT_UNIT_MS[m[2] as string] as number) : undefined;
}

/**
 * Server side (every kit Connect server has it): runs the handler with its deadline in
 * async-local storage. Without a timeout from the caller the call still has an entry, so an
 * in-process callee never inherits its in-process caller's, and its caller going away stops it.
 */
export function deadlineInterceptor(): Interceptor {
  return (next) => async (req) => {
    const ms = timeoutOf(req.header);
    const call = new CallEntry(ms === undefined ? Number.POSITIVE_INFINITY : Math.floor(Date.now() + ms), req);
    try {
      return await calls.run(call, () => next(req));
    } finally {
      call.open = false;
    }
  };
}

/**
 * Client side: a call made while serving an RPC gets what remains of that RPC's deadline,
 * capped by its own timeout (the call's `timeoutMs`, else `defaultTimeoutMs`); past the
 * deadline it is not made at all. Connect sends the result in its timeout header, so the
 * callee stops at the same moment its caller gives up, and so on down the chain.
 */
export function inheritDeadline(transport: Transport, defaultTimeoutMs?: number): Transport {
  const bound = (timeoutMs: number | undefined): number | undefined => {
    const left = callTimeLeftMs();
    if (left === undefined) return timeoutMs;
    // Connect's own reading: undefined is the transport's default, 0 or less is none.
    const own = timeoutMs === undefined ? defaultTimeoutMs : timeoutMs <= 0 ? undefined : timeoutMs;
    return own === undefined ? left : Math.min(own, left);
  };
  // Rejected rather than thrown: a transport reports every failure through its promise.
  const withBound = <R>(timeoutMs: number | undefined, go: (t: number | undefined) => Promise<R>): Promise<R> => {
    let t: number | undefined;
    try {
      t = bound(timeoutMs);
    } catch (err) {
      return Promise.reject(err);
    }
    return go(t);
  };
  return {
    unary: (method, signal, timeoutMs, header, input, contextValues) =>
      withBound(timeoutMs, (t) => transport.unary(method, signal, t, header, input, contextValues)),
    stream: (method, signal, timeoutMs, header, input, contextValues) =>
      withBound(timeoutMs, (t) => transport.stream(method, signal, t, header, input, contextValues)),
  };
}
