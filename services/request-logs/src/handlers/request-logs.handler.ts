import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import type { RequestLogService } from "@platform/contracts/request-logs";
import type { Clock } from "@platform/kit/clock";
import { apiContext } from "@platform/kit/connect";
import type { CursorCodec } from "@platform/kit/cursor";
import { keysetPage } from "@platform/kit/keyset";
import { problem } from "@platform/kit/problems";
import { requestLogFilter, retentionStart } from "../domain/request-log.js";
import { requestLogMessage } from "../messages.js";
import { REQUEST_LOG_SORT_KEYS, type RequestLogStore } from "../store/request-log.store.js";

export interface RequestLogHandlerDeps {
  store: RequestLogStore;
  clock: Clock;
  cursors: CursorCodec;
}

// The list has no sort parameter: its cursors are bound to "" (the gateway binds them to the
// endpoint and the org as well).
const NEWEST_FIRST = { field: "createdAt", descending: true, key: "" };

const notFound = (id: string) => problem("request-log-not-found", `No request '${id}' in the last 7 days.`);

/** GET /request-logs and GET /request-logs/{requestId}, of the caller's own org. */
export function requestLogHandlers(deps: RequestLogHandlerDeps): ServiceImpl<typeof RequestLogService> {
  const { store, clock, cursors } = deps;
  return {
    async listRequestLogs(req, ctx) {
      const { orgId } = apiContext(ctx);
      const filter = requestLogFilter(
        {
          status: req.status,
          statusClass: req.statusClass,
          method: req.method,
          route: req.route,
          problemType: req.problemType,
          keyId: req.keyId,
          ...(req.from ? { from: timestampDate(req.from) } : {}),
          ...(req.to ? { to: timestampDate(req.to) } : {}),
        },
        clock.now(),
      );
      const page = await keysetPage(cursors, REQUEST_LOG_SORT_KEYS, NEWEST_FIRST, req, (query) =>
        store.listRequestLogs(orgId, filter, query),
      );
      return { requestLogs: page.items.map(requestLogMessage), nextCursor: page.nextCursor ?? "" };
    },

    async getRequestLog(req, ctx) {
      const { orgId } = apiContext(ctx);
      // Another org's request is as unknown as one never made.
      const found =
        req.requestId === ""
          ? undefined
          : await store.findRequestLog(orgId, req.requestId, retentionStart(clock.now()));
      if (!found) throw notFound(req.requestId);
      return { requestLog: requestLogMessage(found) };
    },
  };
}
