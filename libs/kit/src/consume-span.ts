import {
  type Context,
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";
import type { ConsumedMessage } from "./bus.js";
import { tracing } from "./tracing.js";

/**
 * The consume hop of a message in the trace of the request that produced it: a CONSUMER span
 * `process <topic>` whose parent is the message's creation context (its traceparent header),
 * linked to the span of the batch it arrived in (the kafkajs instrumentation's, a trace of its
 * own), as the messaging semantic conventions relate the two. Tracing backends that draw no
 * links (Zipkin) still show the booking → outbox relay → Kafka → consumer path as one trace.
 * Undefined when nothing traces or the message carries no trace context.
 */
export function consumeSpan(
  group: string,
  message: ConsumedMessage,
): { ctx: Context; end(err?: unknown): void } | undefined {
  if (!tracing() || !message.headers.traceparent) return undefined;
  const creation = propagation.extract(ROOT_CONTEXT, message.headers);
  const batch = trace.getSpanContext(context.active());
  const span: Span = trace.getTracer("@platform/kit/kafka").startSpan(
    `process ${message.topic}`,
    {
      kind: SpanKind.CONSUMER,
      attributes: {
        "messaging.system": "kafka",
        "messaging.operation.type": "process",
        "messaging.destination.name": message.topic,
        "messaging.destination.partition.id": String(message.partition),
        "messaging.consumer.group.name": group,
        "messaging.kafka.offset": Number(message.offset),
      },
      links: batch ? [{ context: batch }] : [],
    },
    creation,
  );
  return {
    ctx: trace.setSpan(creation, span),
    end(err?: unknown) {
      if (err)
        span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
      span.end();
    },
  };
}
