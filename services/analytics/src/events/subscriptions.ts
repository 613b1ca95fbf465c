import { fromJson, type JsonValue } from "@bufbuild/protobuf";
import { EmailEventRecordedSchema } from "@platform/contracts/events/email";
import type { ConsumedMessage, Subscription } from "@platform/kit/bus";
import { type ConsumerDeps, readOrSkip, subscribeGroups } from "@platform/kit/consumer";
import { EVENT_TYPES, TOPICS } from "@platform/kit/events";
import { decodeEvent } from "@platform/kit/outbox";
import { type EmailEvent, emailEventOf } from "../domain/email-event.js";
import { ingestStore } from "../store/ingest.store.js";

// What analytics consumes: the email-sending system's events on platform.email.v1. The
// raw-event table's primary key (the event id) is the de-duplication, shared with the admin
// RPC, so an event that arrives both ways, or twice, is counted once.

export const INGEST_GROUP = "analytics-ingest";

/** The event of a message, undefined for other types; throws on an unreadable one. */
function emailEventOfMessage(message: ConsumedMessage): EmailEvent | undefined {
  const envelope = decodeEvent(message);
  if (envelope.type !== EVENT_TYPES.emailEventRecorded) return undefined;
  const recorded = fromJson(EmailEventRecordedSchema, envelope.data as JsonValue, { ignoreUnknownFields: true });
  // The CloudEvents id is the event id (events.proto); a payload without one takes it.
  if (recorded.eventId === "") recorded.eventId = envelope.id;
  return emailEventOf(recorded);
}

async function ingest(deps: ConsumerDeps, message: ConsumedMessage): Promise<void> {
  // Redelivering an unreadable or invalid event would only block its partition.
  const event = readOrSkip(deps.logger, message, emailEventOfMessage, "unreadable email event skipped");
  if (!event) return;
  // A database failure throws: the message stays uncommitted and comes again.
  await deps.db.tx((q) => ingestStore(q).ingestEvents([event]));
}

/** Subscribes analytics' consumers on `bus`; close the returned subscriptions before the bus. */
export function startAnalyticsConsumers(deps: ConsumerDeps): Promise<Subscription[]> {
  return subscribeGroups(deps.bus, [
    { groupId: INGEST_GROUP, topics: [TOPICS.email], handler: (m) => ingest(deps, m) },
  ]);
}
