import { type RunningService, type ServiceOverrides, startService } from "@platform/kit/service-runtime";
import { startRequestLogRetention } from "./application/retention.js";
import type { RequestLogsConfig } from "./config.js";
import { startRequestLogConsumers } from "./events/subscriptions.js";
import { build, REQUEST_LOGS_SCHEMA, requestLogsMigrations } from "./server.js";

/**
 * Runs the request-logs service: migrates, consumes the gateway's request summaries from the
 * bus, keeps the day partitions (ahead of time, and 7 days back) and serves the gateway API
 * on PORT. Resolves to undefined when MIGRATE_ONLY is set.
 */
export function start(
  config: RequestLogsConfig,
  overrides: ServiceOverrides = {},
): Promise<RunningService | undefined> {
  return startService(
    {
      name: "request-logs",
      schema: REQUEST_LOGS_SCHEMA,
      migrations: requestLogsMigrations,
      async wire(deps) {
        // One record of the partitions made, shared by the housekeeping and the consumer.
        const knownDays = new Set<number>();
        const retention = await startRequestLogRetention({ ...deps, knownDays });
        return {
          routes: build(deps).routes,
          consumers: [
            retention,
            ...(await startRequestLogConsumers({ ...deps, knownDays, groupId: config.REQUEST_LOGS_CONSUMER_GROUP })),
          ],
        };
      },
    },
    config,
    overrides,
  );
}
