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
}

export interface Subscription {
  close(): Promise<void>;
}

export interface EventBus {
  publish(topic: string, messages: BusMessage[]): Promise<void>;
  subscribe(options: SubscribeOptions): Promise<Subscription>;
  close(): Promise<void>;
}
