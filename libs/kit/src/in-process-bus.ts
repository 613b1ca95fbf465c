import type { BusMessage, ConsumedMessage, EventBus, SubscribeOptions, Subscription } from "./bus.js";
import type { Logger } from "./logger.js";

/** A published message with its place in the bus-wide order, so groups see topics interleaved as published. */
interface Entry {
  seq: number;
  message: ConsumedMessage;
}

interface Member {
  topics: Set<string>;
  handler: SubscribeOptions["handler"];
}

interface Group {
  /** Next index to deliver per topic; kept after members leave, like committed offsets. */
  offsets: Map<string, number>;
  members: Set<Member>;
  pumping: boolean;
  /** The handler call in progress, so closing waits for it. */
  inFlight: Promise<unknown> | undefined;
  failures: number;
}

/** A `deliver` call waiting for the groups that were subscribed to its topic when it published. */
interface Delivery {
  /** Handled once each group's offset on the topic reached this. */
  end: number;
  groups: Group[];
  resolve: () => void;
  reject: (err: Error) => void;
}

export interface InProcessBusOptions {
  logger?: Logger;
  /** First retry delay after a handler throws; doubles up to `maxRetryMs`. */
  retryMs?: number;
  maxRetryMs?: number;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * The embedded runtime's event bus: each topic is an in-memory append-only log (one
 * partition), each consumer group keeps its own offset per topic. A group's handlers run
 * one message at a time in publish order; a handler that throws gets the same message again
 * after a backoff, so nothing is skipped. The logs live in memory only: what must survive a
 * crash is published with `deliver`, whose caller (the embedded outbox relay) keeps its outbox
 * rows unpublished until every group has handled them, and delivers them again after a restart.
 */
export class InProcessBus implements EventBus {
  readonly #logs = new Map<string, Entry[]>();
  readonly #groups = new Map<string, Group>();
  readonly #idleWaiters = new Set<() => void>();
  /** Per topic, the `deliver` calls not yet handled by all their groups, in publish order. */
  readonly #deliveries = new Map<string, Delivery[]>();
  readonly #logger: Logger | undefined;
  readonly #retryMs: number;
  readonly #maxRetryMs: number;
  #seq = 0;
  #closed = false;

  constructor(options: InProcessBusOptions = {}) {
    this.#logger = options.logger;
    this.#retryMs = options.retryMs ?? 10;
    this.#maxRetryMs = options.maxRetryMs ?? 1000;
  }

