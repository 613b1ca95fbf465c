import { EVENT_TYPES } from "@platform/kit/events";

/** The ping POST /webhook-subscriptions/{id}/test sends; always delivered, never subscribed to. */
export const TEST_EVENT_TYPE = "webhook.test";

/** The event kinds a subscription may name, in the order the documentation lists them. */
export const EVENT_CATALOG: readonly string[] = [
  EVENT_TYPES.meetingBooked,
  EVENT_TYPES.meetingRescheduled,
  EVENT_TYPES.meetingCanceled,
  EVENT_TYPES.dealCreated,
  EVENT_TYPES.dealUpdated,
  EVENT_TYPES.qnaCreated,
  EVENT_TYPES.qnaUpdated,
  EVENT_TYPES.insightCreated,
  EVENT_TYPES.insightItemAppended,
];

export const MEETING_EVENT_TYPES: ReadonlySet<string> = new Set([
  EVENT_TYPES.meetingBooked,
  EVENT_TYPES.meetingRescheduled,
  EVENT_TYPES.meetingCanceled,
]);

export type EventsCheck = { ok: true; events: string[] } | { ok: false; reason: string };

/** A subscription's event list: non-empty, every kind in the catalog; duplicates collapse, order kept. */
export function checkEvents(events: readonly string[]): EventsCheck {
  if (events.length === 0) return { ok: false, reason: "events must name at least one event kind." };
  const unknown = events.filter((e) => !EVENT_CATALOG.includes(e));
  if (unknown.length > 0) {
    return { ok: false, reason: `Not in the event catalog: ${[...new Set(unknown)].join(", ")}.` };
  }
  return { ok: true, events: [...new Set(events)] };
}
