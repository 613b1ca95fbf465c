import { trace } from "@opentelemetry/api";
import { type DestinationStream, type Logger, pino } from "pino";

export type { Logger };

/**
 * stdout written asynchronously: a line goes out at once when nothing is being written, and
 * the lines that arrive during a write go out together in the next one, so a busy process
 * makes one write call per batch instead of one per line. What is still buffered when the
 * process exits is flushed synchronously.
 */
let stdout: DestinationStream | undefined;

// One per process, like stdout itself: every logger shares it, so lines never interleave
// mid-line and one exit hook flushes them all.
function stdoutDestination(): DestinationStream {
  if (stdout) return stdout;
  const stream = pino.destination({ dest: 1, sync: false });
  stdout = stream;
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
