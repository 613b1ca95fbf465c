import { RequestLogService } from "@platform/contracts/request-logs";
import type { Routes } from "@platform/kit/connect";
import { createCursorCodec } from "@platform/kit/cursor";
import { type MigrationSource, migrationsBeside } from "@platform/kit/migrate";
import type { ServiceDeps } from "@platform/kit/service-runtime";
import { requestLogHandlers } from "./handlers/request-logs.handler.js";
import { requestLogStore } from "./store/request-log.store.js";

export { type KnownDays, recordRequestBatch, recordRequests } from "./application/record.js";
export { purgeRequestLogs, startRequestLogRetention } from "./application/retention.js";
export { REQUEST_LOG_GROUP, startRequestLogConsumers } from "./events/subscriptions.js";

/** The service's schema: every table is `request_logs.<table>`. */
export const REQUEST_LOGS_SCHEMA = "request_logs";

/** The service's own migrations, applied after the kit's (outbox, idempotency). */
export const requestLogsMigrations: MigrationSource = migrationsBeside("request_logs", import.meta.url);

/** The request-logs service's Connect routes, for the gateway (behind the trust interceptor). */
export function build(deps: ServiceDeps): { routes: Routes } {
  const handlers = requestLogHandlers({
    store: requestLogStore(deps.db),
    clock: deps.clock,
    cursors: createCursorCodec(deps.cursorSecret),
  });
  return { routes: (router) => router.service(RequestLogService, handlers) };
}
