import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import type { Context } from "@opentelemetry/api";
import { RESOLVE_API_KEYS_MAX, type ResolveApiKeyResponse } from "@platform/contracts/identity";
import { hashApiKey, isApiKeyShape } from "@platform/kit/api-keys";
import type { Clock } from "@platform/kit/clock";
import { problemFromError } from "@platform/kit/connect";
import { problem } from "@platform/kit/problems";
import { withCallTrace } from "@platform/kit/rpc-telemetry";
import DataLoader from "dataloader";
import type { Loaded, LoadingCache } from "./loading-cache.js";
import type { ContextSigner, ServiceClients } from "./services.js";

/** The token behind a request's API key. */
export interface Token {
  tokenId: string;
  orgId: string;
  scopes: string[];
  /** When the key stops working; undefined for a key without expiry (GET /api-keys/current shows it). */
  expiresAt?: Date;
}

/** What identity said about a key hash, revoked and expired tokens included, as cached. */
export type KeyRecord =
  | { found: false }
  | { found: true; token: Token; expireTime: Date | undefined; revokeTime: Date | undefined };

/** Unknown keys are cached briefly, so a key created a moment ago starts working soon. */
export const NEGATIVE_TTL_MS = 5_000;

/**
 * How long the gateway looks keys up one call each after identity answered ResolveApiKeys
 * with Unimplemented (an identity deployed before that RPC), before it tries the batch again.
 */
export const BATCH_RETRY_MS = 60_000;

/**
 * How the key cache refreshes its entries: the refreshes that reads find due within 50 ms start
 * together, and the look-ups' DataLoader sends them as one ResolveApiKeys call, so at most one
 * call's worth of keys (RESOLVE_API_KEYS_MAX) is gathered or in flight. One key a call, two at a
 * time, the 1,000 keys of the benchmark that came due together cost identity as many calls and
 * Postgres as many queries, in the first seconds of each open-loop row (docs/benchmarks/gateway.md,
 * "Key refreshes gathered").
 */
export const KEY_REFRESHES = { refreshGatherMs: 50, maxRefreshing: RESOLVE_API_KEYS_MAX } as const;

const optionalDate = (ts: Timestamp | undefined) => (ts ? timestampDate(ts) : undefined);

const found = (res: ResolveApiKeyResponse): Loaded<KeyRecord> => ({
  value: {
    found: true,
    token: { tokenId: res.tokenId, orgId: res.orgId, scopes: res.scopes, expiresAt: optionalDate(res.expireTime) },
    expireTime: optionalDate(res.expireTime),
    revokeTime: optionalDate(res.revokeTime),
  },
});
const notFound: Loaded<KeyRecord> = { value: { found: false }, ttlMs: NEGATIVE_TTL_MS };

/** A key hash to look up, and the request that first asked (its id and trace go with the look-up). */
interface Lookup {
  keyHash: string;
  requestId: string;
  trace: Context | undefined;
}

/** Resolves `X-Platform-Api-Key` to a live token, or the 401 the spec names. */
export class ApiKeyAuthenticator {
  readonly #clients: ServiceClients;
  readonly #cache: LoadingCache<KeyRecord>;
  readonly #sign: ContextSigner;
  readonly #clock: Clock;

  constructor(deps: { clients: ServiceClients; cache: LoadingCache<KeyRecord>; sign: ContextSigner; clock: Clock }) {
    this.#clients = deps.clients;
    this.#cache = deps.cache;
    this.#sign = deps.sign;
    this.#clock = deps.clock;
  }

  /** `trace`: the request's trace context, which a look-up it makes continues (http-server-span.ts). */
  async authenticate(header: string | string[] | undefined, requestId: string, trace?: Context): Promise<Token> {
    if (typeof header !== "string" || !isApiKeyShape(header)) {
      throw problem("missing-trust-header", "Send a valid API key in the X-Platform-Api-Key header.");
    }
    const keyHash = hashApiKey(header);
    const record = await this.#cache.get(keyHash, () => this.#lookups.load({ keyHash, requestId, trace }));
    if (!record.found || record.revokeTime) {
      throw problem("unknown-subscription", "The API key is unknown or has been revoked.");
    }
    if (record.expireTime && record.expireTime.getTime() <= this.#clock.now().getTime()) {
      const expiredAt = record.expireTime.toISOString();
      throw problem("subscription-expired", `The API key expired at ${expiredAt}.`, { expiredAt });
    }
    return record.token;
  }

  /** Forgets a key, e.g. on its revocation event. */
  purge(keyHash: string): void {
    this.#cache.delete(keyHash);
  }

  /**
   * The keys missing from the cache are looked up together: those that arrive while the event
   * loop works through one round of I/O go to identity as one ResolveApiKeys call (up to
   * RESOLVE_API_KEYS_MAX). When many keys are new at once (a gateway just started, traffic back
   * after a lull longer than the cache's TTL, a burst of new integrators) this is one call per
   * hundred keys instead of one per key (docs/benchmarks/gateway.md, "Keys looked up together").
   */
  readonly #lookups = new DataLoader<Lookup, Loaded<KeyRecord>>((batch) => this.#resolveBatch(batch), {
    cache: false,
    maxBatchSize: RESOLVE_API_KEYS_MAX,
    batchScheduleFn: (run) => setImmediate(run),
  });
  #batchUnsupportedUntil = 0;

  async #resolveBatch(batch: readonly Lookup[]): Promise<Loaded<KeyRecord>[]> {
    const now = this.#clock.now().getTime();
    if (now >= this.#batchUnsupportedUntil) {
      try {
        const { tokens } = await this.#clients.identity.gatewayAuth.resolveApiKeys(
          { keyHashes: batch.map((l) => l.keyHash) },
          // One call serves several requests; it carries the first one's id and trace.
          withCallTrace(
            this.#sign({ principal: "gateway", requestId: (batch[0] as Lookup).requestId }),
            batch[0]?.trace,
          ),
        );
        return batch.map(({ keyHash }) => {
          const res = tokens[keyHash];
          return res ? found(res) : notFound;
        });
      } catch (err) {
        if (!(err instanceof ConnectError && err.code === Code.Unimplemented)) throw err;
        this.#batchUnsupportedUntil = now + BATCH_RETRY_MS;
      }
    }
    return Promise.all(batch.map((l) => this.#resolveOne(l)));
  }

  async #resolveOne({ keyHash, requestId, trace }: Lookup): Promise<Loaded<KeyRecord>> {
    try {
      return found(
        await this.#clients.identity.gatewayAuth.resolveApiKey(
          { keyHash },
          withCallTrace(this.#sign({ principal: "gateway", requestId }), trace),
        ),
      );
    } catch (err) {
      const p = problemFromError(err);
      if (p.problemName === "unknown-subscription" || p.status === 404) return notFound;
      throw err;
    }
  }
}
