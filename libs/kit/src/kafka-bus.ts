import { context, metrics } from "@opentelemetry/api";
import {
  type Admin,
  type IHeaders,
  Kafka,
  type KafkaMessage,
  type LogEntry,
  logLevel,
  Partitioners,
  type Producer,
} from "kafkajs";
import {
  BATCH_LIMIT,
  type BusMessage,
  type ConsumedMessage,
  type EventBus,
  type SubscribeOptions,
  type Subscription,
} from "./bus.js";
import { consumeSpan } from "./consume-span.js";
import "./kafkajs-idle-fix.js";
import { COMMIT_INTERVAL_MS, offsetCommits } from "./kafka-offset-commits.js";
import { setGroupInstanceId } from "./kafkajs-static-membership.js";
import type { Logger } from "./logger.js";
import { type QuietLog, quietLog } from "./quiet-log.js";

export interface KafkaBusOptions {
  brokers: string[];
  clientId: string;
  logger: Logger;
  /**
   * This process's static member id in the groups it consumes in (KAFKA_GROUP_INSTANCE_ID;
   * unique per live process, e.g. the pod's name): a restart after a crash takes the dead
   * member's place at once instead of waiting for its session to time out.
   */
  groupInstanceId?: string;
  /** How often consumers commit handled offsets (COMMIT_INTERVAL_MS by default; kafka-offset-commits.ts). */
  commitIntervalMs?: number;
}

/** How long `subscribe` waits for the group to be joined before returning anyway. */
const JOIN_TIMEOUT_MS = 30_000;
/**
 * How long the group waits for a member that stopped heartbeating (a killed process) before
 * giving its partitions to the others: what a kill -9 costs in delay. A graceful stop leaves
 * the group at once and costs nothing. Brokers refuse less than group.min.session.timeout.ms
 * (6 s by default); handlers that block longer than this would cost a rebalance.
 */
const SESSION_TIMEOUT_MS = 10_000;
/** Heartbeats (sent between messages) often enough that a live member never looks dead. */
const HEARTBEAT_INTERVAL_MS = 1_000;

/**
 * The event bus on Kafka (kafkajs). Connections are opened on first use. A publish to an
 * unreachable broker fails within seconds rather than retrying for minutes, because the
 * outbox relay owns retries: its rows stay unpublished until a publish succeeds.
 */
/** Latest lag per "group\0topic\0partition", observed by the kafka.consumer.lag gauge. */
const consumerLag = new Map<string, number>();
let lagGauge = false;

/** Registers the gauge on first use, so it binds to the meter provider telemetry set up. */
function observeConsumerLag(): void {
  if (lagGauge) return;
  lagGauge = true;
  metrics
    .getMeter("@platform/kit/kafka")
    .createObservableGauge("kafka.consumer.lag", { description: "Messages a consumer group is behind, per partition" })
    .addCallback((result) => {
      for (const [key, lag] of consumerLag) {
        const [group, topic, partition] = key.split("\u0000");
        result.observe(lag, { "messaging.consumer.group.name": group, "messaging.destination.name": topic, partition });
      }
    });
}

export class KafkaBus implements EventBus {
  readonly #kafka: Kafka;
  readonly #logger: Logger;
  readonly #groupInstanceId: string | undefined;
  readonly #commitIntervalMs: number;
  readonly #knownTopics = new Set<string>();
  readonly #subscriptions = new Set<Subscription>();
  #producer: Promise<Producer> | undefined;
  #admin: Promise<Admin> | undefined;

  constructor(options: KafkaBusOptions) {
    this.#logger = options.logger.child({ component: "kafka" });
    this.#groupInstanceId = options.groupInstanceId || undefined;
    this.#commitIntervalMs = options.commitIntervalMs ?? COMMIT_INTERVAL_MS;
    const quiet = quietLog(this.#logger);
    this.#kafka = new Kafka({
      brokers: options.brokers,
      clientId: options.clientId,
      connectionTimeout: 3000,
      requestTimeout: 5000,
      retry: { retries: 2, initialRetryTime: 200, maxRetryTime: 1000 },
      logLevel: logLevel.WARN,
      logCreator: () => (entry) => logEntry(this.#logger, quiet, entry),
    });
  }

  async publish(topic: string, messages: BusMessage[]): Promise<void> {
    if (messages.length === 0) return;
    await this.#ensureTopics([topic]);
    const producer = await this.#connectedProducer();
    try {
      await producer.send({
        topic,
        // All in-sync replicas must have the batch before the outbox marks it published.
        acks: -1,
        messages: messages.map((m) => ({ key: m.key, value: m.value, headers: m.headers })),
      });
    } catch (err) {
      // A fresh connection next time: kafkajs may hold on to sockets of a broker that restarted.
      this.#resetProducer();
      throw err;
    }
  }

