import {
  build,
  type KnownDays,
  REQUEST_LOGS_SCHEMA,
  recordRequestBatch,
  requestLogsMigrations,
  startRequestLogRetention,
} from "@platform/request-logs/server";
import type { EmbeddedService } from "../embedded-service.js";

/**
 * The request-logs context in the embedded runtime: its routes, the day partitions' upkeep,
 * and the gateway's sink. Here the gateway hands each batch of request summaries to it
 * directly instead of publishing it on the in-process bus (see platform.ts).
 */
export const requestLogsEmbedded: EmbeddedService = {
  name: "requestLogs",
  schema: REQUEST_LOGS_SCHEMA,
  migrations: requestLogsMigrations,
  async start(ctx) {
    const knownDays: KnownDays = new Set();
    const retention = await startRequestLogRetention({ ...ctx, knownDays });
    const recording = { db: ctx.db, clock: ctx.clock, knownDays };
    return {
      routes: build(ctx).routes,
      consumers: [retention],
      requestLogSink: async (batch) => {
        await recordRequestBatch(recording, batch);
      },
    };
  },
};
