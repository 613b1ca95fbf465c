import { metrics } from "@opentelemetry/api";
import type { Logger } from "@platform/kit/logger";
import { problem } from "@platform/kit/problems";
import type { FastifyReply } from "fastify";
import type { RateLimitBucket, RateLimitStore } from "./store.js";

/** Independent per-minute buckets: reads, availability searches, writes. */
export type Tier = "read" | "availability" | "write";

export const TIER_LIMITS: Record<Tier, number> = { read: 300, availability: 60, write: 20 };
export const DAILY_QUOTA = 50_000;

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

/** Whose quota a request draws from: the token's own, or its sub-bucket for one child org. */
export interface RateLimitSubject {
  tokenId: string;
  actingOn?: string | undefined;
}

export function bucketsFor(tier: Tier, subject: RateLimitSubject): RateLimitBucket[] {
  // The hash tag keeps one subject's keys in one Redis Cluster slot, as a checked hit's script needs.
  const tag = subject.actingOn ? `{${subject.tokenId}:${subject.actingOn}}` : `{${subject.tokenId}}`;
  return [
    { key: `${tag}:${tier}`, limit: TIER_LIMITS[tier], windowMs: MINUTE_MS },
    { key: `${tag}:daily`, limit: DAILY_QUOTA, windowMs: DAY_MS, kind: "fixed" },
  ];
}

const seconds = (ms: number) => Math.ceil(ms / 1000);

/**
 * Counts the request, sets the draft IETF RateLimit headers of its tier, and refuses it
 * with 429 and an exact Retry-After when a bucket is full.
 */
export class RateLimiter {
  readonly #store: RateLimitStore;
  readonly #logger: Logger;
  readonly #rejections = metrics
    .getMeter("@platform/gateway")
    .createCounter("gateway.rate_limit.rejections", { description: "Requests refused with 429, by tier and bucket" });

  constructor(store: RateLimitStore, logger: Logger) {
    this.#store = store;
    this.#logger = logger;
  }

  async enforce(reply: FastifyReply, tier: Tier, subject: RateLimitSubject, nowMs: number): Promise<void> {
    let result: Awaited<ReturnType<RateLimitStore["hit"]>>;
    try {
      result = await this.#store.hit(bucketsFor(tier, subject), nowMs);
    } catch (err) {
      // Failing open, like common gateways do: a rate-limit store outage must not take the API down.
      this.#logger.error({ err }, "rate-limit store unavailable; request not counted");
      return;
    }
    const [minute, daily] = result.buckets;
    if (minute) {
      reply.header("ratelimit-policy", `"${tier}";q=${minute.limit};w=${MINUTE_MS / 1000}`);
      reply.header("ratelimit", `"${tier}";r=${minute.remaining};t=${seconds(minute.resetMs)}`);
    }
    if (result.allowed) return;
    this.#rejections.add(1, {
      tier,
      bucket: daily?.remaining === 0 ? "daily" : "minute",
      delegated: subject.actingOn !== undefined,
    });
    reply.header("retry-after", String(seconds(result.retryAfterMs)));
    // A refused request is not counted, so a bucket at 0 remaining is one that is full.
    throw problem(
      "rate-limit-exceeded",
      daily?.remaining === 0
        ? `The daily quota of ${DAILY_QUOTA} requests is used up; it resets at 00:00 UTC.`
        : `More than ${TIER_LIMITS[tier]} ${tier} requests in one minute; retry after ${seconds(result.retryAfterMs)} s.`,
    );
  }
}