  async subscribe(options: SubscribeOptions): Promise<Subscription> {
    await this.#ensureTopics(options.topics);
    setGroupInstanceId(options.groupId, this.#groupInstanceId);
    const consumer = this.#kafka.consumer({
      groupId: options.groupId,
      sessionTimeout: SESSION_TIMEOUT_MS,
      // A rebalance waits this long for the members to rejoin: as long as a dead one is waited for.
      rebalanceTimeout: SESSION_TIMEOUT_MS,
      heartbeatInterval: HEARTBEAT_INTERVAL_MS,
      // A handler that keeps failing must never be skipped: after the retries the consumer
      // restarts from the last committed offset and tries the message again.
      retry: { retries: 5, initialRetryTime: 300, maxRetryTime: 5000, restartOnFailure: async () => true },
    });
    observeConsumerLag();
    // Consumer lag as kafkajs reports it after every batch: messages between the batch's last
    // offset and the partition's high watermark, per group, topic and partition.
    consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
      consumerLag.set(`${options.groupId}\u0000${payload.topic}\u0000${payload.partition}`, Number(payload.offsetLag));
    });
    const joined = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), JOIN_TIMEOUT_MS);
      consumer.on(consumer.events.GROUP_JOIN, () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
    const commits = offsetCommits(
      (err) => this.#logger.debug({ err, groupId: options.groupId }, "offset commit failed"),
      this.#commitIntervalMs,
    );
    // kafkajs commits before it rejoins only with its auto commit on: this is that commit.
    // Best effort: the handled messages it misses are delivered again and skipped by event id.
    consumer.on(consumer.events.REBALANCING, () => {
      commits.flush().catch((err: unknown) => this.#logger.debug({ err }, "offset commit before rebalance failed"));
    });
    let closing = false;
    try {
      await consumer.connect();
      await consumer.subscribe({ topics: options.topics, fromBeginning: options.fromBeginning ?? false });
      // Offsets are resolved only for messages whose handler resolved, and committed on a
      // cadence (kafka-offset-commits.ts), not by kafkajs after every batch.
      const { batchHandler, handler } = options;
      await consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        eachBatch: async (payload) => {
          const { batch, resolveOffset, heartbeat, isRunning, isStale } = payload;
          // Stopping, or the partition went to another member in a rebalance.
          const goOn = () => isRunning() && !isStale();
          try {
            if (batchHandler) {
              for (let from = 0; from < batch.messages.length && goOn(); from += BATCH_LIMIT) {
                const slice = batch.messages
                  .slice(from, from + BATCH_LIMIT)
                  .map((m) => consumed(batch.topic, batch.partition, m));
                // Handled together: each message's consume span ends with its batch.
                const spans = slice.map((m) => consumeSpan(options.groupId, m));
                try {
                  await batchHandler(slice);
                } catch (err) {
                  for (const span of spans) span?.end(err);
                  throw err;
                }
                for (const span of spans) span?.end();
                const last = slice.at(-1);
                if (last) resolveOffset(last.offset);
                await heartbeat();
              }
            } else {
              for (const message of batch.messages) {
                if (!goOn()) break;
                const m = consumed(batch.topic, batch.partition, message);
                const span = consumeSpan(options.groupId, m);
                try {
                  await (span ? context.with(span.ctx, () => handler(m)) : handler(m));
                } catch (err) {
                  span?.end(err);
                  throw err;
                }
                span?.end();
                resolveOffset(message.offset);
                await heartbeat();
              }
            }
          } catch (err) {
            // What was handled before the failure is kept; the failed message comes again.
            await commits.flush(payload).catch(() => {});
            throw err;
          }
          await (closing || !isRunning() ? commits.flush(payload) : commits.handled(payload));
        },
      });
    } catch (err) {
      commits.stop();
      await consumer.disconnect().catch(() => {});
      throw err;
    }
    const subscription: Subscription = {
      close: async () => {
        this.#subscriptions.delete(subscription);
        // A batch that ends from now on commits itself; what earlier ones handled goes now.
        closing = true;
        await commits.flush().catch((err: unknown) => this.#logger.warn({ err }, "offset commit on close failed"));
        await consumer.disconnect();
        commits.stop();
      },
    };
    this.#subscriptions.add(subscription);
    // Without this, a message published right after subscribe could predate the group's start offset.
    if (!(await joined)) {
      this.#logger.warn({ groupId: options.groupId }, "consumer has not joined its group yet; continuing");
    }
    return subscription;
  }

  async close(): Promise<void> {
    const subscriptions = [...this.#subscriptions];
    const producer = this.#producer;
    const admin = this.#admin;
    this.#producer = undefined;
    this.#admin = undefined;
    await Promise.allSettled([
      ...subscriptions.map((sub) => sub.close()),
      producer?.then((p) => p.disconnect()),
      admin?.then((a) => a.disconnect()),
    ]);
  }

  #connectedProducer(): Promise<Producer> {
    if (!this.#producer) {
      // Not the idempotent producer: it wants unbounded retries, which would hang the relay
      // during an outage. One request in flight keeps a batch in order across retries;
      // duplicates after a failed ack are handled by consumers de-duplicating on event id.
      const producer = this.#kafka.producer({
        maxInFlightRequests: 1,
        createPartitioner: Partitioners.DefaultPartitioner,
      });
      this.#producer = producer.connect().then(
        () => producer,
        (err: unknown) => {
          this.#producer = undefined;
          throw err;
        },
      );
    }
    return this.#producer;
  }

  #resetProducer(): void {
    const stale = this.#producer;
    this.#producer = undefined;
    void stale?.then((p) => p.disconnect()).catch(() => {});
  }

  async #ensureTopics(topics: string[]): Promise<void> {
    const missing = topics.filter((t) => !this.#knownTopics.has(t));
    if (missing.length === 0) return;
    if (!this.#admin) {
      const admin = this.#kafka.admin();
      this.#admin = admin.connect().then(
        () => admin,
        (err: unknown) => {
          this.#admin = undefined;
          throw err;
        },
      );
    }
    const admin = await this.#admin;
    try {
      // Resolves false (no error) when the topics already exist; partitions follow the broker default.
      await admin.createTopics({ topics: missing.map((topic) => ({ topic })), waitForLeaders: false });
      // Waited for here, not by kafkajs: on a KRaft broker a topic just created (by this process
      // or another starting beside it) can be unknown to the broker's metadata for a moment, and
      // kafkajs's own wait retries only "no leader", so a new cluster's first start failed with
      // "This server does not host this topic-partition" (tulios/kafkajs#1563, #815). Its wait
      // is skipped, too, when another process created the topic first.
      await leadersElected(admin, missing);
    } catch (err) {
      const stale = this.#admin;
      this.#admin = undefined;
      void stale?.then((a) => a.disconnect()).catch(() => {});
      throw err;
    }
    for (const t of missing) this.#knownTopics.add(t);
  }
}

