import type { ConsumedMessage, Subscription } from "@platform/kit/bus";
import type { Clock } from "@platform/kit/clock";
import { type ConsumerDeps, readOrSkip, subscribeGroups } from "@platform/kit/consumer";
import { EVENT_TYPES, TOPICS } from "@platform/kit/events";
import { decodeEvent } from "@platform/kit/outbox";
import { type KnownDays, recordRequests } from "../application/record.js";
import { recordsOfBatch } from "../domain/logged.js";
import type { RequestLogRecord } from "../domain/request-log.js";

// What request-logs consumes: the gateway's batches of request summaries on
// platform.requestlogs.v1. No processed-events record per message: the table's primary key
// (org, request id, time) is the de-duplication, so a redelivered batch inserts nothing.

export const REQUEST_LOG_GROUP = "request-logs-store";

/** The records of a message, [] for other types; throws on an unreadable one. */
function recordsOfMessage(message: ConsumedMessage): RequestLogRecord[] {
  const envelope = decodeEvent(message);
  if (envelope.type !== EVENT_TYPES.requestsLogged) return [];
  return recordsOfBatch(envelope.data);
}

/** Subscribes request-logs' consumer on `bus`; close the returned subscriptions before the bus. */
export function startRequestLogConsumers(
  deps: ConsumerDeps & { clock: Clock; knownDays?: KnownDays; groupId?: string },
): Promise<Subscription[]> {
  const recording = { db: deps.db, clock: deps.clock, knownDays: deps.knownDays ?? new Set<number>() };
  const store = async (messages: ConsumedMessage[]) => {
    // Redelivering an unreadable message would only block its partition.
    const records = messages.flatMap(
      (m) => readOrSkip(deps.logger, m, recordsOfMessage, "unreadable request log batch skipped") ?? [],
    );
    // A database failure throws: the messages stay uncommitted and come again.
    await recordRequests(recording, records);
  };
  return subscribeGroups(deps.bus, [
    {
      groupId: deps.groupId ?? REQUEST_LOG_GROUP,
      topics: [TOPICS.requestLogs],
      handler: (m) => store([m]),
      // Kafka hands over what it fetched: many batches in one insert when the service catches up.
      batchHandler: store,
    },
  ]);
}
