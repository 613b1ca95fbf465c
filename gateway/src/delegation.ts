import type { Context } from "@opentelemetry/api";
import { problemFromError } from "@platform/kit/connect";
import { isId } from "@platform/kit/ids";
import { problem } from "@platform/kit/problems";
import { withCallTrace } from "@platform/kit/rpc-telemetry";
import { PARTNER_SCOPE } from "@platform/kit/scopes";
import { NEGATIVE_TTL_MS, type Token } from "./auth.js";
import type { LoadingCache } from "./loading-cache.js";
import type { ContextSigner, ServiceClients } from "./services.js";

export const ACTING_ON_HEADER = "x-platform-acting-on";

/** The scopes a child granted to its parent, or null when the child is not an active child. */
export type GrantRecord = { granted: string[] | null };

/** A request acting on a child organization. */
export interface Delegation {
  childOrgId: string;
  /** Token scopes ∩ the child's grant: what the token may exercise on the child. */
  effectiveScopes: string[];
}

/**
 * One body for "not a child", "unknown org" and "revoked": anything that differed would tell
 * a caller which organizations exist.
 */
const forbidden = () =>
  problem("cross-org-delegation-forbidden", "The token may not act on the organization in X-Platform-Acting-On.");

const grantKey = (parentOrgId: string, childOrgId: string) => `${parentOrgId}|${childOrgId}`;

/** Checks `X-Platform-Acting-On` and works out the effective scopes on the child. */
export class DelegationResolver {
  readonly #clients: ServiceClients;
  readonly #cache: LoadingCache<GrantRecord>;
  readonly #sign: ContextSigner;

  constructor(deps: { clients: ServiceClients; cache: LoadingCache<GrantRecord>; sign: ContextSigner }) {
    this.#clients = deps.clients;
    this.#cache = deps.cache;
    this.#sign = deps.sign;
  }

  /** Undefined when the header is absent: the request acts on the token's own org. */
  async resolve(
    header: string | string[] | undefined,
    token: Token,
    opts: { allowed: boolean; requestId: string; trace?: Context },
  ): Promise<Delegation | undefined> {
    if (header === undefined) return undefined;
    if (!opts.allowed) {
      throw problem("invalid-acting-on-org", "X-Platform-Acting-On is not allowed on this endpoint.");
    }
    if (typeof header !== "string" || !isId("org_", header)) {
      throw problem("invalid-acting-on-org", "X-Platform-Acting-On must be one organization id (org_…).");
    }
    if (!token.scopes.includes(PARTNER_SCOPE)) {
      throw problem("delegation-scope-required", `Acting on another organization requires the ${PARTNER_SCOPE} scope.`);
    }
    const { granted } = await this.#cache.get(grantKey(token.orgId, header), () =>
      this.#load(token.orgId, header, opts.requestId, opts.trace),
    );
    if (!granted) throw forbidden();
    return { childOrgId: header, effectiveScopes: token.scopes.filter((s) => granted.includes(s)) };
  }

  /** Forgets a grant, e.g. on its change event. */
  purge(parentOrgId: string, childOrgId: string): void {
    this.#cache.delete(grantKey(parentOrgId, childOrgId));
  }

  async #load(parentOrgId: string, childOrgId: string, requestId: string, trace: Context | undefined) {
    try {
      const res = await this.#clients.identity.gatewayAuth.resolveDelegation(
        { parentOrgId, childOrgId },
        withCallTrace(this.#sign({ principal: "gateway", requestId }), trace),
      );
      return { value: { granted: res.grantedScopes } };
    } catch (err) {
      const p = problemFromError(err);
      if (p.status === 403 || p.status === 404) return { value: { granted: null }, ttlMs: NEGATIVE_TTL_MS };
      throw err;
    }
  }
}
