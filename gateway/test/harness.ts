// The gateway of the tests: the real app over in-memory fakes of identity and scheduling
// (fakes/), and the helpers the test files share. The fakes' ids are re-exported here so a
// test imports everything from one place.
import type { ConnectRouter } from "@connectrpc/connect";
import type { EventBus } from "@platform/kit/bus";
import { ManualClock } from "@platform/kit/clock";
import { loadConfig } from "@platform/kit/config";
import { errorInterceptor, inProcessTransport, trustInterceptor } from "@platform/kit/connect";
import { createCursorCodec } from "@platform/kit/cursor";
import { createLogger, type Logger } from "@platform/kit/logger";
import { PROBLEM_CATALOG, type ProblemName } from "@platform/kit/problems";
import type { FastifyInstance, LightMyRequestResponse } from "fastify";
import { expect } from "vitest";
import { buildGateway, memoryRateLimitStore, type RateLimitStore, type RequestLogSink } from "../src/app.js";
import { type GatewayConfig, gatewayConfigSpec } from "../src/config.js";
import { FakeIdentity } from "./fakes/identity.js";
import { FakeScheduling } from "./fakes/scheduling.js";

export { FakeIdentity } from "./fakes/identity.js";
export {
  ADA,
  BEN,
  CAROL,
  CHILD_ORG,
  DAN,
  ORG,
  PARTNER_ORG,
  REVOKED_CHILD_ORG,
  SECOND_CHILD_ORG,
  STRANGER_ORG,
  UNKNOWN_ORG,
} from "./fakes/identity-data.js";
export { FakeScheduling, type FakeSlot } from "./fakes/scheduling.js";
export {
  BOOKED_MEETING,
  CHILD_SCHEDULE,
  DISABLED_SCHEDULE,
  DRAFT_SCHEDULE,
  FOREIGN_MEETING,
  PAST_MEETING,
  PLAIN_MEETING,
  SCHEDULE,
  UNPUBLISHED_SCHEDULE,
} from "./fakes/scheduling-data.js";

export const DOCS_URL = "https://docs.gateway-test.example";
export const API = "/api/v1alpha1";

export interface TestGateway {
  app: FastifyInstance;
  clock: ManualClock;
  identity: FakeIdentity;
  scheduling: FakeScheduling;
  config: GatewayConfig;
}

export async function buildTestGateway(
  opts: {
    config?: Partial<GatewayConfig>;
    store?: RateLimitStore;
    bus?: EventBus;
    /** The secret the services verify contexts with; the gateway's own unless a test breaks it. */
    serviceSecret?: string;
    /** The gateway's logger, for tests that read what it logs; silent otherwise. */
    logger?: Logger;
    /** Routes standing in for a service without a fake here (a hanging one, a failing one). */
    services?: Partial<
      Record<"crm" | "revenue" | "analytics" | "webhooks" | "requestLogs", (router: ConnectRouter) => void>
    >;
    /** Where the request log's batches go (REQUEST_LOG); on `bus` when unset. */
    requestLogSink?: RequestLogSink;
  } = {},
): Promise<TestGateway> {
  const clock = new ManualClock("2026-01-15T12:00:00Z");
  const identity = new FakeIdentity(clock);
  const scheduling = new FakeScheduling(clock);
  const config = {
    ...loadConfig(gatewayConfigSpec, { PLATFORM_DOCS_URL: DOCS_URL, LOG_LEVEL: "silent" }),
    ...opts.config,
  };
  identity.cursors = createCursorCodec(config.PLATFORM_CURSOR_SECRET);
  scheduling.cursors = identity.cursors;
  const logger = opts.logger ?? createLogger("gateway-test", "silent");
  const transport = (routes: (router: ConnectRouter) => void) =>
    inProcessTransport(routes, [
      errorInterceptor(logger),
      trustInterceptor(opts.serviceSecret ?? config.PLATFORM_CONTEXT_SECRET, clock),
    ]);
  const app = await buildGateway({
    config,
    clock,
    logger,
    transports: {
      identity: transport(identity.routes),
      scheduling: transport(scheduling.routes),
      // Contexts without a fake here answer every RPC "unimplemented" (501); their routes
      // are tested end to end on the embedded platform in runtime/test.
      crm: transport(opts.services?.crm ?? (() => {})),
      revenue: transport(opts.services?.revenue ?? (() => {})),
      analytics: transport(opts.services?.analytics ?? (() => {})),
      webhooks: transport(opts.services?.webhooks ?? (() => {})),
      requestLogs: transport(opts.services?.requestLogs ?? (() => {})),
    },
    rateLimitStore: opts.store ?? memoryRateLimitStore(),
    ...(opts.bus ? { bus: opts.bus } : {}),
    ...(opts.requestLogSink ? { requestLogSink: opts.requestLogSink } : {}),
  });
  return { app, clock, identity, scheduling, config };
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

/**
 * A write with an API key and a fresh Idempotency-Key (DELETE takes none), and a JSON body
 * when there is one; a header given as undefined is left out, so a test can drop a default.
 */
export function request(
  app: FastifyInstance,
  method: "POST" | "PATCH" | "DELETE",
  url: string,
  key: string,
  body?: unknown,
  headers: Record<string, string | undefined> = {},
) {
  const all: Record<string, string | undefined> = {
    "x-platform-api-key": key,
    ...(method === "DELETE" ? {} : { "idempotency-key": `k-${Math.random()}` }),
    ...(body !== undefined ? { "content-type": "application/json" } : {}),
    ...headers,
  };
  return app.inject({
    method,
    url,
    headers: Object.fromEntries(Object.entries(all).filter(([, v]) => v !== undefined)) as Record<string, string>,
    ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
  });
}

/** The problem body without the member that differs per request. */
export function withoutRequestId(body: Record<string, unknown>): Record<string, unknown> {
  const { requestId: _ignored, ...rest } = body;
  return rest;
}