  async publish(topic: string, messages: BusMessage[]): Promise<void> {
    if (this.#closed) throw new Error("bus is closed");
    const log = this.#log(topic);
    for (const m of messages) {
      log.push({
        seq: this.#seq++,
        message: {
          topic,
          partition: 0,
          offset: String(log.length),
          key: m.key,
          value: Buffer.from(m.value),
          headers: { ...m.headers },
        },
      });
    }
    for (const group of this.#groups.values()) {
      if ([...group.members].some((m) => m.topics.has(topic))) this.#schedule(group);
    }
  }

  /**
   * Publishes, and resolves once every group that has a member on `topic` now has handled these
   * messages (a handler that throws gets them again, so this waits for its success). Rejects
   * when the bus closes first. Groups joining later still see them (they are in the log), but
   * are not waited for.
   */
  async deliver(topic: string, messages: BusMessage[]): Promise<void> {
    // publish appends synchronously: `end` is where these messages end, whatever comes next.
    const published = this.publish(topic, messages);
    const end = this.#log(topic).length;
    const groups = [...this.#groups.values()].filter((g) => this.#membersOf(g, topic).length > 0);
    await published;
    if (groups.every((g) => (g.offsets.get(topic) ?? 0) >= end)) return;
    await new Promise<void>((resolve, reject) => {
      const waiting = this.#deliveries.get(topic) ?? [];
      waiting.push({ end, groups, resolve, reject });
      this.#deliveries.set(topic, waiting);
    });
  }

  async subscribe(options: SubscribeOptions): Promise<Subscription> {
    if (this.#closed) throw new Error("bus is closed");
    let group = this.#groups.get(options.groupId);
    if (!group) {
      group = { offsets: new Map(), members: new Set(), pumping: false, inFlight: undefined, failures: 0 };
      this.#groups.set(options.groupId, group);
    }
    for (const topic of options.topics) {
      if (!group.offsets.has(topic)) group.offsets.set(topic, options.fromBeginning ? 0 : this.#log(topic).length);
    }
    const member: Member = { topics: new Set(options.topics), handler: options.handler };
    group.members.add(member);
    this.#schedule(group);
    const joined = group;
    return {
      close: async () => {
        joined.members.delete(member);
        await joined.inFlight?.catch(() => {});
        this.#settleIdle();
      },
    };
  }

  /** Resolves once every group with a member has handled every message of its topics. */
  idle(): Promise<void> {
    if (this.#isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.add(resolve));
  }

  async close(): Promise<void> {
    this.#closed = true;
    const inFlight = [...this.#groups.values()].map((g) => g.inFlight?.catch(() => {}));
    for (const g of this.#groups.values()) g.members.clear();
    await Promise.all(inFlight);
    for (const waiting of this.#deliveries.values()) {
      for (const d of waiting) d.reject(new Error("bus closed before the messages were handled"));
    }
    this.#deliveries.clear();
    this.#settleIdle();
  }

  #log(topic: string): Entry[] {
    let log = this.#logs.get(topic);
    if (!log) {
      log = [];
      this.#logs.set(topic, log);
    }
    return log;
  }

  #schedule(group: Group): void {
    if (group.pumping) return;
    group.pumping = true;
    // Delivery is asynchronous: publish returns before any handler runs.
    setImmediate(() => void this.#pump(group));
  }

  /** The group's oldest undelivered message over its members' topics, and who handles it. */
  #next(group: Group): { entry: Entry; member: Member } | undefined {
    if (this.#closed) return undefined;
    let best: { entry: Entry; topic: string } | undefined;
    for (const [topic, offset] of group.offsets) {
      const entry = this.#logs.get(topic)?.[offset];
      if (entry && (!best || entry.seq < best.entry.seq) && this.#membersOf(group, topic).length > 0) {
        best = { entry, topic };
      }
    }
    if (!best) return undefined;
    const members = this.#membersOf(group, best.topic);
    // One key always goes to the same member (like a partition), while the membership is stable.
    const member = members[hash(best.entry.message.key) % members.length]!;
    return { entry: best.entry, member };
  }

  #membersOf(group: Group, topic: string): Member[] {
    return [...group.members].filter((m) => m.topics.has(topic));
  }

  async #pump(group: Group): Promise<void> {
    try {
      for (let next = this.#next(group); next; next = this.#next(group)) {
        const { message } = next.entry;
        const call = next.member.handler({ ...message, headers: { ...message.headers } });
        group.inFlight = call;
        try {
          await call;
          group.offsets.set(message.topic, Number(message.offset) + 1);
          group.failures = 0;
          this.#settleDeliveries(message.topic);
        } catch (err) {
          group.failures += 1;
          const delay = Math.min(this.#maxRetryMs, this.#retryMs * 2 ** (group.failures - 1));
          this.#logger?.warn(
            { err, topic: message.topic, offset: message.offset, attempt: group.failures },
            "event handler failed; redelivering",
          );
          await sleep(delay);
        } finally {
          group.inFlight = undefined;
        }
        this.#settleIdle();
      }
    } finally {
      group.pumping = false;
      this.#settleIdle();
    }
  }

  /** Resolves the topic's deliveries that every one of their groups has handled, oldest first. */
  #settleDeliveries(topic: string): void {
    const waiting = this.#deliveries.get(topic);
    if (!waiting) return;
    const handled = (d: Delivery) => d.groups.every((g) => (g.offsets.get(topic) ?? 0) >= d.end);
    for (let first = waiting[0]; first && handled(first); first = waiting[0]) {
      waiting.shift();
      first.resolve();
    }
    if (waiting.length === 0) this.#deliveries.delete(topic);
  }

  #isIdle(): boolean {
    for (const group of this.#groups.values()) {
      if (group.inFlight) return false;
      for (const member of group.members) {
        for (const topic of member.topics) {
          if ((group.offsets.get(topic) ?? 0) < this.#log(topic).length) return false;
        }
      }
    }
    return true;
  }

  #settleIdle(): void {
    if (this.#idleWaiters.size === 0 || !this.#isIdle()) return;
    for (const resolve of this.#idleWaiters) resolve();
    this.#idleWaiters.clear();
  }
}

function hash(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) >>> 0;
  return h;
}
