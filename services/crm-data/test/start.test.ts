import { createClient } from "@connectrpc/connect";
import { AccountService, CrmAdminService } from "@platform/contracts/crm";
import { systemClock } from "@platform/kit/clock";
import { adminClientInterceptor, httpTransport, signingInterceptor } from "@platform/kit/connect";
import { openPglite, pgliteDb } from "@platform/kit/db";
import { createLogger } from "@platform/kit/logger";
import { problemOf } from "@platform/kit/testing";
import { sandboxAccountId, sandboxOrgId } from "@platform/sandbox";
import { describe, expect, it } from "vitest";
import { loadCrmConfig } from "../src/config.js";
import { start } from "../src/start.js";
import { SCOPES } from "./builders.js";

const logger = createLogger("crm-start-test", "silent");

describe("start", () => {
  it("migrates, seeds, serves the API and the ingestion plane behind the admin secret", async () => {
    const pglite = await openPglite();
    const config = loadCrmConfig({
      PORT: "0",
      ADMIN_PORT: "0",
      SANDBOX_SEED: "crm-start",
      PLATFORM_ADMIN_SECRET: "crm-start-admin-secret",
    });
    const running = await start(config, { db: pgliteDb(pglite, "crm"), logger });
    try {
      const orgId = sandboxOrgId("crm-start", "acme");
      const api = createClient(
        AccountService,
        httpTransport(`http://127.0.0.1:${running?.port}`, [
          signingInterceptor(config.PLATFORM_CONTEXT_SECRET, systemClock, () => ({
            principal: "api",
            requestId: "req_start",
            orgId,
            tokenId: "tok_start",
            scopes: SCOPES,
          })),
        ]),
      );
      const { account } = await api.getAccount({ accountId: sandboxAccountId("crm-start", "analytical") });
      expect(account?.parentCompany?.name).toBe("Babbage Holdings");
      // Without the signed context the API refuses.
      const bare = createClient(AccountService, httpTransport(`http://127.0.0.1:${running?.port}`));
      expect(await problemOf(bare.listAccounts({}))).toBe("missing-trust-header");

      const adminUrl = `http://127.0.0.1:${running?.adminPort}`;
      const wrong = createClient(
        CrmAdminService,
        httpTransport(adminUrl, [adminClientInterceptor("not-the-secret-x")]),
      );
      expect(await problemOf(wrong.upsertAccounts({ orgId, accounts: [{ crmId: "X", name: "X" }] }))).toBe(
        "connect:Unauthenticated",
      );
      const admin = createClient(
        CrmAdminService,
        httpTransport(adminUrl, [adminClientInterceptor(config.PLATFORM_ADMIN_SECRET)]),
      );
      const res = await admin.upsertAccounts({ orgId, accounts: [{ crmId: "X", name: "X" }] });
      expect(res.accounts[0]?.created).toBe(true);
    } finally {
      await running?.stop();
      await pglite.close();
    }
  });

  it("only migrates when MIGRATE_ONLY is set", async () => {
    const pglite = await openPglite();
    const db = pgliteDb(pglite, "crm");
    expect(await start(loadCrmConfig({ MIGRATE_ONLY: "true" }), { db, logger })).toBeUndefined();
    const tables = await db.query(
      "SELECT 1 FROM information_schema.tables WHERE table_schema = 'crm' AND table_name = 'accounts'",
    );
    expect(tables).toHaveLength(1);
    expect(await db.query("SELECT 1 FROM crm.accounts")).toEqual([]);
    await pglite.close();
  });
});
