import { fromJson, type JsonValue } from "@bufbuild/protobuf";
import { PartnerGrantChangedSchema, TokenRevokedSchema } from "@platform/contracts/events/identity";
import type { EventBus, Subscription } from "@platform/kit/bus";
import { EVENT_TYPES, TOPICS } from "@platform/kit/events";
import type { Logger } from "@platform/kit/logger";
import { decodeEvent } from "@platform/kit/outbox";

// Newer producers may add fields; this consumer needs only the ids.
const LENIENT = { ignoreUnknownFields: true };

/** Drops cached answers before their TTL runs out. */
export interface CachePurge {
  /** A key was revoked: its cached record goes, and what it holds open (event streams) ends. */
  apiKey(keyHash: string, tokenId: string): void;
  delegation(parentOrgId: string, childOrgId: string): void;
}

export interface CachePurgeOptions {
  instanceId: string;
  purge: CachePurge;
  logger: Logger;
  /** First delay before subscribing again after a failure; doubles up to 30 s. */
  retryMs?: number;
}

const MAX_RETRY_MS = 30_000;

function subscribe(bus: EventBus, opts: CachePurgeOptions): Promise<Subscription> {
  return bus.subscribe({
    groupId: `gateway-${opts.instanceId}`,
    topics: [TOPICS.identity],
    fromBeginning: false,
    async handler(message) {
      try {
        const event = decodeEvent(message);
        const data = event.data as JsonValue;
        if (event.type === EVENT_TYPES.tokenRevoked) {
          const { keyHash, tokenId } = fromJson(TokenRevokedSchema, data, LENIENT);
          opts.purge.apiKey(keyHash, tokenId);
        } else if (event.type === EVENT_TYPES.partnerGrantChanged) {
          const { parentOrgId, childOrgId } = fromJson(PartnerGrantChangedSchema, data, LENIENT);
          opts.purge.delegation(parentOrgId, childOrgId);
        }
      } catch (err) {
        // Redelivering a message that can never be read would stall the partition.
        opts.logger.warn({ err, offset: message.offset }, "skipping an unreadable identity event");
      }
    },
  });
}

/**
 * Purges on identity's events, so a revoked token or a changed grant stops working within
 * the bus latency rather than the cache TTL. Every instance must see every event, hence a
 * consumer group per instance; events from before it started are irrelevant to its caches.
 *
 * A bus that is down must not keep the API down: the gateway starts anyway (its caches then
 * expire by TTL only) and keeps trying to subscribe in the background.
 */
export async function startCachePurge(bus: EventBus, opts: CachePurgeOptions): Promise<{ close(): Promise<void> }> {
  let subscription: Subscription | undefined;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  let delay = opts.retryMs ?? 1_000;

  async function attempt(): Promise<void> {
    try {
      const s = await subscribe(bus, opts);
      if (closed) await s.close();
      else subscription = s;
    } catch (err) {
      if (closed) return;
      opts.logger.warn(
        { err, retryInMs: delay },
        "cannot subscribe to identity events; cached keys expire by TTL only",
      );
      timer = setTimeout(() => void attempt(), delay);
      timer.unref();
      delay = Math.min(delay * 2, MAX_RETRY_MS);
    }
  }

  await attempt();
  return {
    async close() {
      closed = true;
      clearTimeout(timer);
      await subscription?.close();
    },
  };
}
