import type { ConsumedMessage } from "./bus.js";
import { consumeOnce, readOrSkip } from "./consumer.js";
import type { Db, Queryable } from "./db.js";
import type { EventEnvelope } from "./events.js";
import type { Logger } from "./logger.js";
import { decodeEvent } from "./outbox.js";

/**
 * The one shape of a service's event consumer: decode the message and work out what its event
 * calls for (`plan`: nothing, undefined, for events of no interest to this group). A message that
 * cannot be decoded, or whose plan throws, is logged and skipped (readOrSkip): redelivering it
 * would only block its partition. Then `apply` runs in one transaction, once per group and event
 * id (consumeOnce); an error there leaves the message uncommitted, so it comes again.
 */
export async function consumeEvent<P>(
  deps: { db: Db; logger: Logger },
  group: string,
  message: ConsumedMessage,
  plan: (event: EventEnvelope) => P | undefined,
  apply: (q: Queryable, planned: P, event: EventEnvelope) => Promise<void>,
): Promise<void> {
  const read = readOrSkip(deps.logger, message, (m) => {
    const event = decodeEvent(m);
    return { event, planned: plan(event) };
  });
  if (!read?.planned) return;
  const { event, planned } = read;
  await consumeOnce(deps.db, group, event.id, (q) => apply(q, planned, event));
}
