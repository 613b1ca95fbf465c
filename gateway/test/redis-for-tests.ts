import { randomBytes } from "node:crypto";
import { createClient } from "redis";
import { afterAll, beforeAll } from "vitest";

export const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

/**
 * A client on the machine's Redis for the file's tests, connected before them and closed after,
 * and a key prefix of this run's own: runs never share buckets, and the clean-up at the end
 * deletes only this run's keys.
 */
export function redisForTests(name: string) {
  const redis = createClient({ url: REDIS_URL });
  const prefix = `platform:rl:test-${name}-${randomBytes(6).toString("hex")}:`;
  beforeAll(async () => {
    await redis.connect();
  });
  afterAll(async () => {
    for await (const keys of redis.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })) {
      if (keys.length > 0) await redis.del(keys);
    }
    await redis.close();
  });
  return { redis, prefix };
}
