import { type Timestamp, timestampDate } from "@bufbuild/protobuf/wkt";
import type { Clock } from "@platform/kit/clock";
import type { CursorCodec } from "@platform/kit/cursor";
import { keysetPage } from "@platform/kit/keyset";
import type { Page } from "@platform/kit/pagination";
import { parseSort } from "@platform/kit/pagination";
import { activitySince, activityTypes } from "../domain/activity.js";
import { ACTIVITY_SORT_KEYS, type ActivityRow, type ActivityStore, type TimelineOf } from "../store/activity.store.js";

/** A timeline request as both account and contact activity RPCs carry it. */
export interface TimelineRequest {
  cursor: string;
  limit: number;
  sort: string;
  types: string[];
  since?: Timestamp;
}

/** One page of a contact's or an account's timeline (default sort -occurredAt, 12 months back). */
export function timelinePage(
  deps: { store: ActivityStore; cursors: CursorCodec; clock: Clock },
  orgId: string,
  of: TimelineOf,
  req: TimelineRequest,
): Promise<Page<ActivityRow>> {
  const sort = parseSort(req.sort, Object.keys(ACTIVITY_SORT_KEYS), "-occurredAt");
  const types = activityTypes(req.types);
  const since = activitySince(req.since ? timestampDate(req.since) : undefined, deps.clock.now());
  return keysetPage(deps.cursors, ACTIVITY_SORT_KEYS, sort, req, (page) =>
    deps.store.listActivity(orgId, of, { ...page, types, since }),
  );
}
