import { seededId } from "@platform/kit/ids";
import { describe, expect, it } from "vitest";
import {
  ANN,
  acmeKey,
  B1,
  get,
  noScopesKey,
  ok,
  problemType,
  r,
  SEED,
  sentEmailId,
  useAnalyticsPlatform,
} from "./setup.js";

// Buyer signals, and the conventions every analytics endpoint shares (setup.ts starts the platform).

useAnalyticsPlatform();

describe("buyer signals", () => {
  it("summary counts unique recipients and rounds percentages to one decimal", async () => {
    // Successful sends since 03-04: r1, r2 (E1), r5, r7, r1 (blast), r9, r10 → 6 unique (r3, r6 bounced).
    // Opened: r1, r2, r5, r7 = 4 → 66.7; clicked r1, r5 = 2 → 33.3; replied r1, r7 = 2 (r2's auto-reply excluded).
    expect(await ok("/buyer-signals/summary")).toEqual({
      periodDays: 7,
      totalSent: 6,
      hadOpened: 4,
      hadClicked: 2,
      hadReplied: 2,
      openedPercentage: 66.7,
      clickedPercentage: 33.3,
      repliedPercentage: 33.3,
    });
    // 30 days adds r8 (sent and opened 02-20): 5/7 = 71.428… → 71.4, 2/7 = 28.571… → 28.6.
    expect(await ok("/buyer-signals/summary?periodDays=30")).toMatchObject({
      periodDays: 30,
      totalSent: 7,
      hadOpened: 5,
      openedPercentage: 71.4,
      clickedPercentage: 28.6,
      repliedPercentage: 28.6,
    });
  });

  it("activity gives raw counts per day and action, zero days omitted, filtered by action", async () => {
    expect(await ok("/buyer-signals/activity")).toEqual({
      periodDays: 7,
      items: [
        { date: "2026-03-05", action: "sends", count: 2 },
        { date: "2026-03-08", action: "sends", count: 3 },
        { date: "2026-03-08", action: "opens", count: 1 },
        { date: "2026-03-08", action: "clicks", count: 1 },
        { date: "2026-03-09", action: "sends", count: 2 },
        { date: "2026-03-09", action: "opens", count: 3 },
        { date: "2026-03-09", action: "clicks", count: 1 },
        { date: "2026-03-09", action: "replies", count: 3 },
        { date: "2026-03-10", action: "opens", count: 1 },
      ],
    });
    const filtered = await ok("/buyer-signals/activity?action=replies&action=opens");
    expect(filtered.items).toEqual([
      { date: "2026-03-08", action: "opens", count: 1 },
      { date: "2026-03-09", action: "opens", count: 3 },
      { date: "2026-03-09", action: "replies", count: 3 },
      { date: "2026-03-10", action: "opens", count: 1 },
    ]);
    const single = await ok("/buyer-signals/activity?action=clicks&periodDays=14");
    expect(single.items.map((i: { date: string }) => i.date)).toEqual(["2026-03-08", "2026-03-09"]);
    const bad = await get("/buyer-signals/activity?action=bounces");
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ type: problemType("invalid-filter"), field: "action" });
  });

  it("lists the period's sent emails with raw counts, newest first", async () => {
    const list = await ok("/buyer-signals/sent-emails");
    expect(list.items.map((e: { subject: string }) => e.subject)).toEqual([
      "Pricing for Q2",
      "March newsletter",
      "March newsletter",
      "March newsletter",
      "March newsletter",
      "Intro call",
    ]);
    expect(list.nextCursor).toBeNull();
    const e1 = list.items[0];
    expect(e1).toEqual({
      id: expect.stringMatching(/^semail_/),
      subject: "Pricing for Q2",
      sender: { userId: ANN, displayName: "Ann Sender" },
      recipientEmails: [r(1), r(2), r(3)],
      sentAt: "2026-03-09T09:00:00.000Z",
      opens: 3,
      clicks: 1,
      replies: 1,
      lastOpenAt: "2026-03-10T08:00:00.000Z",
      lastClickAt: "2026-03-09T11:05:00.000Z",
      lastReplyAt: "2026-03-09T12:00:00.000Z",
      lastOpenLocation: "Lyon, FR",
      emailType: "standard",
      blastId: null,
    });
    const blastEmail = list.items[1];
    expect(blastEmail).toMatchObject({
      emailType: "email-blast",
      blastId: B1,
      lastOpenAt: null,
      lastOpenLocation: null,
    });
    expect(await ok(`/buyer-signals/sent-emails/${e1.id}`)).toEqual(e1);
  });

  it("filters sent emails by period, search and email type", async () => {
    const subjects = async (query: string) =>
      (await ok(`/buyer-signals/sent-emails?${query}`)).items.map((e: { subject: string }) => e.subject);
    expect(await subjects("periodDays=14")).toContain("Old news");
    expect(await subjects("periodDays=30")).toHaveLength(8);
    expect(await subjects("search=PRICING")).toEqual(["Pricing for Q2"]);
    expect(await subjects(`search=${encodeURIComponent(r(7))}`)).toEqual(["March newsletter"]);
    expect(await subjects("search=%25")).toEqual([]);
    expect(await subjects("emailType=standard")).toEqual(["Pricing for Q2", "Intro call"]);
    expect(await subjects("emailType=email-blast")).toHaveLength(4);
    expect(await subjects("emailType=all")).toHaveLength(6);
    const bad = await get("/buyer-signals/sent-emails?emailType=newsletter");
    expect(bad.statusCode).toBe(400);
    expect(bad.json().type).toBe(problemType("invalid-filter"));
  });

  it("sorts sent emails by each allowed field and pages with cursors bound to the sort", async () => {
    const numbers = { opens: [3, 1, 1, 0, 0, 0], clicks: [1, 1, 0, 0, 0, 0], replies: [2, 1, 0, 0, 0, 0] };
    for (const [field, expected] of Object.entries(numbers)) {
      const desc = await ok(`/buyer-signals/sent-emails?sort=-${field}`);
      expect(desc.items.map((e: Record<string, number>) => e[field])).toEqual(expected);
      const asc = await ok(`/buyer-signals/sent-emails?sort=${field}`);
      expect(asc.items.map((e: Record<string, number>) => e[field])).toEqual([...expected].reverse());
    }
    for (const field of ["lastOpenAt", "lastClickAt", "lastReplyAt", "sentAt"]) {
      const desc = (await ok(`/buyer-signals/sent-emails?sort=-${field}`)).items.map(
        (e: Record<string, string | null>) => e[field],
      );
      const values = desc.filter((v: string | null) => v !== null);
      expect(values).toEqual([...values].sort().reverse());
      // Emails without the time come last, in both directions.
      expect(desc.slice(values.length).every((v: string | null) => v === null)).toBe(true);
    }
    expect((await ok("/buyer-signals/sent-emails?sort=-lastReplyAt")).items[0].subject).toBe("Pricing for Q2");

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await ok(`/buyer-signals/sent-emails?sort=-opens&limit=4${cursor ? `&cursor=${cursor}` : ""}`);
      seen.push(...page.items.map((e: { id: string }) => e.id));
      cursor = page.nextCursor;
      if (cursor) {
        const other = await get(`/buyer-signals/sent-emails?sort=-sentAt&limit=4&cursor=${cursor}`);
        expect(other.json().type).toBe(problemType("invalid-cursor"));
      }
    } while (cursor);
    expect(seen).toHaveLength(6);
    expect(new Set(seen).size).toBe(6);

    const badSort = await get("/buyer-signals/sent-emails?sort=subject");
    expect(badSort.statusCode).toBe(400);
    expect(badSort.json()).toMatchObject({ type: problemType("invalid-sort-field"), field: "subject" });
  });

  it("lists a sent email's recipient signals with hasReplied and the sorts", async () => {
    const id = await sentEmailId("Pricing for Q2");
    const signals = await ok(`/buyer-signals/sent-emails/${id}/signals`);
    expect(signals.items[0]).toEqual({
      recipientEmail: r(1),
      contactId: null,
      opens: 2,
      clicks: 1,
      replies: 1,
      lastOpenAt: "2026-03-09T11:00:00.000Z",
      lastClickAt: "2026-03-09T11:05:00.000Z",
      lastReplyAt: "2026-03-09T12:00:00.000Z",
    });
    // r2's only reply was an auto-responder's: no reply, no lastReplyAt.
    expect(signals.items.find((s: { recipientEmail: string }) => s.recipientEmail === r(2))).toMatchObject({
      replies: 0,
      lastReplyAt: null,
      opens: 1,
    });
    const emails = async (query: string) =>
      (await ok(`/buyer-signals/sent-emails/${id}/signals?${query}`)).items.map(
        (s: { recipientEmail: string }) => s.recipientEmail,
      );
    expect(await emails("hasReplied=true")).toEqual([r(1)]);
    expect((await emails("hasReplied=false")).sort()).toEqual([r(2), r(3)]);
    expect(await emails("sort=-opens")).toEqual([r(1), r(2), r(3)]);
    expect(await emails("sort=opens&limit=1")).toEqual([r(3)]);
    expect(await emails("sort=-lastOpenAt")).toEqual([r(2), r(1), r(3)]);
    expect(await emails("sort=replies")).toHaveLength(3);
    const bad = await get(`/buyer-signals/sent-emails/${id}/signals?sort=clicks`);
    expect(bad.json().type).toBe(problemType("invalid-sort-field"));
    const badFilter = await get(`/buyer-signals/sent-emails/${id}/signals?hasReplied=maybe`);
    expect(badFilter.json().type).toBe(problemType("invalid-filter"));
  });

  it("resolves recipients that are CRM contacts to their contactId", async () => {
    const list = await get("/buyer-signals/sent-emails?search=following%20up&periodDays=30", acmeKey);
    const id = list.json().items[0].id;
    const signals = (await get(`/buyer-signals/sent-emails/${id}/signals`, acmeKey)).json().items;
    const ada = signals.find((s: { recipientEmail: string }) => s.recipientEmail === "ada.lovelace@analytical.example");
    expect(ada.contactId).toMatch(/^cont_/);
    expect(ada.replies).toBe(1);
    const grace = signals.find((s: { recipientEmail: string }) => s.recipientEmail === "grace.hopper@cobol.example");
    expect(grace.replies).toBe(0);
  });

  it("answers unknown, foreign and malformed sent email ids as the spec says", async () => {
    const unknown = await get(`/buyer-signals/sent-emails/${seededId("semail_", SEED, "nope")}`);
    expect(unknown.statusCode).toBe(404);
    expect(unknown.headers["content-type"]).toMatch(/application\/problem\+json/);
    expect(unknown.json().type).toBe(problemType("sent-email-not-found"));
    const foreign = await sentEmailId("Pricing for Q2");
    expect((await get(`/buyer-signals/sent-emails/${foreign}`, acmeKey)).json().type).toBe(
      problemType("sent-email-not-found"),
    );
    expect((await get(`/buyer-signals/sent-emails/${foreign}/signals`, acmeKey)).statusCode).toBe(404);
    const malformed = await get("/buyer-signals/sent-emails/blast_abc");
    expect(malformed.json().type).toBe(problemType("invalid-resource-id"));
  });
});

