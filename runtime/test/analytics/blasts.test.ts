import { seededId } from "@platform/kit/ids";
import { sandboxOrgId } from "@platform/sandbox";
import { describe, expect, it } from "vitest";
import {
  ANN,
  acmeKey,
  adminClient,
  B1,
  B2,
  B3,
  BEN,
  blast,
  ev,
  get,
  key,
  ok,
  problemType,
  r,
  SEED,
  useAnalyticsPlatform,
} from "./setup.js";

// Email blasts, and the tenancy of their views.

useAnalyticsPlatform();

describe("email blasts", () => {
  it("summary tiles count the period's blasts against successfully sent recipients", async () => {
    // B1 only: 5 addressed, 3 successful (r6 bounced); unique opens r5, r7 → 66.7; raw replies 2, unique 1 → 33.3.
    expect(await ok("/email-blasts/summary")).toEqual({
      periodDays: 7,
      totalBlasts: 1,
      totalRecipients: 5,
      totalSuccessfulSent: 3,
      totalOpens: 2,
      totalClicks: 1,
      totalReplies: 2,
      openPercentage: 66.7,
      clickPercentage: 33.3,
      replyPercentage: 33.3,
    });
    // 30 days adds B3 (2 addressed, 1 sent, opened): unique opens 3/4 = 75.0.
    expect(await ok("/email-blasts/summary?periodDays=30")).toMatchObject({
      totalBlasts: 2,
      totalRecipients: 7,
      totalSuccessfulSent: 4,
      totalOpens: 3,
      openPercentage: 75,
      clickPercentage: 25,
      replyPercentage: 25,
    });
    expect(await ok(`/email-blasts/summary?ownerUserId=${BEN}`)).toMatchObject({
      totalBlasts: 0,
      totalSuccessfulSent: 0,
      openPercentage: 0,
    });
  });

  it("ranks the top blasts with a relative score and clamps limit to 1..20", async () => {
    const top = await ok("/email-blasts/top?periodDays=30");
    // B1: engagement (0.2×66.7 + 0.3×33.3 + 0.5×33.3) = 40.0; B3: 0.2×100 = 20.0 → relative 100.0 and 50.0.
    expect(top.items).toEqual([
      {
        blastId: B1,
        blastName: "March newsletter",
        recipientCount: 5,
        successfulSentCount: 3,
        uniqueOpens: 2,
        uniqueClicks: 1,
        uniqueReplies: 1,
        openRate: 66.7,
        clickRate: 33.3,
        replyRate: 33.3,
        rankingScore: 100,
      },
      {
        blastId: B3,
        blastName: "February promo",
        recipientCount: 2,
        successfulSentCount: 1,
        uniqueOpens: 1,
        uniqueClicks: 0,
        uniqueReplies: 0,
        openRate: 100,
        clickRate: 0,
        replyRate: 0,
        rankingScore: 50,
      },
    ]);
    expect((await ok("/email-blasts/top?periodDays=30&limit=1")).items).toHaveLength(1);
    expect((await ok("/email-blasts/top?periodDays=30&limit=0")).items).toHaveLength(1);
    expect((await ok("/email-blasts/top?periodDays=30&limit=500")).items).toHaveLength(2);
    expect((await ok("/email-blasts/top")).items.map((b: { blastId: string }) => b.blastId)).toEqual([B1]);
    expect((await get("/email-blasts/top?limit=five")).statusCode).toBe(400);
  });

  it("lists blasts with rates, sorts, owner and search filters; unsent blasts are always listed", async () => {
    const ids = async (query: string) =>
      (await ok(`/email-blasts?${query}`)).items.map((b: { blastId: string }) => b.blastId);
    const rows = await ok("/email-blasts");
    expect(rows.items[0]).toEqual({
      blastId: B1,
      blastName: "March newsletter",
      templateName: "Newsletter",
      sentAt: "2026-03-08T09:00:00.000Z",
      sender: { userId: ANN, displayName: "Ann Sender" },
      recipientCount: 5,
      openRate: 66.7,
      clickRate: 33.3,
      replyRate: 33.3,
      engagementScore: 40,
    });
    expect(rows.items.map((b: { blastId: string }) => b.blastId)).toEqual([B1, B2]);
    expect(rows.items[1]).toMatchObject({ sentAt: null, openRate: 0, engagementScore: 0 });
    expect(await ids("periodDays=30")).toEqual([B1, B3, B2]);
    expect(await ids("periodDays=30&sort=-openRate")).toEqual([B3, B1, B2]);
    expect(await ids("periodDays=30&sort=engagementScore")).toEqual([B2, B3, B1]);
    // B3 and B2 tie at 0.0: ids break the tie in the sort's direction.
    expect(await ids("periodDays=30&sort=-clickRate")).toEqual([B1, ...[B3, B2].sort().reverse()]);
    expect((await ids("periodDays=30&sort=-replyRate"))[0]).toBe(B1);
    expect(await ids("periodDays=30&sort=recipientCount")).toEqual([B2, B3, B1]);
    expect(await ids("periodDays=30&sort=sentAt")).toEqual([B3, B1, B2]);
    expect(await ids(`periodDays=30&ownerUserId=${BEN}`)).toEqual([B2]);
    expect((await ids("periodDays=30&search=PROMO")).sort()).toEqual([B2, B3].sort());
    expect(await ids("periodDays=30&search=newsletter")).toEqual([B1]);
    const page = await ok("/email-blasts?periodDays=30&limit=2");
    expect(page.items).toHaveLength(2);
    const rest = await ok(`/email-blasts?periodDays=30&limit=2&cursor=${page.nextCursor}`);
    expect(rest.items.map((b: { blastId: string }) => b.blastId)).toEqual([B2]);
    expect(rest.nextCursor).toBeNull();
    // A bad owner is the same problem on every blast route, lists or not.
    for (const route of ["/email-blasts", "/email-blasts/summary", "/email-blasts/top"]) {
      const res = await get(`${route}?ownerUserId=ann`);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ type: problemType("invalid-filter"), field: "ownerUserId" });
    }
    expect((await get("/email-blasts?sort=name")).json().type).toBe(problemType("invalid-sort-field"));
  });

  it("reads one blast as summary and performance", async () => {
    expect(await ok(`/email-blasts/${B1}`)).toEqual({
      blastId: B1,
      summary: {
        blastName: "March newsletter",
        templateName: "Newsletter",
        subject: "March newsletter",
        sender: { userId: ANN, displayName: "Ann Sender" },
        sentAt: "2026-03-08T09:00:00.000Z",
        status: "Sent",
        recipientCount: 5,
        successfulSentCount: 3,
      },
      performance: {
        totalOpens: 2,
        totalClicks: 1,
        totalReplies: 2,
        openRate: 66.7,
        clickRate: 33.3,
        replyRate: 33.3,
        engagementScore: 40,
      },
    });
    expect((await ok(`/email-blasts/${B2}`)).summary).toMatchObject({ status: "Draft", sentAt: null });
  });

  it("gives a blast's activity over a window ending today", async () => {
    expect(await ok(`/email-blasts/${B1}/activity`)).toEqual({
      periodDays: 7,
      items: [
        { date: "2026-03-08", action: "sends", count: 3 },
        { date: "2026-03-08", action: "opens", count: 1 },
        { date: "2026-03-08", action: "clicks", count: 1 },
        { date: "2026-03-09", action: "opens", count: 1 },
        { date: "2026-03-09", action: "replies", count: 2 },
      ],
    });
    expect(await ok(`/email-blasts/${B3}/activity`)).toEqual({ periodDays: 7, items: [] });
    expect((await ok(`/email-blasts/${B3}/activity?periodDays=30`)).items).toEqual([
      { date: "2026-02-20", action: "sends", count: 1 },
      { date: "2026-02-20", action: "opens", count: 1 },
    ]);
  });

  it("lists a blast's recipients with sorts, hasReplied and search", async () => {
    const list = await ok(`/email-blasts/${B1}/recipients`);
    expect(list.items.map((x: { recipientEmail: string }) => x.recipientEmail)).toEqual([r(7), r(5), r(6), r(1)]);
    expect(list.items[0]).toEqual({
      recipientEmail: r(7),
      sentAt: "2026-03-08T09:00:03.000Z",
      opens: 1,
      clicks: 0,
      replies: 2,
      lastOpenAt: "2026-03-09T09:00:00.000Z",
      lastReplyAt: "2026-03-09T11:00:00.000Z",
      lastOpenLocation: null,
    });
    const emails = async (query: string) =>
      (await ok(`/email-blasts/${B1}/recipients?${query}`)).items.map(
        (x: { recipientEmail: string }) => x.recipientEmail,
      );
    expect(await emails("hasReplied=true")).toEqual([r(7)]);
    expect(await emails("hasReplied=false")).toHaveLength(3);
    expect(await emails("search=R5")).toEqual([r(5)]);
    expect(await emails("sort=sentAt")).toEqual([r(5), r(6), r(7), r(1)]);
    expect(await emails("sort=-replies&limit=1")).toEqual([r(7)]);
    expect((await emails("sort=-opens")).slice(0, 2).sort()).toEqual([r(5), r(7)]);
    expect(await emails("sort=-lastReplyAt&limit=1")).toEqual([r(7)]);
  });

  it("answers unknown, foreign and malformed blast ids as the spec says", async () => {
    for (const path of ["", "/activity", "/recipients"]) {
      const unknown = await get(`/email-blasts/${seededId("blast_", SEED, "nope")}${path}`);
      expect(unknown.statusCode).toBe(404);
      expect(unknown.json().type).toBe(problemType("email-blast-not-found"));
      expect((await get(`/email-blasts/${B1}${path}`, acmeKey)).json().type).toBe(problemType("email-blast-not-found"));
    }
    expect((await get("/email-blasts/semail_abc")).json().type).toBe(problemType("invalid-resource-id"));
  });
});

