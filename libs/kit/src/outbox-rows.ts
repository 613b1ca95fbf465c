import { type BatchObservableResult, type Context, metrics, propagation, ROOT_CONTEXT } from "@opentelemetry/api";
import type { Db } from "./db.js";
import type { EventEnvelope } from "./events.js";

/** An outbox row as the relays read it. */
export interface OutboxRow {
  id: string;
  topic: string;
  key: string;
  type: string;
  source: string;
  subject: string | null;
  time: Date;
  traceparent: string | null;
  data: unknown;
}

export function envelopeOf(r: OutboxRow): EventEnvelope {
  return {
    id: r.id,
    type: r.type,
    source: r.source,
    time: r.time.toISOString(),
    ...(r.subject !== null ? { subject: r.subject } : {}),
    ...(r.traceparent !== null ? { traceparent: r.traceparent } : {}),
    data: r.data,
  };
}

/** Rows grouped by topic, each topic's rows in the order given. */
export function byTopic<R extends OutboxRow>(rows: readonly R[]): Map<string, R[]> {
  const topics = new Map<string, R[]>();
  for (const row of rows) {
    const list = topics.get(row.topic);
    if (list) list.push(row);
    else topics.set(row.topic, [row]);
  }
  return topics;
}

/** Consecutive rows sharing a traceparent (usually one request's events) go out in one publish. */
export function runsOfSameTrace<R extends OutboxRow>(rows: readonly R[]): R[][] {
  const runs: R[][] = [];
  for (const row of rows) {
    const last = runs.at(-1);
    if (last && last[0]?.traceparent === row.traceparent) last.push(row);
    else runs.push([row]);
  }
  return runs;
}

export function traceContextOf(traceparent: string | null): Context {
  return traceparent ? propagation.extract(ROOT_CONTEXT, { traceparent }) : ROOT_CONTEXT;
}

/**
 * Outbox lag as metrics: what is written but not yet published, read when metrics are
 * collected. Returns the function that stops observing.
 */
export function observeOutboxLag(db: Db): () => void {
  const s = db.schema;
  const meter = metrics.getMeter("@platform/kit/outbox");
  const pendingGauge = meter.createObservableGauge("outbox.pending", { description: "Outbox rows not yet published" });
  const lagGauge = meter.createObservableGauge("outbox.lag", {
    description: "Age of the oldest unpublished outbox row",
    unit: "s",
  });
  const observeLag = async (result: BatchObservableResult) => {
    const [row] = await db.query<{ pending: number; lag: number | null }>(
      `SELECT count(*)::int AS pending, EXTRACT(EPOCH FROM now() - min(created_at))::float8 AS lag
       FROM ${s}.outbox WHERE published_at IS NULL`,
    );
    result.observe(pendingGauge, row?.pending ?? 0, { schema: s });
    result.observe(lagGauge, row?.lag ?? 0, { schema: s });
  };
  meter.addBatchObservableCallback(observeLag, [pendingGauge, lagGauge]);
  return () => meter.removeBatchObservableCallback(observeLag, [pendingGauge, lagGauge]);
}