describe("conventions", () => {
  it("periodDays other than 7, 14 or 30 is 400 problem+json on every endpoint that takes it", async () => {
    for (const path of [
      "/buyer-signals/summary",
      "/buyer-signals/activity",
      "/buyer-signals/sent-emails",
      "/email-blasts/summary",
      "/email-blasts/top",
      "/email-blasts",
      `/email-blasts/${B1}/activity`,
    ]) {
      for (const value of ["10", "0", "abc"]) {
        const res = await get(`${path}?periodDays=${value}`);
        expect(res.statusCode, `${path} ${value}`).toBe(400);
        expect(res.headers["content-type"]).toMatch(/application\/problem\+json/);
        expect(res.json()).toMatchObject({ type: problemType("invalid-field"), status: 400, field: "periodDays" });
      }
    }
    for (const value of ["7", "14", "30"])
      expect((await get(`/buyer-signals/summary?periodDays=${value}`)).statusCode).toBe(200);
  });

  it("requires the read scopes", async () => {
    const signals = await get("/buyer-signals/summary", noScopesKey);
    expect(signals.statusCode).toBe(403);
    expect(signals.json()).toMatchObject({
      type: problemType("insufficient-scope"),
      requiredScope: "buyer-signals:read",
    });
    expect((await get("/email-blasts", noScopesKey)).json().requiredScope).toBe("email-blasts:read");
  });
});
