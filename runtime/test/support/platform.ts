import type { DescService } from "@bufbuild/protobuf";
import { type Client, createClient } from "@connectrpc/connect";
import { gatewayConfigSpec } from "@platform/gateway/config";
import { ManualClock } from "@platform/kit/clock";
import { loadConfig } from "@platform/kit/config";
import { adminClientInterceptor, httpTransport } from "@platform/kit/connect";
import { createLogger } from "@platform/kit/logger";
import { expect } from "vitest";
import { createEmbeddedPlatform, type EmbeddedOptions, type EmbeddedPlatform } from "../../src/platform.js";

// The one harness of the runtime's API tests: an embedded platform seeded with the sandbox of
// a seed of the test's own, the sandbox's keys by name, and one way to call the gateway.

export const API = "/api/v1alpha1";

export interface ApiTestOptions {
  /** Names the test: the sandbox seed, the docs host, the admin secret and the logger derive from it. */
  name: string;
  /** The sandbox seed; `name` when unset. */
  seed?: string;
  /** The platform's clock; 2026-03-02T10:00Z when unset. */
  clock?: ManualClock;
  /** Gateway settings besides the docs URL and the log level. */
  gatewayEnv?: Record<string, string>;
  /** Opens the admin plane on a free port (tests calling the admin RPCs). */
  admin?: boolean;
  /** Overrides of the embedded platform's options (dataDir, env ...). */
  platform?: Partial<EmbeddedOptions>;
  /** The key calls go out with when they name none. */
  defaultKey?: string;
}

export interface CallInit {
  /** The sandbox key to call with, by name (`acme-full`, `umbrella-full` ...). */
  as?: string;
  /** A raw API key to call with (a token created by the test); wins over `as`. */
  apiKey?: string;
  headers?: Record<string, string>;
  body?: unknown;
}

export type Method = "GET" | "POST" | "PATCH" | "DELETE";

/** A response of the gateway to an injected request. */
type InjectResponse = Awaited<ReturnType<EmbeddedPlatform["app"]["inject"]>>;
/** A response body as the tests read it: unchecked, as light-my-request's `json()` gives it. */
// biome-ignore lint/suspicious/noExplicitAny: the tests assert on the body's shape themselves
type Json = any;

export interface ApiTest {
  readonly clock: ManualClock;
  readonly docs: string;
  readonly adminSecret: string;
  /** The running platform (set by `start`). */
  readonly platform: EmbeddedPlatform;
  /** The sandbox keys by name: the key itself. */
  readonly keys: Record<string, string>;
  /** The sandbox keys by name: the token id. */
  readonly tokenIds: Record<string, string>;
  start(): Promise<EmbeddedPlatform>;
  close(): Promise<void>;
  /**
   * A call through the gateway (inject, no port): JSON body, an Idempotency-Key of its own on
   * every POST and PATCH, the `defaultKey` sandbox key unless `init` names another.
   */
  call(method: Method, url: string, init?: CallInit): Promise<InjectResponse>;
  /** GET that must answer 200: its JSON. */
  ok(url: string, init?: CallInit): Promise<Json>;
  /** The problem type URI of a problem name. */
  problemType(name: string): string;
  /** A client of an admin service (needs `admin: true`). */
  adminClient<S extends DescService>(service: S): Client<S>;
  /** Publishes every pending outbox row and waits for the bus to deliver them. */
  settle(): Promise<void>;
}

export type ApiResponse = InjectResponse;

/** How long starting (every service on PGlite, seeded) and closing a platform may take on a loaded machine. */
export const START_TIMEOUT_MS = 180_000;
export const CLOSE_TIMEOUT_MS = 120_000;

/** The harness of one test file; call `start` in beforeAll and `close` in afterAll. */
export function apiTest(opts: ApiTestOptions): ApiTest {
  const clock = opts.clock ?? new ManualClock(new Date("2026-03-02T10:00:00Z"));
  const docs = `https://docs.${opts.name}.example`;
  const adminSecret = `${opts.name}-admin-secret`;
  const keys: Record<string, string> = {};
  const tokenIds: Record<string, string> = {};
  let platform: EmbeddedPlatform | undefined;
  let n = 0;
  const running = () => {
    if (!platform) throw new Error(`${opts.name}: the platform is not started`);
    return platform;
  };
  const harness: ApiTest = {
    clock,
    docs,
    adminSecret,
    get platform() {
      return running();
    },
    keys,
    tokenIds,
    async start() {
      platform = await createEmbeddedPlatform({
        clock,
        logger: createLogger(opts.name, "silent"),
        gateway: loadConfig(gatewayConfigSpec, { PLATFORM_DOCS_URL: docs, LOG_LEVEL: "silent", ...opts.gatewayEnv }),
        sandboxSeed: opts.seed ?? opts.name,
        seedSandbox: true,
        adminSecret,
        ...(opts.admin ? { adminPort: 0 } : {}),
        ...opts.platform,
      });
      for (const k of await platform.sandboxKeys()) {
        keys[k.name] = k.key;
        tokenIds[k.name] = k.tokenId;
      }
      return platform;
    },
    async close() {
      await platform?.close();
    },
    call(method, url, init = {}) {
      return running().app.inject({
        method,
        url: `${API}${url}`,
        headers: {
          "x-platform-api-key": init.apiKey ?? keys[init.as ?? opts.defaultKey ?? "acme-full"] ?? "",
          ...(init.body !== undefined ? { "content-type": "application/json" } : {}),
          ...(method === "POST" || method === "PATCH" ? { "idempotency-key": `${opts.name}-${++n}` } : {}),
          ...init.headers,
        },
        ...(init.body !== undefined ? { payload: JSON.stringify(init.body) } : {}),
      });
    },
    async ok(url, init) {
      const res = await harness.call("GET", url, init);
      expect(res.statusCode, res.body).toBe(200);
      return res.json();
    },
    problemType: (name) => `${docs}/platform-api/errors/${name}`,
    adminClient(service) {
      return createClient(
        service,
        httpTransport(`http://127.0.0.1:${running().admin?.port}`, [adminClientInterceptor(adminSecret)]),
      );
    },
    async settle() {
      await running().drainOutbox();
      await running().bus.idle();
    },
  };
  return harness;
}
