import { createRouterTransport } from "@connectrpc/connect";
import { buildGateway, memoryRateLimitStore } from "@platform/gateway/app";
import { gatewayConfigSpec } from "@platform/gateway/config";
import { systemClock } from "@platform/kit/clock";
import { loadConfig } from "@platform/kit/config";
import { createLogger } from "@platform/kit/logger";

/**
 * The gateway's OpenAPI document exactly as GET /api/v1alpha1/openapi.json serves it, built in
 * process from the routes alone: no port is listened on and no service is called (each
 * transport serves nothing). `env` holds the gateway's settings (PLATFORM_DOCS_URL ...).
 * Used by scripts/openapi.ts (which writes the committed api/openapi.json) and the contract gates.
 */
export async function openApiDocument(env: Record<string, string | undefined>): Promise<Record<string, unknown>> {
  const config = loadConfig(gatewayConfigSpec, { ...env, LOG_LEVEL: "silent" });
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
      requestLogs: none(),
    },
    rateLimitStore: memoryRateLimitStore(),
  });
  try {
    return app.swagger() as unknown as Record<string, unknown>;
  } finally {
    await app.close();
  }
}
