import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { createClient } from "@connectrpc/connect";
import { sentEmailId as sentEmailIdOf } from "@platform/analytics/server";
import { AnalyticsAdminService } from "@platform/contracts/analytics";
import { EmailEventKind, type EmailEventRecorded, EmailEventRecordedSchema } from "@platform/contracts/events/email";
import { gatewayConfigSpec } from "@platform/gateway/config";
import { ManualClock } from "@platform/kit/clock";
import { loadConfig } from "@platform/kit/config";
import { adminClientInterceptor, httpTransport } from "@platform/kit/connect";
import { EVENT_TYPES, TOPICS } from "@platform/kit/events";
import { seededId } from "@platform/kit/ids";
import { createLogger } from "@platform/kit/logger";
import { toBusMessage } from "@platform/kit/outbox";
import { eventually } from "@platform/kit/testing";
import { sandboxOrgId } from "@platform/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEmbeddedPlatform, type EmbeddedPlatform } from "../src/platform.js";

// Buyer signals and email blasts end to end on the embedded platform: fixtures go in through
// the admin plane (and the bus), every figure comes out through the gateway and is checked
// against the values computed by hand in the comments.
const DOCS = "https://docs.analytics-test.example";
const API = "/api/v1alpha1";
const SEED = "analytics-api-test";
const ADMIN_SECRET = "analytics-api-test-admin-secret";
// Period starts: 7 days → 2026-03-04T00:00Z, 14 → 2026-02-25, 30 → 2026-02-09.
const clock = new ManualClock(new Date("2026-03-10T12:00:00Z"));

let platform: EmbeddedPlatform;
let key: string;
let acmeKey: string;
let noScopesKey: string;

const ORG = sandboxOrgId(SEED, "umbrella");
const ANN = seededId("usr_", SEED, "ann");
const BEN = seededId("usr_", SEED, "ben");
const B1 = seededId("blast_", SEED, "march-newsletter");
const B2 = seededId("blast_", SEED, "draft");
const B3 = seededId("blast_", SEED, "february-promo");
const r = (n: number) => `r${n}@umbrella-buyers.example`;

function get(url: string, apiKey = key) {
  return platform.app.inject({ method: "GET", url: `${API}${url}`, headers: { "x-platform-api-key": apiKey } });
}
async function ok(url: string) {
  const res = await get(url);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}
const problemType = (name: string) => `${DOCS}/platform-api/errors/${name}`;

const adminClient = () =>
  createClient(
    AnalyticsAdminService,
    httpTransport(`http://127.0.0.1:${platform.admin?.port}`, [adminClientInterceptor(ADMIN_SECRET)]),
  );

type Kind = "SEND" | "OPEN" | "CLICK" | "REPLY" | "BOUNCE" | "SEND_FAILED";
interface Email {
  messageId: string;
  subject: string;
  blastId?: string;
  sender?: string;
}
let eventCount = 0;
function ev(email: Email, kind: Kind, to: string, at: string, extra: Partial<EmailEventRecorded> = {}) {
  return create(EmailEventRecordedSchema, {
    eventId: `fixture-${++eventCount}`,
    orgId: ORG,
    kind: EmailEventKind[kind],
    occurredAt: timestampFromDate(new Date(at)),
    messageId: email.messageId,
    recipientEmail: to,
    subject: email.subject,
    senderUserId: email.sender ?? ANN,
    senderDisplayName: "Ann Sender",
    blastId: email.blastId ?? "",
    ...extra,
  });
}

const E1 = { messageId: "m1", subject: "Pricing for Q2" };
const E2 = { messageId: "m2", subject: "Old news" };
const E3 = { messageId: "b1-1", subject: "March newsletter", blastId: B1 };
const E4 = { messageId: "b1-2", subject: "March newsletter", blastId: B1 };
const E5 = { messageId: "b1-3", subject: "March newsletter", blastId: B1 };
const E6 = { messageId: "b1-4", subject: "March newsletter", blastId: B1 };
const E7 = { messageId: "b3-1", subject: "February promo", blastId: B3 };
const E8 = { messageId: "m8", subject: "Intro call", sender: BEN };

