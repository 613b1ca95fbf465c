/**
 * The event bus behind one interface: Kafka in the distributed runtime, an in-process
 * bus in the embedded one. Messages follow the CloudEvents Kafka binary mode: the event's
 * attributes travel as headers (`ce_id`, `ce_type`, …), the data as the value.
 */
export interface BusMessage {
  /** Partition key (usually the org id), so one org's events stay in order. */
  key: string;
  value: Buffer;
  headers: Record<string, string>;
}

export interface ConsumedMessage extends BusMessage {
  topic: string;
  partition: number;
  offset: string;
}

export interface SubscribeOptions {
  /** Consumers with the same group id share the work; each group sees every message. */
  groupId: string;
  topics: string[];
  /** Start at the earliest retained message when the group has no committed offset. */
  fromBeginning?: boolean;
  /** A handler that throws leaves the message uncommitted, so it is delivered again. */
  handler: (message: ConsumedMessage) => Promise<void>;
  /**
   * Optional: the messages the bus has at hand for one partition, in order, at once (Kafka:
   * each fetched batch, in slices of at most BATCH_LIMIT), so a consumer that falls behind
   * catches up at a fraction of the cost per message (one transaction for many). A throw leaves
   * the whole slice uncommitted. Buses without batches (the in-process one) call `handler`.
   */
  batchHandler?: (messages: ConsumedMessage[]) => Promise<void>;
}

/** The most messages a batchHandler gets at once: one transaction's worth. */
export const BATCH_LIMIT = 200;

export interface Subscription {
  close(): Promise<void>;
}

export interface EventBus {
  publish(topic: string, messages: BusMessage[]): Promise<void>;
  subscribe(options: SubscribeOptions): Promise<Subscription>;
  close(): Promise<void>;
}
