import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import type { SmartScheduleService } from "@platform/contracts/scheduling";
import type { Clock } from "@platform/kit/clock";
import { apiContext } from "@platform/kit/connect";
import type { CursorCodec } from "@platform/kit/cursor";
import { parseId } from "@platform/kit/ids";
import { keysetPage } from "@platform/kit/keyset";
import { parseSort } from "@platform/kit/pagination";
import { problem } from "@platform/kit/problems";
import { bookableSchedule, visibleSchedule } from "../application/booking.js";
import { availabilityQuery, matchHosts } from "../application/matching.js";
import type { SigningPool } from "../application/signing-pool.js";
import type { ScheduleStatus } from "../domain/model.js";
import { hostGroupMessage, scheduleMessage, slotForm } from "../messages.js";
import type { Store } from "../store/index.js";
import { SCHEDULE_SORT_KEYS } from "../store/schedule.store.js";

const SORT_FIELDS = ["updatedAt", "createdAt", "name"];
const DEFAULT_SORT = "-updatedAt";

/** The status filter's values; drafts are never listed. */
const STATUS_FILTERS: Record<string, readonly ScheduleStatus[]> = {
  "": ["active"],
  active: ["active"],
  all: ["active", "disabled"],
};

/** Smart Schedules and their availability, always within the caller's org. */
export function scheduleHandlers(deps: {
  store: Store;
  clock: Clock;
  cursors: CursorCodec;
  slotTokenSecret: string;
  signingPool?: SigningPool | undefined;
}): ServiceImpl<typeof SmartScheduleService> {
  const { store, clock, cursors, slotTokenSecret, signingPool: pool } = deps;
  return {
    async listSmartSchedules(req, ctx) {
      const { orgId } = apiContext(ctx);
      const statuses = Object.hasOwn(STATUS_FILTERS, req.status) ? STATUS_FILTERS[req.status] : undefined;
      if (!statuses) throw problem("invalid-filter", `status filter '${req.status}' is not one of: active, all.`);
      const sort = parseSort(req.sort, SORT_FIELDS, DEFAULT_SORT);
      const page = await keysetPage(cursors, SCHEDULE_SORT_KEYS, sort, req, (query) =>
        store.listSchedules(orgId, { ...query, statuses, name: req.name.trim() }),
      );
      return { schedules: page.items.map((s) => scheduleMessage(s)), nextCursor: page.nextCursor ?? "" };
    },

    async getSmartSchedule(req, ctx) {
      const { orgId } = apiContext(ctx);
      const schedule = await visibleSchedule(store, orgId, parseId("sched_", req.scheduleId, "scheduleId"));
      return { schedule: scheduleMessage(schedule, await store.listAssignees(schedule.id)) };
    },

    async getAvailability(req, ctx) {
      const { orgId } = apiContext(ctx);
      const schedule = await bookableSchedule(store, orgId, parseId("sched_", req.scheduleId, "scheduleId"));
      const query = availabilityQuery(schedule, req);
      const now = clock.now();
      const groups = await matchHosts(store, schedule, query, { orgId, slotTokenSecret, now, pool });
      return {
        hostGroups: groups.map((group) => hostGroupMessage(group, slotForm(req))),
        matchTime: timestampFromDate(now),
      };
    },
  };
}
