import { createClient } from "@connectrpc/connect";
import { MeetingService, SmartScheduleService } from "@platform/contracts/scheduling";
import { systemClock } from "@platform/kit/clock";
import { httpTransport, signingInterceptor } from "@platform/kit/connect";
import { openPglite, pgliteDb } from "@platform/kit/db";
import { eventually } from "@platform/kit/testing";
import { sandboxOrgId, sandboxScheduleId } from "@platform/sandbox";
import { describe, expect, it } from "vitest";
import type { Notice } from "../src/application/notifier.js";
import { loadSchedulingConfig } from "../src/config.js";
import { start } from "../src/start.js";
import { anAttendee, formValues, SCOPES, silentLogger } from "./builders.js";

describe("start", () => {
  it("migrates, seeds, serves over HTTP/2 and notifies through its own bus once a booking commits", async () => {
    const pglite = await openPglite();
    const sent: Notice[] = [];
    const config = loadSchedulingConfig({ PORT: "0", SANDBOX_SEED: "start-test" });
    const running = await start(config, {
      db: pgliteDb(pglite, "scheduling"),
      logger: silentLogger,
      notifier: { send: async (n) => void sent.push(n) },
    });
    try {
      expect(running).toBeDefined();
      const orgId = sandboxOrgId("start-test", "acme");
      const transport = httpTransport(`http://127.0.0.1:${running?.port}`, [
        signingInterceptor(config.PLATFORM_CONTEXT_SECRET, systemClock, () => ({
          principal: "api",
          requestId: "req_start",
          orgId,
          tokenId: "tok_start",
          scopes: SCOPES,
          idempotencyKey: "book-once",
        })),
      ]);
      const values = formValues({ region: "AMER" });
      const availability = await createClient(SmartScheduleService, transport).getAvailability({
        scheduleId: sandboxScheduleId("start-test", "acme-intro"),
        formValues: values,
      });
      const slot = availability.hostGroups[0]?.hosts[0]?.slots[0];
      const { meeting } = await createClient(MeetingService, transport).bookMeeting({
        slotToken: slot?.slotToken ?? "",
        attendee: anAttendee(),
        formValues: values,
        surveyResponses: { "What would you like to discuss?": "Everything" },
      });
      expect(meeting?.calendarEventId).toMatch(/^simcal-/);
      const notice = await eventually("the confirmation", () => sent.find((n) => n.meetingId === meeting?.id));
      expect(notice).toMatchObject({ kind: "confirmation", channel: "email" });
    } finally {
      await running?.stop();
      await pglite.close();
    }
  });

  it("only migrates when MIGRATE_ONLY is set", async () => {
    const pglite = await openPglite();
    try {
      const db = pgliteDb(pglite, "scheduling");
      expect(await start(loadSchedulingConfig({ MIGRATE_ONLY: "true" }), { db, logger: silentLogger })).toBeUndefined();
      expect(await db.query("SELECT * FROM scheduling.schedules")).toEqual([]);
    } finally {
      await pglite.close();
    }
  });

  it("fails fast on a slot token secret that is too short", () => {
    expect(() => loadSchedulingConfig({ SLOT_TOKEN_SECRET: "short" })).toThrow(/SLOT_TOKEN_SECRET/);
  });
});
