/**
 * The floor of a proxied read on this machine: the hops the gateway cannot do without, and
 * nothing else. For `GET /organizations/me` it hashes the API key (the gateway's cache key),
 * counts the request with the gateway's own rate-limit store, script and buckets (the
 * local-first store, or one EVALSHA round trip per request when RATE_LIMIT_SYNC_MS is 0, as
 * the gateway), signs a request context, makes the one Connect call to identity on
 * kit's transport (as the gateway's), and writes the organization as JSON on a bare `node:http`
 * server. No framework, no token look-up, no validation, no access log, no metrics.
 *
 * The distributed bench runs it beside the gateway, so the difference between the two rows is
 * what the gateway's own features cost (fastify's pipeline, authentication, the guard, hooks,
 * logs, metrics, the response mapping), and the floor row is the least any proxy of these
 * hops costs here.
 *
 * Env: REDIS_URL, IDENTITY_URL, PLATFORM_CONTEXT_SECRET, ORG_ID, RATE_LIMIT_SYNC_MS (10),
 * RPC_HTTP_VERSION (1.1; 2 for a stack whose identity serves only HTTP/2). Prints its URL on
 * stdout.
 */
import http from "node:http";
import { toJsonString } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { OrganizationSchema, OrganizationService } from "@platform/contracts/identity";
import { redisRateLimitStoreSyncedEvery } from "@platform/gateway";
import { bucketsFor } from "@platform/gateway/rate-limit/limiter";
import { hashApiKey } from "@platform/kit/api-keys";
import { systemClock } from "@platform/kit/clock";
import { httpTransport } from "@platform/kit/connect";
import { CONTEXT_HEADER, signContext } from "@platform/kit/context";
import { idSequence } from "@platform/kit/ids";
import { createClient as createRedisClient } from "redis";

const env = process.env;
const secret = env.PLATFORM_CONTEXT_SECRET ?? "";
const orgId = env.ORG_ID ?? "";
const redis = createRedisClient({ url: env.REDIS_URL });
await redis.connect();
// As the gateway's main.ts gives it: the store times each hit itself, and RATE_LIMIT_SYNC_MS chooses it.
const store = redisRateLimitStoreSyncedEvery({
  client: redis.withCommandOptions({ timeout: 0 }),
  prefix: "bench-floor:",
  syncMs: Number(env.RATE_LIMIT_SYNC_MS ?? 10),
});
const organizations = createClient(
  OrganizationService,
  httpTransport(env.IDENTITY_URL ?? "", [], { unaryHttpVersion: env.RPC_HTTP_VERSION === "2" ? "2" : "1.1" }),
);
const nextId = idSequence("req_");

async function answer(key: string): Promise<{ status: number; body: string }> {
  const tokenId = hashApiKey(key);
  const limit = await store.hit(bucketsFor("read", { tokenId }), Date.now());
  if (!limit.allowed) return { status: 429, body: "{}" };
  const context = signContext(
    { principal: "api", requestId: nextId(), orgId, tokenId, scopes: ["organizations:read"] },
    secret,
    systemClock,
  );
  const res = await organizations.getOrganization({ orgId: "" }, { headers: { [CONTEXT_HEADER]: context } });
  return { status: 200, body: res.organization ? toJsonString(OrganizationSchema, res.organization) : "{}" };
}

// fastify's keep-alive timeout (72 s), which the gateway has: with node:http's 5 s the open loop's
// pooled sockets could be closed under a request (an error the gateway's rows cannot have).
const server = http.createServer({ keepAliveTimeout: 72_000 }, (req, res) => {
  const key = req.headers["x-platform-api-key"];
  answer(typeof key === "string" ? key : "").then(
    ({ status, body }) => {
      res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
      res.end(body);
    },
    (err: unknown) => {
      res.writeHead(502, { "content-type": "text/plain" });
      res.end(String(err));
    },
  );
});
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  if (address && typeof address === "object") process.stdout.write(`http://127.0.0.1:${address.port}\n`);
});
process.once("SIGTERM", () => {
  server.close();
  void redis.quit();
});
