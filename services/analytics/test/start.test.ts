import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { AnalyticsAdminService, BuyerSignalsService } from "@platform/contracts/analytics";
import { EmailEventKind, EmailEventRecordedSchema } from "@platform/contracts/events/email";
import { systemClock } from "@platform/kit/clock";
import { adminClientInterceptor, httpTransport, signingInterceptor } from "@platform/kit/connect";
import { openPglite, pgliteDb } from "@platform/kit/db";
import { seededId } from "@platform/kit/ids";
import { createLogger } from "@platform/kit/logger";
import { sandboxOrgId } from "@platform/sandbox";
import { describe, expect, it } from "vitest";
import { loadAnalyticsConfig } from "../src/config.js";
import { start } from "../src/start.js";

// The distributed process: migrates, seeds, and serves the API (behind the signed context)
// and the admin plane (behind the admin secret) over HTTP/2; crm-data is absent, so
// contactId stays null instead of the read failing.
describe("start", () => {
  it("serves both planes, and ingestion through the admin plane shows in the API", async () => {
    const pglite = await openPglite();
    const config = loadAnalyticsConfig({
      PORT: "0",
      ADMIN_PORT: "0",
      SANDBOX_SEED: "analytics-start-test",
      CRM_URL: "http://127.0.0.1:9",
    });
    const running = await start(config, {
      db: pgliteDb(pglite, "analytics"),
      logger: createLogger("analytics-start-test", "silent"),
    });
    try {
      const orgId = sandboxOrgId("analytics-start-test", "umbrella");
      const adminUrl = `http://127.0.0.1:${running?.adminPort}`;
      const admin = createClient(
        AnalyticsAdminService,
        httpTransport(adminUrl, [adminClientInterceptor(config.PLATFORM_ADMIN_SECRET)]),
      );
      const event = (kind: EmailEventKind, n: number) =>
        create(EmailEventRecordedSchema, {
          eventId: `start-${n}`,
          orgId,
          kind,
          occurredAt: timestampFromDate(new Date()),
          messageId: "start-msg",
          recipientEmail: "ada.lovelace@analytical.example",
          subject: "Start",
          senderUserId: seededId("usr_", "start", "sender"),
          senderDisplayName: "Sender",
        });
      expect(
        await admin.ingestEmailEvents({ events: [event(EmailEventKind.SEND, 1), event(EmailEventKind.REPLY, 2)] }),
      ).toMatchObject({
        recorded: 2,
      });

      const intruder = createClient(
        AnalyticsAdminService,
        httpTransport(adminUrl, [adminClientInterceptor("wrong-secret-0123456789")]),
      );
      await expect(intruder.ingestEmailEvents({ events: [] })).rejects.toSatisfy(
        (err: unknown) => ConnectError.from(err).code === Code.Unauthenticated,
      );

      const api = httpTransport(`http://127.0.0.1:${running?.port}`, [
        signingInterceptor(config.PLATFORM_CONTEXT_SECRET, systemClock, () => ({
          principal: "api",
          requestId: "req_start",
          orgId,
          tokenId: "tok_start",
          scopes: ["buyer-signals:read"],
        })),
      ]);
      const signals = createClient(BuyerSignalsService, api);
      expect(await signals.getBuyerSignalsSummary({})).toMatchObject({
        totalSent: 1n,
        hadReplied: 1n,
        repliedPercentage: 100,
      });
      const { sentEmails } = await signals.listSentEmails({});
      const page = await signals.listSentEmailSignals({ sentEmailId: sentEmails[0]?.id ?? "" });
      expect(page.signals[0]).toMatchObject({ recipientEmail: "ada.lovelace@analytical.example", contactId: "" });

      // The sandbox was seeded for Acme.
      const acme = createClient(
        BuyerSignalsService,
        httpTransport(`http://127.0.0.1:${running?.port}`, [
          signingInterceptor(config.PLATFORM_CONTEXT_SECRET, systemClock, () => ({
            principal: "api",
            requestId: "req_start_acme",
            orgId: sandboxOrgId("analytics-start-test", "acme"),
            tokenId: "tok_start",
            scopes: ["buyer-signals:read"],
          })),
        ]),
      );
      expect(Number((await acme.getBuyerSignalsSummary({ periodDays: 30 })).totalSent)).toBeGreaterThan(5);
    } finally {
      await running?.stop();
      await pglite.close();
    }
  });
});
