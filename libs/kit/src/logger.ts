import { trace } from "@opentelemetry/api";
import { type DestinationStream, type Logger, pino } from "pino";

export type { Logger };

/** Lines are written in batches of about this many bytes… */
const LOG_BATCH_BYTES = 4096;
/** …or at least this often, so a quiet process's lines still show at once. */
const LOG_FLUSH_MS = 200;

/**
 * stdout written asynchronously and in batches: a write call costs a system call, which on a
 * busy machine costs more than formatting the line, so a busy process makes one per few dozen
 * lines instead of one per line. What is still buffered when the process exits is flushed
 * synchronously.
 */
let stdout: DestinationStream | undefined;

// One per process, like stdout itself: every logger shares it, so lines never interleave
// mid-line and one exit hook flushes them all.
function stdoutDestination(): DestinationStream {
  if (stdout) return stdout;
  const stream = pino.destination({ dest: 1, sync: false, minLength: LOG_BATCH_BYTES });
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
  return pino(options, destination ?? stdoutDestination());
}