describe("tenancy of blasts", () => {
  const ACME = sandboxOrgId(SEED, "acme");
  const B4 = seededId("blast_", SEED, "described-late");
  const views = async (blastId: string, apiKey: string) =>
    JSON.stringify(
      await Promise.all(
        [
          `/email-blasts/${blastId}`,
          `/email-blasts/${blastId}/activity?periodDays=30`,
          `/email-blasts/${blastId}/recipients`,
          "/email-blasts/summary?periodDays=30",
          "/email-blasts/top?periodDays=30",
          "/email-blasts?periodDays=30",
        ].map(async (url) => {
          const res = await get(url, apiKey);
          expect(res.statusCode, res.body).toBe(200);
          return res.json();
        }),
      ),
    );

  it("another org's events naming my blast change none of my blast figures, in any order", async () => {
    const acmeBlast: string = (await get("/email-blasts?periodDays=30", acmeKey)).json().items[0].blastId;
    const umbrellaBefore = await views(B1, key);
    const acmeBefore = await views(acmeBlast, acmeKey);
    // Acme's sender names Umbrella's B1, Umbrella's names Acme's blast; one event per call, newest first.
    const onB1 = { messageId: "acme-on-b1", subject: "Not Umbrella's", blastId: B1 };
    const onAcme = { messageId: "umbrella-on-acme", subject: "Not Acme's", blastId: acmeBlast };
    const foreign = [
      ev(onB1, "SEND", "x1@acme-buyers.example", "2026-03-08T08:00:00Z", { orgId: ACME }),
      ev(onB1, "OPEN", "x1@acme-buyers.example", "2026-03-08T08:30:00Z", { orgId: ACME }),
      ev(onB1, "CLICK", "x1@acme-buyers.example", "2026-03-08T08:40:00Z", { orgId: ACME }),
      ev(onB1, "REPLY", "x1@acme-buyers.example", "2026-03-09T08:00:00Z", { orgId: ACME }),
      ev(onB1, "SEND", "x2@acme-buyers.example", "2026-03-10T08:00:00Z", { orgId: ACME }),
      ev(onAcme, "SEND", r(41), "2026-03-09T08:00:00Z"),
      ev(onAcme, "OPEN", r(41), "2026-03-09T08:30:00Z"),
    ];
    const admin = adminClient();
    for (const e of [...foreign].reverse()) await admin.ingestEmailEvents({ events: [e] });
    expect(await views(B1, key)).toBe(umbrellaBefore);
    expect(await views(acmeBlast, acmeKey)).toBe(acmeBefore);
    // The events count for their own org (as a blast it has not described: counted, not listed).
    const acmeEmails = (await get("/buyer-signals/sent-emails?search=umbrella%27s", acmeKey)).json().items;
    expect(acmeEmails).toMatchObject([{ emailType: "email-blast", blastId: B1, opens: 1, clicks: 1, replies: 1 }]);
    expect((await get(`/email-blasts/${B1}`, acmeKey)).statusCode).toBe(404);
  });

  it("takes the owner's metadata for a blast another org's events named first, and counts only the owner's", async () => {
    const admin = adminClient();
    const onB4 = { messageId: "acme-on-b4", subject: "Acme first", blastId: B4 };
    await admin.ingestEmailEvents({
      events: [
        ev(onB4, "SEND", "x3@acme-buyers.example", "2026-03-10T08:00:00Z", { orgId: ACME }),
        ev(onB4, "OPEN", "x3@acme-buyers.example", "2026-03-10T08:30:00Z", { orgId: ACME }),
      ],
    });
    expect(
      await admin.upsertEmailBlasts({
        blasts: [blast(B4, "Described late", "Late", "Sending", BEN, "2026-03-10T09:00:00Z", 1)],
      }),
    ).toMatchObject({ upserted: 1 });
    await admin.ingestEmailEvents({
      events: [
        ev({ messageId: "b4-1", subject: "Described late", blastId: B4 }, "SEND", r(42), "2026-03-10T09:00:00Z"),
      ],
    });
    expect(await ok(`/email-blasts/${B4}`)).toMatchObject({
      summary: { blastName: "Described late", status: "Sending", successfulSentCount: 1 },
      performance: { totalOpens: 0, openRate: 0, engagementScore: 0 },
    });
    expect(
      (await ok(`/email-blasts/${B4}/recipients`)).items.map((x: { recipientEmail: string }) => x.recipientEmail),
    ).toEqual([r(42)]);
    expect((await ok(`/email-blasts/${B4}/activity`)).items).toEqual([
      { date: "2026-03-10", action: "sends", count: 1 },
    ]);
    expect((await get(`/email-blasts/${B4}`, acmeKey)).statusCode).toBe(404);
    // An id another org has described stays that org's.
    await expect(
      admin.upsertEmailBlasts({ blasts: [{ ...blast(B1, "Mine now", "Stolen", "Draft", ANN), orgId: ACME }] }),
    ).rejects.toThrow(/another organization/);
    expect((await ok(`/email-blasts/${B1}`)).summary.blastName).toBe("March newsletter");
  });
});
