import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter } from "@connectrpc/connect";
import {
  EntitlementsSchema,
  GatewayAuthService,
  type Organization,
  OrganizationSchema,
  OrganizationService,
} from "@platform/contracts/identity";
import { hashApiKey, seededApiKey } from "@platform/kit/api-keys";
import type { EventBus } from "@platform/kit/bus";
import { ManualClock } from "@platform/kit/clock";
import { loadConfig } from "@platform/kit/config";
import {
  apiContext,
  errorInterceptor,
  inProcessTransport,
  requestContext,
  trustInterceptor,
} from "@platform/kit/connect";
import type { RequestContext } from "@platform/kit/context";
import { seededId } from "@platform/kit/ids";
import { createLogger } from "@platform/kit/logger";
import { PROBLEM_CATALOG, type ProblemName, problem } from "@platform/kit/problems";
import type { FastifyInstance, LightMyRequestResponse } from "fastify";
import { expect } from "vitest";
import { buildGateway, memoryRateLimitStore, type RateLimitStore } from "../src/app.js";
import { type GatewayConfig, gatewayConfigSpec } from "../src/config.js";

export const DOCS_URL = "https://docs.gateway-test.example";
export const API = "/api/v1alpha1";

export const ORG = seededId("org_", "gw-test", "acme");
export const PARTNER_ORG = seededId("org_", "gw-test", "partner");
export const CHILD_ORG = seededId("org_", "gw-test", "child");
export const REVOKED_CHILD_ORG = seededId("org_", "gw-test", "revoked-child");
export const STRANGER_ORG = seededId("org_", "gw-test", "stranger");
export const UNKNOWN_ORG = seededId("org_", "gw-test", "nobody");

interface FakeToken {
  tokenId: string;
  orgId: string;
  scopes: string[];
  expireTime?: Date;
  revokeTime?: Date;
}

function organization(id: string, name: string, crm?: string): Organization {
  return create(OrganizationSchema, {
    id,
    name,
    primaryEmailDomain: "acme.example",
    emailDomains: ["acme.example", "acme.test"],
    administrator: { userId: seededId("usr_", "gw-test", `${name}-admin`), displayName: "Ada Admin" },
    industry: "Software",
    employeeCount: 120,
    sourceRefs: crm ? { crm: { orgId: crm } } : {},
    createTime: timestampFromDate(new Date("2025-03-01T09:30:00Z")),
    updateTime: timestampFromDate(new Date("2026-01-10T17:45:12.500Z")),
    version: 7n,
  });
}

/**
 * Identity as the gateway sees it: the two services in memory, behind the real trust
 * interceptor, so every call must carry a correctly signed context.
 */
export class FakeIdentity {
  readonly tokens = new Map<string, FakeToken>();
  readonly orgs = new Map<string, Organization>([
    [ORG, organization(ORG, "Acme", "0015g00000XyZ")],
    [CHILD_ORG, organization(CHILD_ORG, "Child")],
    [PARTNER_ORG, organization(PARTNER_ORG, "Partner")],
  ]);
  /** parent|child → granted scopes; a revoked relationship is kept with revoked: true. */
  readonly grants = new Map<string, { scopes: string[]; revoked: boolean }>([
    [
      `${PARTNER_ORG}|${CHILD_ORG}`,
      { scopes: ["organizations:read", "deals:read", "deals:write", "webhooks:read"], revoked: false },
    ],
    [`${PARTNER_ORG}|${REVOKED_CHILD_ORG}`, { scopes: ["organizations:read"], revoked: true }],
  ]);
  readonly calls = { resolveApiKey: 0, resolveDelegation: 0 };
  /** Contexts of the integrator calls, as the service verified them. */
  readonly contexts: RequestContext[] = [];
  /** The X-Platform-Org-Id header of each integrator call. */
  readonly orgIdHeaders: (string | null)[] = [];
  /** Makes the next call of either service throw this. */
  failNext: Error | undefined;
  #keys = 0;

  addToken(t: Omit<FakeToken, "tokenId">): string {
    this.#keys += 1;
    const key = seededApiKey("gw-test", `key-${this.#keys}`);
    this.tokens.set(hashApiKey(key), { ...t, tokenId: `tok_${this.#keys}` });
    return key;
  }

  tokenOf(key: string): FakeToken {
    return this.tokens.get(hashApiKey(key))!;
  }

