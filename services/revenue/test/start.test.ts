import { createClient } from "@connectrpc/connect";
import { DealService, RevenueAdminService } from "@platform/contracts/revenue";
import { systemClock } from "@platform/kit/clock";
import { adminClientInterceptor, httpTransport, signingInterceptor } from "@platform/kit/connect";
import { openPglite, pgliteDb } from "@platform/kit/db";
import { sandboxDealId, sandboxOrgId, sandboxSchemaId } from "@platform/sandbox";
import { describe, expect, it } from "vitest";
import { loadRevenueConfig } from "../src/config.js";
import { REVENUE_SANDBOX } from "../src/sandbox.js";
import { start } from "../src/start.js";
import { SCOPES, silentLogger } from "./builders.js";

describe("start", () => {
  it("migrates, seeds the sandbox, serves the API over HTTP/2 and the admin plane behind its secret", async () => {
    const pglite = await openPglite();
    const config = loadRevenueConfig({ PORT: "0", ADMIN_PORT: "0", SANDBOX_SEED: "start-test" });
    const running = await start(config, { db: pgliteDb(pglite, "revenue"), logger: silentLogger });
    try {
      expect(running?.adminPort).toBeGreaterThan(0);
      const orgId = sandboxOrgId("start-test", "acme");
      const transport = httpTransport(`http://127.0.0.1:${running?.port}`, [
        signingInterceptor(config.PLATFORM_CONTEXT_SECRET, systemClock, () => ({
          principal: "api",
          requestId: "req_start",
          orgId,
          tokenId: "tok_start",
          scopes: SCOPES,
        })),
      ]);
      const { deal } = await createClient(DealService, transport).getDeal({
        dealId: sandboxDealId("start-test", "analytical-expansion"),
      });
      expect(deal?.stage).toBe("Negotiation");
      const listed = await createClient(DealService, transport).listDeals({ limit: 100 });
      expect(listed.deals).toHaveLength(REVENUE_SANDBOX.deals.filter((d) => d.org === "acme").length);
      const admin = createClient(
        RevenueAdminService,
        httpTransport(`http://127.0.0.1:${running?.adminPort}`, [adminClientInterceptor(config.PLATFORM_ADMIN_SECRET)]),
      );
      const { schemas } = await admin.listDealSchemas({ orgId });
      expect(schemas.map((s) => s.id)).toEqual([sandboxSchemaId("start-test", "acme")]);
      expect(schemas[0]?.stages.map((s) => s.name)).toEqual([
        "Discovery",
        "Qualification",
        "Proposal",
        "Negotiation",
        "Won",
        "Lost",
      ]);
    } finally {
      await running?.stop();
      await pglite.close();
    }
  });

  it("only migrates when MIGRATE_ONLY is set", async () => {
    const pglite = await openPglite();
    const db = pgliteDb(pglite, "revenue");
    const running = await start(loadRevenueConfig({ MIGRATE_ONLY: "true" }), { db, logger: silentLogger });
    expect(running).toBeUndefined();
    expect(await db.query("SELECT 1 FROM revenue.deals")).toEqual([]);
    await pglite.close();
  });
});
