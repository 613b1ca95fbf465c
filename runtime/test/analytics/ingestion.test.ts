import { create } from "@bufbuild/protobuf";
import { sentEmailId as sentEmailIdOf } from "@platform/analytics/server";
import { EmailEventRecordedSchema } from "@platform/contracts/events/email";
import { EVENT_TYPES, TOPICS } from "@platform/kit/events";
import { toBusMessage } from "@platform/kit/outbox";
import { eventually } from "@platform/kit/testing";
import { describe, expect, it } from "vitest";
import {
  ANN,
  acmeKey,
  adminClient,
  B1,
  blast,
  clock,
  ev,
  FIXTURE,
  get,
  ORG,
  ok,
  platform,
  problemType,
  r,
  useAnalyticsPlatform,
} from "./setup.js";

// Ingestion through the admin plane and the bus, the sandbox's activity, and which emails count as sent.

useAnalyticsPlatform();

describe("ingestion", () => {
  const snapshot = async () =>
    JSON.stringify([
      await ok("/buyer-signals/summary?periodDays=30"),
      await ok("/buyer-signals/activity?periodDays=30"),
      await ok("/buyer-signals/sent-emails?periodDays=30"),
      await ok(`/email-blasts/${B1}`),
      await ok(`/email-blasts/${B1}/recipients`),
    ]);

  it("replaying the fixture twice, through the admin RPC and the bus, changes nothing", async () => {
    const before = await snapshot();
    const admin = adminClient();
    expect(await admin.ingestEmailEvents({ events: FIXTURE })).toMatchObject({
      recorded: 0,
      duplicates: FIXTURE.length,
    });
    expect(await admin.ingestEmailEvents({ events: [...FIXTURE].reverse() })).toMatchObject({ recorded: 0 });
    await platform.bus.publish(
      TOPICS.email,
      FIXTURE.map((e) =>
        toBusMessage(
          {
            id: e.eventId,
            type: EVENT_TYPES.emailEventRecorded,
            source: "email-sender",
            time: clock.now().toISOString(),
            data: JSON.parse(JSON.stringify(e, (_k, v) => (typeof v === "bigint" ? String(v) : v))),
          },
          ORG,
        ),
      ),
    );
    // A marker event behind the replayed ones: once it is counted, the replay has been consumed.
    const marker = ev({ messageId: "marker", subject: "Marker" }, "SEND", r(20), "2026-03-10T11:00:00Z");
    await platform.bus.publish(TOPICS.email, [
      toBusMessage(
        {
          id: marker.eventId,
          type: EVENT_TYPES.emailEventRecorded,
          source: "email-sender",
          time: clock.now().toISOString(),
          data: {
            eventId: marker.eventId,
            orgId: ORG,
            kind: "EMAIL_EVENT_KIND_SEND",
            occurredAt: "2026-03-10T11:00:00Z",
            messageId: "marker",
            recipientEmail: r(20),
            subject: "Marker",
            senderUserId: ANN,
            senderDisplayName: "Ann",
          },
        },
        ORG,
      ),
    ]);
    await eventually("the marker event", async () => {
      const s = await ok("/buyer-signals/summary?periodDays=30");
      return s.totalSent === 8 ? s : undefined;
    });
    const after = JSON.parse(await snapshot());
    const expected = JSON.parse(before);
    // Only the marker changed anything: one more recipient sent to, one more email, one more send on 03-10.
    expect(after[0]).toEqual({
      ...expected[0],
      totalSent: 8,
      openedPercentage: 62.5,
      clickedPercentage: 25,
      repliedPercentage: 25,
    });
    const days = expected[1].items;
    expect(after[1].items).toEqual([
      ...days.slice(0, -1),
      { date: "2026-03-10", action: "sends", count: 1 },
      days.at(-1),
    ]);
    expect(after[2].items.slice(1)).toEqual(expected[2].items);
    expect(after.slice(3)).toEqual(expected.slice(3));
  });

  it("takes a send back when its bounce comes in a later batch", async () => {
    const e9 = { messageId: "b1-9", subject: "March newsletter", blastId: B1 };
    const admin = adminClient();
    await admin.ingestEmailEvents({ events: [ev(e9, "SEND", r(30), "2026-03-10T10:00:00Z")] });
    expect((await ok(`/email-blasts/${B1}`)).summary.successfulSentCount).toBe(4);
    expect((await ok("/buyer-signals/summary?periodDays=30")).totalSent).toBe(9);
    await admin.ingestEmailEvents({ events: [ev(e9, "BOUNCE", r(30), "2026-03-10T10:01:00Z")] });
    expect((await ok(`/email-blasts/${B1}`)).summary.successfulSentCount).toBe(3);
    expect((await ok(`/email-blasts/${B1}`)).performance.openRate).toBe(66.7);
    expect((await ok("/buyer-signals/summary?periodDays=30")).totalSent).toBe(8);
    const today = (await ok("/buyer-signals/activity?action=sends")).items.at(-1);
    expect(today).toEqual({ date: "2026-03-10", action: "sends", count: 1 });
    expect((await ok(`/email-blasts/${B1}/activity?periodDays=7`)).items[0]).toEqual({
      date: "2026-03-08",
      action: "sends",
      count: 3,
    });
  });

  it("rejects a malformed batch whole, naming the event", async () => {
    const bad = [
      ...FIXTURE.slice(0, 2),
      create(EmailEventRecordedSchema, { ...FIXTURE[0]!, eventId: "x", orgId: "acme" }),
    ];
    await expect(adminClient().ingestEmailEvents({ events: bad })).rejects.toThrow(/events\[2\]\.orgId/);
  });

  it("refuses to move a Sent blast to another status (Sent is terminal)", async () => {
    await expect(
      adminClient().upsertEmailBlasts({ blasts: [blast(B1, "March newsletter", "Newsletter", "Sending", ANN)] }),
    ).rejects.toThrow(/terminal/);
    expect((await ok(`/email-blasts/${B1}`)).summary.status).toBe("Sent");
  });
});

