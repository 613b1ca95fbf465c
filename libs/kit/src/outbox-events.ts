import { create, type DescMessage, type MessageInitShape, toJson } from "@bufbuild/protobuf";
import type { OutboxEvent } from "./outbox.js";

/**
 * The one shape of a service's outbox rows (its src/events/outbox-events.ts): `source`'s events
 * on `topic`. Each is an event of `type` whose data is `init` as a `schema` message, stored in
 * its JSON form; `key` partitions it (one key's events stay in order), `subject` is what it is
 * about and `time` when it happened.
 */
export function outboxEventsOf(source: string, topic: string) {
  return <S extends DescMessage>(
    type: string,
    schema: S,
    init: MessageInitShape<S>,
    row: { key: string; subject: string; time: Date },
  ): OutboxEvent => ({ topic, type, source, ...row, data: toJson(schema, create(schema, init)) });
}