  routes = (router: ConnectRouter) => {
    router.service(GatewayAuthService, {
      resolveApiKey: async (req, ctx) => {
        if (requestContext(ctx).principal !== "gateway") throw problem("missing-trust-header");
        this.calls.resolveApiKey += 1;
        this.#maybeFail();
        const t = this.tokens.get(req.keyHash);
        if (!t) throw problem("unknown-subscription", "The API key is unknown.");
        return {
          tokenId: t.tokenId,
          orgId: t.orgId,
          scopes: t.scopes,
          expireTime: t.expireTime ? timestampFromDate(t.expireTime) : undefined,
          revokeTime: t.revokeTime ? timestampFromDate(t.revokeTime) : undefined,
        };
      },
      resolveDelegation: async (req, ctx) => {
        if (requestContext(ctx).principal !== "gateway") throw problem("missing-trust-header");
        this.calls.resolveDelegation += 1;
        const grant = this.grants.get(`${req.parentOrgId}|${req.childOrgId}`);
        // Identity's detail names the org; the gateway must not pass such differences on.
        if (!grant) throw problem("cross-org-delegation-forbidden", `${req.childOrgId} is not a child.`);
        if (grant.revoked) throw problem("cross-org-delegation-forbidden", `${req.childOrgId} was revoked.`);
        return { grantedScopes: grant.scopes };
      },
    });
    router.service(OrganizationService, {
      getOrganization: async (req, ctx) => {
        const c = apiContext(ctx);
        this.contexts.push(c);
        this.orgIdHeaders.push(ctx.requestHeader.get("x-platform-org-id"));
        this.#maybeFail();
        const id = req.orgId || c.orgId;
        const org = this.orgs.get(id);
        if (id !== c.orgId || !org) throw problem("organization-not-found", "No such organization.");
        return { organization: org };
      },
      getEntitlements: async (_req, ctx) => {
        const c = apiContext(ctx);
        this.contexts.push(c);
        this.#maybeFail();
        return {
          entitlements: create(EntitlementsSchema, {
            orgId: c.orgId,
            features: { smartScheduling: true, emailBlast: true, meetingAi: false },
            seats: { total: 25, used: 20, available: 5 },
            licenseTier: { slug: "professional", name: "Professional" },
            asOf: timestampFromDate(new Date("2026-01-15T00:00:00Z")),
          }),
        };
      },
    });
  };

  #maybeFail(): void {
    const err = this.failNext;
    this.failNext = undefined;
    if (err) throw err;
  }
}

export interface TestGateway {
  app: FastifyInstance;
  clock: ManualClock;
  identity: FakeIdentity;
  config: GatewayConfig;
}

export async function buildTestGateway(
  opts: {
    config?: Partial<GatewayConfig>;
    store?: RateLimitStore;
    bus?: EventBus;
    /** The secret identity verifies contexts with; the gateway's own unless a test breaks it. */
    serviceSecret?: string;
  } = {},
): Promise<TestGateway> {
  const clock = new ManualClock("2026-01-15T12:00:00Z");
  const identity = new FakeIdentity();
  const config = {
    ...loadConfig(gatewayConfigSpec, { PLATFORM_DOCS_URL: DOCS_URL, LOG_LEVEL: "silent" }),
    ...opts.config,
  };
  const logger = createLogger("gateway-test", "silent");
  const transport = inProcessTransport(identity.routes, [
    errorInterceptor(logger),
    trustInterceptor(opts.serviceSecret ?? config.PLATFORM_CONTEXT_SECRET, clock),
  ]);
  const app = await buildGateway({
    config,
    clock,
    logger,
    transports: { identity: transport },
    rateLimitStore: opts.store ?? memoryRateLimitStore(),
    ...(opts.bus ? { bus: opts.bus } : {}),
  });
  return { app, clock, identity, config };
}

export function errorType(name: ProblemName): string {
  return `${DOCS_URL}/platform-api/errors/${name}`;
}

/** Asserts a problem+json response and returns its body. */
export function expectProblem(
  res: LightMyRequestResponse,
  name: ProblemName,
  extensions: Record<string, unknown> = {},
): Record<string, unknown> {
  const { status, title } = PROBLEM_CATALOG[name];
  const body = res.json() as Record<string, unknown>;
  expect({ status: res.statusCode, type: body.type }).toEqual({ status, type: errorType(name) });
  expect(res.headers["content-type"]).toMatch(/^application\/problem\+json/);
  expect(body.title).toBe(title);
  expect(body.status).toBe(status);
  expect(typeof body.detail).toBe("string");
  expect(res.headers["x-request-id"]).toMatch(/\S/);
  expect(body.requestId).toBe(res.headers["x-request-id"]);
  expect(body).toMatchObject(extensions);
  // No stack trace or source location ever reaches a client.
  expect(res.body).not.toMatch(/\\n\s+at |\.[cm]?[jt]s:\d+|node_modules|"stack"/);
  return body;
}

/** Scopes of the partner token: more than the child grants, and not everything. */
export const PARTNER_SCOPES = ["partner:act-as-child", "organizations:read", "users:read", "deals:read", "deals:write"];

/** GET with an API key and optional headers. */
export function get(app: FastifyInstance, url: string, key?: string, headers: Record<string, string> = {}) {
  return app.inject({ method: "GET", url, headers: { ...(key ? { "x-platform-api-key": key } : {}), ...headers } });
}

/** The problem body without the member that differs per request. */
export function withoutRequestId(body: Record<string, unknown>): Record<string, unknown> {
  const { requestId: _ignored, ...rest } = body;
  return rest;
}
