// Prints the gateway's OpenAPI document (the one served at /api/v1alpha1/openapi.json) as
// JSON on stdout, without listening on a port or reaching any service: the document is
// generated from the routes alone. Used by scripts/lint-openapi.sh.
//   node --import tsx scripts/openapi.ts > openapi.json
import { createRouterTransport } from "@connectrpc/connect";
import { buildGateway, memoryRateLimitStore } from "@platform/gateway/app";
import { gatewayConfigSpec } from "@platform/gateway/config";
import { systemClock } from "@platform/kit/clock";
import { loadConfig } from "@platform/kit/config";
import { createLogger } from "@platform/kit/logger";

const config = loadConfig(gatewayConfigSpec, { ...process.env, LOG_LEVEL: "silent" });
// No service is called while the document is generated; each transport serves nothing.
const none = () => createRouterTransport(() => {});
const app = await buildGateway({
  config,
  clock: systemClock,
  logger: createLogger("openapi", "silent"),
  transports: {
    identity: none(),
    scheduling: none(),
    crm: none(),
    revenue: none(),
    analytics: none(),
    webhooks: none(),
  },
  rateLimitStore: memoryRateLimitStore(),
});
process.stdout.write(`${JSON.stringify(app.swagger(), null, 2)}\n`);
await app.close();