describe("sandbox", () => {
  it("gives Acme weeks of email activity and blasts in several statuses", async () => {
    const summary = (await get("/buyer-signals/summary?periodDays=30", acmeKey)).json();
    expect(summary.totalSent).toBeGreaterThan(10);
    const activity = (await get("/buyer-signals/activity?periodDays=30", acmeKey)).json();
    expect(new Set(activity.items.map((i: { date: string }) => i.date)).size).toBeGreaterThanOrEqual(14);
    const blasts = (await get("/email-blasts?periodDays=30", acmeKey)).json().items;
    const statuses = new Set<string>();
    for (const b of blasts) statuses.add((await get(`/email-blasts/${b.blastId}`, acmeKey)).json().summary.status);
    expect([...statuses].sort()).toEqual(["Draft", "Rejected", "Scheduled", "Sending", "Sent"]);
  });
});

describe("sent emails are the emails that went out", () => {
  const subjects = async (query: string) =>
    (await ok(`/buyer-signals/sent-emails?${query}`)).items.map((e: { subject: string }) => e.subject);
  const notFound = async (messageId: string) => {
    const id = sentEmailIdOf(ORG, messageId);
    for (const path of ["", "/signals"]) {
      const res = await get(`/buyer-signals/sent-emails/${id}${path}`);
      expect(res.statusCode, `${messageId}${path}`).toBe(404);
      expect(res.json().type).toBe(problemType("sent-email-not-found"));
    }
  };

  it("leaves out an email that only failed before sending: not listed, 404", async () => {
    const email = { messageId: "never-sent", subject: "Never went out" };
    await adminClient().ingestEmailEvents({
      events: [ev(email, "SEND_FAILED", r(50), "2026-03-10T09:00:00Z", { failureReason: "suppressed" })],
    });
    expect(await subjects("periodDays=30&search=never%20went")).toEqual([]);
    await notFound("never-sent");
  });

  it("times an email by its send when its open is stamped earlier, in any order and in the period filter", async () => {
    // The open is stamped 03-03 23:00, before the 7-day period (from 03-04); the send 03-04 01:00, inside it.
    const email = { messageId: "open-before-send", subject: "Clock skew" };
    const admin = adminClient();
    await admin.ingestEmailEvents({ events: [ev(email, "OPEN", r(51), "2026-03-03T23:00:00Z")] });
    // No send yet: not a sent email.
    expect(await subjects("periodDays=30&search=clock%20skew")).toEqual([]);
    await notFound("open-before-send");
    await admin.ingestEmailEvents({ events: [ev(email, "SEND", r(51), "2026-03-04T01:00:00Z")] });
    const [listed] = (await ok("/buyer-signals/sent-emails?periodDays=7&search=clock%20skew")).items;
    expect(listed).toMatchObject({ subject: "Clock skew", sentAt: "2026-03-04T01:00:00.000Z", opens: 1 });
    expect(await ok(`/buyer-signals/sent-emails/${listed.id}`)).toEqual(listed);
  });

  it("lists an email whose every delivery bounced (it was sent, not successfully) at its send's time", async () => {
    const email = { messageId: "all-bounced", subject: "Bounced everywhere" };
    const before = (await ok("/buyer-signals/summary")).totalSent;
    await adminClient().ingestEmailEvents({
      events: [ev(email, "BOUNCE", r(52), "2026-03-10T09:05:00Z"), ev(email, "SEND", r(52), "2026-03-10T09:00:00Z")],
    });
    const [listed] = (await ok("/buyer-signals/sent-emails?search=bounced%20everywhere")).items;
    expect(listed).toMatchObject({ sentAt: "2026-03-10T09:00:00.000Z", recipientEmails: [r(52)] });
    expect((await ok("/buyer-signals/summary")).totalSent).toBe(before);
  });

  it("takes an email out when a later batch says its only send failed before sending", async () => {
    const email = { messageId: "failed-later", subject: "Failure reported late" };
    const admin = adminClient();
    await admin.ingestEmailEvents({ events: [ev(email, "SEND", r(53), "2026-03-10T07:00:00Z")] });
    expect(await subjects("search=reported%20late")).toEqual(["Failure reported late"]);
    await admin.ingestEmailEvents({ events: [ev(email, "SEND_FAILED", r(53), "2026-03-10T07:00:01Z")] });
    expect(await subjects("search=reported%20late")).toEqual([]);
    await notFound("failed-later");
  });
});
