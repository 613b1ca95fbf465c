import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import type { EventLogService, EventSchema } from "@platform/contracts/webhooks";
import { apiContext } from "@platform/kit/connect";
import { createCursorCodec } from "@platform/kit/cursor";
import type { Db } from "@platform/kit/db";
import { findById } from "@platform/kit/ids";
import { keysetPage } from "@platform/kit/keyset";
import { problem } from "@platform/kit/problems";
import { checkEventTypes, checkWindow } from "../domain/event-log.js";
import { EVENT_SORT_KEYS, eventLogStore, type LoggedEvent } from "../store/event-log.store.js";

export interface EventLogDeps {
  db: Db;
  /** PLATFORM_CURSOR_SECRET. */
  cursorSecret: string;
}

const DEFAULT_POLL = 100;
const MAX_POLL = 500;

function eventMessage(e: LoggedEvent): MessageInitShape<typeof EventSchema> {
  return { id: e.id, type: e.type, time: timestampFromDate(e.occurredAt), payloadJson: e.payload };
}

const notFound = (id: string) => problem("event-not-found", `Event ${id} was not found.`);

/** GET /events, GET /events/{id} and the polls behind GET /events/stream, of the caller's org. */
export function eventLogHandlers(deps: EventLogDeps): ServiceImpl<typeof EventLogService> {
  const store = eventLogStore(deps.db);
  const cursors = createCursorCodec(deps.cursorSecret);

  return {
    async listEvents(req, ctx) {
      const { orgId } = apiContext(ctx);
      const types = checkEventTypes(req.types);
      const createdAfter = req.createdAfter ? timestampDate(req.createdAfter) : undefined;
      const createdBefore = req.createdBefore ? timestampDate(req.createdBefore) : undefined;
      checkWindow(createdAfter, createdBefore);
      // Bound to the endpoint and the org as well as the sort: another list's or org's cursor is invalid-cursor.
      const sort = { field: "createdAt", descending: true, key: `events:${orgId}:-createdAt` };
      const page = await keysetPage(cursors, EVENT_SORT_KEYS, sort, req, (query) =>
        store.listLoggedEvents(
          orgId,
          { types, ...(createdAfter ? { createdAfter } : {}), ...(createdBefore ? { createdBefore } : {}) },
          query,
        ),
      );
      return { events: page.items.map(eventMessage), nextCursor: page.nextCursor ?? "" };
    },

    async getEvent(req, ctx) {
      const { orgId } = apiContext(ctx);
      const found = await findById("evt_", req.eventId, "eventId", (id) => store.findLoggedEvent(orgId, id), notFound);
      return { event: eventMessage(found) };
    },

    async pollEvents(req, ctx) {
      const { orgId } = apiContext(ctx);
      const types = checkEventTypes(req.types);
      const limit = req.limit <= 0 ? DEFAULT_POLL : Math.min(MAX_POLL, req.limit);
      // The head first, in its own statement: every event up to it has committed (see the
      // migration), so reading up to it in a later statement skips nothing.
      const head = await store.logHead(orgId);
      let after: number;
      if (req.afterPosition !== undefined) after = Number(req.afterPosition);
      else if (req.afterEventId !== "") {
        const invalid = () =>
          problem(
            "invalid-cursor",
            `Last-Event-ID '${req.afterEventId}' is not an event of this organization's log (events are kept 30 days).`,
          );
        if (!/^evt_[0-9a-z]{24}$/.test(req.afterEventId)) throw invalid();
        const known = await store.findLoggedEvent(orgId, req.afterEventId);
        if (!known) throw invalid();
        after = known.position;
      } else after = head;
      if (after >= head) return { events: [], position: BigInt(Math.max(after, head)), caughtUp: true };
      const events = await store.loggedEventsAfter(orgId, after, head, types, limit);
      const full = events.length === limit;
      // A full page ends at its last event; otherwise every event up to the head was seen (some filtered out).
      const position = full ? (events.at(-1)?.position ?? head) : head;
      return { events: events.map(eventMessage), position: BigInt(position), caughtUp: !full || position === head };
    },
  };
}
