import { isId, seededId } from "@platform/kit/ids";
import { problem } from "@platform/kit/problems";
import { EVENT_CATALOG } from "./catalog.js";

/** How long the event log keeps an event (by when it happened). */
export const EVENT_LOG_RETENTION_DAYS = 30;

const EVENT_ID_PREFIX = "evt_";
// Not a secret: it only makes the derivation below specific to event ids.
const EVENT_ID_LABEL = "platform.webhooks.event-id";

/**
 * The public id of a consumed domain event (`evt_…`): the id its deliveries carry as
 * webhook-id and the event log lists. Producers give events UUIDs (the outbox's, which every
 * consumer de-duplicates on); the public id is derived from it, not drawn, so a redelivered
 * message and every worker agree on it without asking anyone.
 */
export function publicEventId(busEventId: string): string {
  if (isId(EVENT_ID_PREFIX, busEventId)) return busEventId;
  return seededId(EVENT_ID_PREFIX, EVENT_ID_LABEL, busEventId);
}

/** What a list or a stream of the log keeps: kinds, and a half-open time window. */
export interface EventFilter {
  types: string[];
  createdAfter?: Date;
  createdBefore?: Date;
}

/** Checks the kinds a caller filters on: each must be a catalog kind (400 invalid-filter); duplicates collapse. */
export function checkEventTypes(types: readonly string[]): string[] {
  const unknown = types.filter((t) => !EVENT_CATALOG.includes(t));
  if (unknown.length > 0) {
    throw problem(
      "invalid-filter",
      `type '${unknown[0]}' is not an event kind of the catalog (${EVENT_CATALOG.join(", ")}).`,
      { field: "type" },
    );
  }
  return [...new Set(types)];
}

/** An empty window (createdAfter not before createdBefore) is a mistake, not an empty page. */
export function checkWindow(createdAfter: Date | undefined, createdBefore: Date | undefined): void {
  if (createdAfter && createdBefore && createdAfter.getTime() >= createdBefore.getTime()) {
    throw problem("invalid-filter", "createdAfter must be earlier than createdBefore.", { field: "createdAfter" });
  }
}