// Deliberately out of time order: the rollups must not depend on arrival order.
const FIXTURE = [
  ev(E1, "OPEN", r(1), "2026-03-09T10:00:00Z", { location: "Paris, FR" }),
  ev(E1, "SEND", r(1), "2026-03-09T09:00:00Z"),
  ev(E1, "OPEN", r(1), "2026-03-09T11:00:00Z"),
  ev(E1, "CLICK", r(1), "2026-03-09T11:05:00Z", { url: "https://umbrella.example/pricing" }),
  ev(E1, "REPLY", r(1), "2026-03-09T12:00:00Z"),
  ev(E1, "SEND", r(2), "2026-03-09T09:00:00Z"),
  ev(E1, "REPLY", r(2), "2026-03-09T09:01:00Z", { autoReply: true }),
  ev(E1, "OPEN", r(2), "2026-03-10T08:00:00Z", { location: "Lyon, FR" }),
  ev(E1, "SEND", r(3), "2026-03-09T09:00:00Z"),
  ev(E1, "BOUNCE", r(3), "2026-03-09T09:02:00Z", { failureReason: "mailbox unknown" }),
  ev(E2, "SEND", r(1), "2026-03-02T09:00:00Z"),
  ev(E2, "OPEN", r(1), "2026-03-02T10:00:00Z"),
  ev(E2, "SEND_FAILED", r(4), "2026-03-02T09:00:00Z", { failureReason: "suppressed" }),
  ev(E3, "SEND", r(5), "2026-03-08T09:00:01Z"),
  ev(E3, "OPEN", r(5), "2026-03-08T10:00:00Z"),
  ev(E3, "CLICK", r(5), "2026-03-08T10:05:00Z"),
  ev(E4, "BOUNCE", r(6), "2026-03-08T09:05:00Z"),
  ev(E4, "SEND", r(6), "2026-03-08T09:00:02Z"),
  ev(E5, "SEND", r(7), "2026-03-08T09:00:03Z"),
  ev(E5, "OPEN", r(7), "2026-03-09T09:00:00Z"),
  ev(E5, "REPLY", r(7), "2026-03-09T10:00:00Z"),
  ev(E5, "REPLY", r(7), "2026-03-09T11:00:00Z"),
  ev(E6, "SEND", r(1), "2026-03-08T09:00:04Z"),
  ev(E7, "SEND", r(8), "2026-02-20T09:00:00Z"),
  ev(E7, "OPEN", r(8), "2026-02-20T10:00:00Z"),
  ev(E8, "SEND", r(9), "2026-03-05T09:00:00Z"),
  ev(E8, "SEND", r(10), "2026-03-05T09:00:00Z"),
];

const blast = (id: string, name: string, template: string, status: string, owner: string, sentAt?: string, n = 0) => ({
  blastId: id,
  orgId: ORG,
  name,
  templateName: template,
  subject: name,
  ownerUserId: owner,
  ownerDisplayName: owner === ANN ? "Ann Sender" : "Ben Owner",
  status,
  ...(sentAt ? { sentTime: timestampFromDate(new Date(sentAt)) } : {}),
  recipientCount: BigInt(n),
});

beforeAll(async () => {
  platform = await createEmbeddedPlatform({
    clock,
    logger: createLogger("analytics-api-test", "silent"),
    gateway: loadConfig(gatewayConfigSpec, { PLATFORM_DOCS_URL: DOCS, LOG_LEVEL: "silent" }),
    sandboxSeed: SEED,
    seedSandbox: true,
    adminSecret: ADMIN_SECRET,
    adminPort: 0,
  });
  const keys = await platform.sandboxKeys();
  key = keys.find((k) => k.name === "umbrella-full")!.key;
  acmeKey = keys.find((k) => k.name === "acme-full")!.key;
  noScopesKey = keys.find((k) => k.name === "acme-noscopes")!.key;
  const admin = adminClient();
  await admin.upsertEmailBlasts({
    blasts: [
      blast(B1, "March newsletter", "Newsletter", "Sent", ANN, "2026-03-08T09:00:00Z", 5),
      blast(B2, "Draft blast", "Promo", "Draft", BEN),
      blast(B3, "February promo", "Seasonal", "Sent", ANN, "2026-02-20T09:00:00Z", 2),
    ],
  });
  const first = await admin.ingestEmailEvents({ events: FIXTURE });
  expect(first).toMatchObject({ recorded: FIXTURE.length, duplicates: 0 });
});
afterAll(() => platform?.close());

async function sentEmailId(subject: string): Promise<string> {
  const list = await ok(`/buyer-signals/sent-emails?periodDays=30&search=${encodeURIComponent(subject)}`);
  return list.items[0].id;
}

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
      create(EmailEventRecordedSchema, { ...FIXTURE[0], eventId: "x", orgId: "acme" }),
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
