import { createClient } from "@connectrpc/connect";
import { GatewayAuthService, IdentityAdminService, UserService } from "@platform/contracts/identity";
import { hashApiKey } from "@platform/kit/api-keys";
import { systemClock } from "@platform/kit/clock";
import { adminClientInterceptor, httpTransport, signingInterceptor } from "@platform/kit/connect";
import { openPglite, pgliteDb } from "@platform/kit/db";
import { eventually } from "@platform/kit/testing";
import { sandboxKeysOffline, sandboxOrgId } from "@platform/sandbox";
import { describe, expect, it } from "vitest";
import type { InvitationEmail } from "../src/application/mailer.js";
import { loadIdentityConfig } from "../src/config.js";
import { start } from "../src/start.js";
import { silentLogger } from "./builders.js";

describe("start", () => {
  it("migrates, seeds and serves both planes over HTTP/2", async () => {
    const pglite = await openPglite();
    const config = loadIdentityConfig({ PORT: "0", ADMIN_PORT: "0", SANDBOX_SEED: "start-test" });
    const running = await start(config, { db: pgliteDb(pglite, "identity"), logger: silentLogger });
    try {
      expect(running).toBeDefined();
      const admin = createClient(
        IdentityAdminService,
        httpTransport(`http://127.0.0.1:${running?.adminPort}`, [adminClientInterceptor(config.PLATFORM_ADMIN_SECRET)]),
      );
      const { keys } = await admin.listSandboxKeys({});
      expect(keys.map((k) => k.key)).toEqual(sandboxKeysOffline("start-test").map((k) => k.key));

      const gateway = createClient(
        GatewayAuthService,
        httpTransport(`http://127.0.0.1:${running?.port}`, [
          signingInterceptor(config.PLATFORM_CONTEXT_SECRET, systemClock, () => ({
            principal: "gateway",
            requestId: "req_start",
          })),
        ]),
      );
      const resolved = await gateway.resolveApiKey({ keyHash: hashApiKey(keys[0]?.key ?? "") });
      expect(resolved.tokenId).toBe(keys[0]?.tokenId);
    } finally {
      await running?.stop();
      await pglite.close();
    }
  });

  it("mails an invitation through its own bus once the write commits", async () => {
    const pglite = await openPglite();
    const sent: InvitationEmail[] = [];
    const config = loadIdentityConfig({ PORT: "0", ADMIN_PORT: "0", SANDBOX_SEED: "start-test" });
    const running = await start(config, {
      db: pgliteDb(pglite, "identity"),
      logger: silentLogger,
      mailer: { sendInvitation: async (i) => void sent.push(i) },
    });
    try {
      const orgId = sandboxOrgId("start-test", "umbrella");
      const users = createClient(
        UserService,
        httpTransport(`http://127.0.0.1:${running?.port}`, [
          signingInterceptor(config.PLATFORM_CONTEXT_SECRET, systemClock, () => ({
            principal: "api",
            requestId: "req_invite",
            orgId,
            tokenId: "tok_start",
            scopes: ["users:write"],
            idempotencyKey: "invite-once",
          })),
        ]),
      );
      const { user } = await users.inviteUser({ email: "new.hire@umbrella.example", role: "User" });
      const mailed = await eventually("the invitation email", () => sent[0]);
      expect(mailed).toEqual({ orgId, userId: user?.id, email: "new.hire@umbrella.example", role: "User" });
    } finally {
      await running?.stop();
      await pglite.close();
    }
  });

  it("only migrates when MIGRATE_ONLY is set", async () => {
    const pglite = await openPglite();
    try {
      const config = loadIdentityConfig({ MIGRATE_ONLY: "true" });
      const db = pgliteDb(pglite, "identity");
      expect(await start(config, { db, logger: silentLogger })).toBeUndefined();
      expect(await db.query("SELECT * FROM identity.organizations")).toEqual([]);
    } finally {
      await pglite.close();
    }
  });
});
