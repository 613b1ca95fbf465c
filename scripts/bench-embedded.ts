// The embedded platform that the in-process bench suites (scripts/bench.ts, bench-compression)
// measure, and the tokens they spread their load over.
import { createClient } from "@connectrpc/connect";
import { IdentityAdminService } from "@platform/contracts/identity";
import { gatewayConfigSpec } from "@platform/gateway/config";
import { loadConfig } from "@platform/kit/config";
import { adminClientInterceptor, httpTransport } from "@platform/kit/connect";
import { createLogger } from "@platform/kit/logger";
import { createEmbeddedPlatform } from "@platform/runtime/platform";

const ADMIN_SECRET = "bench-admin-secret";

/**
 * The platform with its sandbox seeded "bench", logging errors only and identity's admin plane
 * on a free port; acme's full-access sandbox key; and `issueTokens`, which issues `count`
 * fresh tokens of acme with `scopes` (named bench-0, bench-1, …) and returns their keys: rate
 * limits stay on, and a load spread over fresh tokens fills no bucket.
 */
export async function benchPlatform() {
  const platform = await createEmbeddedPlatform({
    logger: createLogger("bench", "error"),
    gateway: { ...loadConfig(gatewayConfigSpec, {}), LOG_LEVEL: "error" as const },
    sandboxSeed: "bench",
    seedSandbox: true,
    adminSecret: ADMIN_SECRET,
    adminPort: 0,
  });
  const acme = (await platform.sandboxKeys()).find((k) => k.name === "acme-full");
  if (!acme) throw new Error("sandbox has no acme-full token");
  const admin = createClient(
    IdentityAdminService,
    httpTransport(`http://127.0.0.1:${platform.admin?.port}`, [adminClientInterceptor(ADMIN_SECRET)]),
  );
  const issueTokens = async (count: number, scopes: string[]): Promise<string[]> => {
    const keys: string[] = [];
    for (let i = 0; i < count; i++) {
      keys.push((await admin.createToken({ orgId: acme.orgId, name: `bench-${i}`, scopes })).key);
    }
    return keys;
  };
  return { platform, acme, issueTokens };
}
