import { WEBHOOK_EVENT_CATALOG, WEBHOOK_TEST_EVENT_TYPE } from "@platform/contracts/webhooks";
import { EVENT_TYPES } from "@platform/kit/events";

/** The ping POST /webhook-subscriptions/{id}/test sends; always delivered, never subscribed to. */
export const TEST_EVENT_TYPE = WEBHOOK_TEST_EVENT_TYPE;

/**
 * The event kinds a subscription may name, in the order the documentation lists them. Defined
 * in the contracts, because the gateway's OpenAPI document lists the same catalog.
 */
export const EVENT_CATALOG: readonly string[] = WEBHOOK_EVENT_CATALOG;

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
