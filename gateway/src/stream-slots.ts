import { createHash } from "node:crypto";

/**
 * Leases on the live streams a token holds open, so a token cannot hold more than its cap.
 * A lease lasts `leaseMs` unless renewed (the stream renews it with every heartbeat), so the
 * slots of a gateway instance that died free themselves.
 */
export interface StreamSlots {
  /** Takes a slot for `streamId`; false when `tokenId` already holds `cap` live ones. */
  acquire(tokenId: string, streamId: string, cap: number, nowMs: number, leaseMs: number): Promise<boolean>;
  /** Extends a held lease. */
  renew(tokenId: string, streamId: string, nowMs: number, leaseMs: number): Promise<void>;
  release(tokenId: string, streamId: string): Promise<void>;
}

/** Slots of one gateway instance (the embedded runtime, tests). */
export function memoryStreamSlots(): StreamSlots {
  const held = new Map<string, Map<string, number>>();
  const live = (tokenId: string, nowMs: number) => {
    const streams = held.get(tokenId) ?? new Map<string, number>();
    for (const [id, until] of streams) if (until <= nowMs) streams.delete(id);
    held.set(tokenId, streams);
    return streams;
  };
  return {
    async acquire(tokenId, streamId, cap, nowMs, leaseMs) {
      const streams = live(tokenId, nowMs);
      if (streams.size >= cap) return false;
      streams.set(streamId, nowMs + leaseMs);
      return true;
    },
    async renew(tokenId, streamId, nowMs, leaseMs) {
      const streams = held.get(tokenId);
      if (streams?.has(streamId)) streams.set(streamId, nowMs + leaseMs);
    },
    async release(tokenId, streamId) {
      const streams = held.get(tokenId);
      streams?.delete(streamId);
      if (streams?.size === 0) held.delete(tokenId);
    },
  };
}

// A sorted set per token: member = stream, score = lease end. Dropping the expired members,
// counting and adding in one script makes the cap hold across gateway instances.
const ACQUIRE = `
redis.call("ZREMRANGEBYSCORE", KEYS[1], "-inf", ARGV[1])
if redis.call("ZCARD", KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call("ZADD", KEYS[1], ARGV[2], ARGV[4])
redis.call("PEXPIREAT", KEYS[1], ARGV[2])
return 1
`;
const ACQUIRE_SHA1 = createHash("sha1").update(ACQUIRE).digest("hex");

/** The slice of a node-redis client the slots use. */
export interface RedisSlotsClient {
  evalSha(sha1: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  zAdd(key: string, member: { score: number; value: string }, options?: { XX?: boolean }): Promise<unknown>;
  pExpireAt(key: string, ms: number): Promise<unknown>;
  zRem(key: string, member: string): Promise<unknown>;
}

/** Slots in Redis, shared by every gateway instance (the distributed runtime). */
export function redisStreamSlots({ client, prefix }: { client: RedisSlotsClient; prefix: string }): StreamSlots {
  const key = (tokenId: string) => `${prefix}{${tokenId}}:streams`;
  return {
    async acquire(tokenId, streamId, cap, nowMs, leaseMs) {
      const keys = [key(tokenId)];
      const args = [String(nowMs), String(nowMs + leaseMs), String(cap), streamId];
      let reply: unknown;
      try {
        reply = await client.evalSha(ACQUIRE_SHA1, { keys, arguments: args });
      } catch (err) {
        // After a Redis restart the script cache is empty; EVAL loads it again.
        if (!(err instanceof Error) || !err.message.startsWith("NOSCRIPT")) throw err;
        reply = await client.eval(ACQUIRE, { keys, arguments: args });
      }
      return Number(reply) === 1;
    },
    async renew(tokenId, streamId, nowMs, leaseMs) {
      await client.zAdd(key(tokenId), { score: nowMs + leaseMs, value: streamId }, { XX: true });
      await client.pExpireAt(key(tokenId), nowMs + leaseMs);
    },
    async release(tokenId, streamId) {
      await client.zRem(key(tokenId), streamId);
    },
  };
}
