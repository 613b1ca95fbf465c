import { type SpanContext, trace } from "@opentelemetry/api";
import { type DestinationStream, type Logger, pino } from "pino";
import { BatchedLog } from "./batched-log.js";

export type { Logger };

/** Lines are written in batches of about this many bytes… */
const LOG_BATCH_BYTES = 4096;
/** …or at least this often, so a quiet process's lines still show at once. */
const LOG_FLUSH_MS = 200;

/**
 * stdout written asynchronously and in batches: a write call costs a system call, which on a
 * busy machine costs more than formatting the line, so a busy process makes one per few dozen
 * lines instead of one per line. What is still buffered when the process exits is flushed
 * synchronously. The batching is kit's own (batched-log.ts says why not pino's destination).
 */
let stdout: BatchedLog | undefined;

// One per process, like stdout itself: every logger shares it, so lines never interleave
// mid-line and one exit hook flushes them all.
function stdoutDestination(): BatchedLog {
  if (stdout) return stdout;
  const stream = new BatchedLog(1, LOG_BATCH_BYTES);
  stdout = stream;
  setInterval(() => {
    try {
      stream.flush();
    } catch {
      // Not open yet, or closing: the next tick or the exit hook writes the lines.
    }
  }, LOG_FLUSH_MS).unref();
  process.once("exit", () => {
    try {
      stream.flushSync();
    } catch {
      // Nothing more can be done for a log line while exiting.
    }
  });
  return stream;
}

/** JSON logs to stdout; each line carries the active trace and span ids. */
export function createLogger(
  service: string,
  level = process.env.LOG_LEVEL ?? "info",
  destination?: DestinationStream,
): Logger {
  const options = {
    name: service,
    level,
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    mixin() {
      const span = trace.getActiveSpan();
      if (!span) return {};
      const { traceId, spanId, traceFlags } = span.spanContext();
      return { trace_id: traceId, span_id: spanId, trace_flags: traceFlags };
    },
  };
  const stream = destination ?? stdoutDestination();
  const logger = pino(options, stream);
  // pino's multistream wants each line's level and object beside it; such a stream gets pino's path.
  if ((stream as unknown as Record<symbol, unknown>)[Symbol.for("pino.metadata")] !== true) plainLoggers.add(logger);
  return logger;
}

/** Loggers made by `createLogger`, whose lines `infoLineWriter` knows how to write. */
const plainLoggers = new WeakSet<Logger>();

/** pino's `isoTime`, the same string for every line of one millisecond. */
let lastMs = -1;
let lastTime = "";
function isoTimeOfNow(): string {
  const now = Date.now();
  if (now !== lastMs) {
    lastMs = now;
    lastTime = new Date(now).toISOString();
  }
  return lastTime;
}

/**
 * Writes an info line of `logger` (one `createLogger` made) straight to its stream: the line
 * pino would write, byte for byte, for an object whose JSON members are `fields` (already
 * serialized, e.g. `"status":200,"route":"/x"`) and the message `msg`, with the ids of
 * `spanContext` (by default the active span's, as pino's mixin) where the mixin puts them. Returns false, having written nothing,
 * when the logger is not one this function knows the format of: the caller logs through pino.
 *
 * Why: pino's general path (the mixin, the merge, the object's serialization, a timestamp
 * per line) cost the gateway about 5 µs of its access line per request, as much as the
 * line's batched write (docs/benchmarks/gateway.md, "The gateway near the floor"), and with
 * tracing on, where every request has a span, that path was taken for every line
 * (docs/benchmarks/observability.md).
 */
export function infoLineWriter(
  logger: Logger,
): ((fields: string, msg: string, spanContext?: SpanContext) => boolean) | undefined {
  if (!plainLoggers.has(logger)) return undefined;
  const symbols = pino.symbols;
  const stream = (logger as unknown as Record<symbol, DestinationStream>)[symbols.streamSym];
  if (!stream) return undefined;
  return (fields, msg, spanContext = trace.getActiveSpan()?.spanContext()) => {
    if (!logger.isLevelEnabled("info")) return true;
    // The bindings as pino keeps them serialized (`,"service":…,"name":…`), read per line: a
    // child made later does not change them, but `setBindings` would.
    const bindings = (logger as unknown as Record<symbol, string>)[symbols.chindingsSym] ?? "";
    let ids = "";
    if (spanContext) {
      // Hex ids and a number: nothing to escape.
      const { traceId, spanId, traceFlags } = spanContext;
      ids = `,"trace_id":"${traceId}","span_id":"${spanId}","trace_flags":${traceFlags}`;
    }
    stream.write(
      `{"level":30,"time":"${isoTimeOfNow()}"${bindings}${ids}${fields === "" ? "" : `,${fields}`},"msg":${JSON.stringify(msg)}}\n`,
    );
    return true;
  };
}
