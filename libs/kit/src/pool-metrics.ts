import { metrics } from "@opentelemetry/api";
import type pg from "pg";

/**
 * Database pool saturation, whether or not spans are made (the pg instrumentation's own
 * db.client.connection.* series exist only while tracing is on): per pool, the connections
 * in use, the pool's size and the requests waiting for a connection. Saturation is
 * used / max near 1 with waiting > 0. Labels: the schema (one per service) and the pool
 * (main, or lazy for single bookkeeping statements): bounded.
 */
const pools = new Map<pg.Pool, { schema: string; pool: string; max: number }>();
let registered = false;

export function observePool(pool: pg.Pool, labels: { schema: string; pool: string; max: number }): void {
  pools.set(pool, labels);
  if (registered) return;
  // Registered on first use, so it binds to the meter provider telemetry set up before.
  registered = true;
  const meter = metrics.getMeter("@platform/kit/db");
  const used = meter.createObservableGauge("db.pool.connections.used", {
    description: "Connections handed out by the pool",
  });
  const max = meter.createObservableGauge("db.pool.connections.max", { description: "The pool's size" });
  const waiting = meter.createObservableGauge("db.pool.requests.waiting", {
    description: "Queries waiting for a free connection",
  });
  meter.addBatchObservableCallback(
    (result) => {
      for (const [p, l] of pools) {
        // An ended pool (its Db was closed) is gone for good.
        if ((p as pg.Pool & { ended?: boolean }).ended) {
          pools.delete(p);
          continue;
        }
        const attrs = { "db.schema": l.schema, pool: l.pool };
        result.observe(used, p.totalCount - p.idleCount, attrs);
        result.observe(max, l.max, attrs);
        result.observe(waiting, p.waitingCount, attrs);
      }
    },
    [used, max, waiting],
  );
}
