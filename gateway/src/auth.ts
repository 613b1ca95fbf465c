import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { hashApiKey, isApiKeyShape } from "@platform/kit/api-keys";
import type { Clock } from "@platform/kit/clock";
import { problemFromError } from "@platform/kit/connect";
import { problem } from "@platform/kit/problems";
import type { LoadingCache } from "./loading-cache.js";
import type { ContextSigner, ServiceClients } from "./services.js";

/** The token behind a request's API key. */
export interface Token {
  tokenId: string;
  orgId: string;
  scopes: string[];
}

/** What identity said about a key hash, revoked and expired tokens included, as cached. */
export type KeyRecord =
  | { found: false }
  | { found: true; token: Token; expireTime: Date | undefined; revokeTime: Date | undefined };

/** Unknown keys are cached briefly, so a key created a moment ago starts working soon. */
export const NEGATIVE_TTL_MS = 5_000;

const optionalDate = (ts: Timestamp | undefined) => (ts ? timestampDate(ts) : undefined);

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

  async authenticate(header: string | string[] | undefined, requestId: string): Promise<Token> {
    if (typeof header !== "string" || !isApiKeyShape(header)) {
      throw problem("missing-trust-header", "Send a valid API key in the X-Platform-Api-Key header.");
    }
    const keyHash = hashApiKey(header);
    const record = await this.#cache.get(keyHash, () => this.#resolve(keyHash, requestId));
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

  async #resolve(keyHash: string, requestId: string) {
    try {
      const res = await this.#clients.identity.gatewayAuth.resolveApiKey(
        { keyHash },
        this.#sign({ principal: "gateway", requestId }),
      );
      const value: KeyRecord = {
        found: true,
        token: { tokenId: res.tokenId, orgId: res.orgId, scopes: res.scopes },
        expireTime: optionalDate(res.expireTime),
        revokeTime: optionalDate(res.revokeTime),
      };
      return { value };
    } catch (err) {
      const p = problemFromError(err);
      if (p.problemName === "unknown-subscription" || p.status === 404) {
        return { value: { found: false } as const, ttlMs: NEGATIVE_TTL_MS };
      }
      throw err;
    }
  }
}