/** How long a topic another process just created may take to get leaders (a new cluster on a busy machine). */
const LEADER_WAIT_MS = 30_000;

/** Resolves once every partition of `topics` has a leader; throws after LEADER_WAIT_MS. */
export async function leadersElected(admin: Admin, topics: string[]): Promise<void> {
  const deadline = Date.now() + LEADER_WAIT_MS;
  for (;;) {
    let lastError: unknown;
    try {
      const { topics: found } = await admin.fetchTopicMetadata({ topics });
      const ready = (name: string) => {
        const partitions = found.find((t) => t.name === name)?.partitions ?? [];
        return partitions.length > 0 && partitions.every((p) => p.leader >= 0);
      };
      if (topics.every(ready)) return;
    } catch (err) {
      // Unknown to this broker's metadata yet: retried like a partition without a leader.
      lastError = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`Kafka: no leader for every partition of ${topics.join(", ")} after ${LEADER_WAIT_MS / 1000} s`, {
        cause: lastError,
      });
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function consumed(topic: string, partition: number, message: KafkaMessage): ConsumedMessage {
  return {
    topic,
    partition,
    offset: message.offset,
    key: message.key?.toString("utf8") ?? "",
    value: message.value ?? Buffer.alloc(0),
    headers: decodeHeaders(message.headers),
  };
}

function decodeHeaders(headers: IHeaders | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, raw] of Object.entries(headers ?? {})) {
    const value = Array.isArray(raw) ? raw[0] : raw;
    if (value !== undefined) out[name] = value.toString();
  }
  return out;
}

// Each failed connection attempt is logged by these, many times per outage; the caller
// already reports the failure it gets (the relay once per outage), so they stay at debug.
const CONNECTION_NAMESPACES = new Set(["Connection", "BrokerPool"]);

// While the broker is down a consumer crashes and restarts every few seconds, each time
// with the same warnings and errors: those repeat once a minute, with their count.
function logEntry(logger: Logger, quiet: QuietLog, { namespace, level, log }: LogEntry): void {
  const { message, timestamp: _timestamp, ...extra } = log;
  const fields = { namespace, ...extra };
  if (CONNECTION_NAMESPACES.has(namespace)) logger.debug(fields, message);
  else if (level === logLevel.ERROR || level === logLevel.WARN) {
    quiet.failure(`kafka:${namespace}:${message}`, fields, message, level === logLevel.ERROR ? "error" : "warn");
  } else logger.debug(fields, message);
}
