import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { EmailEventKind, EmailEventRecordedSchema } from "@platform/contracts/events/email";
import { seededId } from "@platform/kit/ids";
import { describe, expect, it } from "vitest";
import { type BatchPlan, deliveryKey, planBatch } from "../src/domain/batch.js";
import { checkBlastChange } from "../src/domain/blast-metadata.js";
import {
  applyEvent,
  blastContribution,
  type Delivery,
  emptyDelivery,
  isSuccessful,
  sentEmailId,
  wentOutAt,
} from "../src/domain/delivery.js";
import { type EmailEvent, emailEventOf } from "../src/domain/email-event.js";
import { dayOf, periodDays, periodStart } from "../src/domain/period.js";
import { engagementTenths, percentage, rankingScores, ratesOf, tenths, topLimit } from "../src/domain/rates.js";
import { emailEvent } from "./builders.js";

const ORG = seededId("org_", "domain", "org");
const OTHER_ORG = seededId("org_", "domain", "other-org");
const USR = seededId("usr_", "domain", "usr");
const BLAST = seededId("blast_", "domain", "blast");
const ev = (kind: EmailEvent["kind"], to: string, at: string, extra: Partial<EmailEvent> = {}): EmailEvent =>
  emailEvent({
    orgId: ORG,
    kind,
    messageId: "m1",
    recipientEmail: to,
    at,
    senderUserId: USR,
    subject: "Hello",
    ...extra,
  });

describe("rates", () => {
  it("are percentages with one decimal, rounded half up in exact integer arithmetic", () => {
    expect(percentage(1, 3)).toBe(33.3);
    expect(percentage(2, 3)).toBe(66.7);
    expect(percentage(1, 16)).toBe(6.3); // 6.25 rounds up
    expect(percentage(1, 8)).toBe(12.5);
    expect(percentage(5, 7)).toBe(71.4);
    expect(percentage(3, 3)).toBe(100);
    expect(percentage(0, 0)).toBe(0);
    expect(tenths(1, 2000)).toBe(1); // 0.05 % rounds up to 0.1
    expect(tenths(1, 2001)).toBe(0);
  });

  it("weigh the engagement score 20/30/50 and rank relative to the best", () => {
    expect(engagementTenths(667, 333, 333)).toBe(400);
    expect(engagementTenths(1000, 1000, 1000)).toBe(1000);
    expect(ratesOf({ successfulSent: 3, uniqueOpens: 2, uniqueClicks: 1, uniqueReplies: 1 })).toEqual({
      openRate: 66.7,
      clickRate: 33.3,
      replyRate: 33.3,
      engagementScore: 40,
    });
    expect(rankingScores([40, 20, 0])).toEqual([100, 50, 0]);
    expect(rankingScores([0, 0])).toEqual([0, 0]);
    expect(rankingScores([30, 10])).toEqual([100, 33.3]);
  });

  it("clamp top's limit to 1..20 with 5 by default", () => {
    expect([topLimit(0), topLimit(1), topLimit(-3), topLimit(20), topLimit(21)]).toEqual([5, 1, 1, 20, 20]);
  });
});

describe("periods", () => {
  it("accept 7, 14 or 30 days, 7 by default; anything else is invalid-field", () => {
    expect([periodDays(0), periodDays(7), periodDays(14), periodDays(30)]).toEqual([7, 7, 14, 30]);
    for (const bad of [1, 10, 31, -7]) {
      expect(() => periodDays(bad)).toThrow(expect.objectContaining({ problemName: "invalid-field" }));
    }
  });

  it("are calendar days ending today, today included", () => {
    const now = new Date("2026-03-10T15:30:00Z");
    expect(periodStart(now, 7).toISOString()).toBe("2026-03-04T00:00:00.000Z");
    expect(periodStart(now, 30).toISOString()).toBe("2026-02-09T00:00:00.000Z");
    expect(dayOf(new Date("2026-03-10T23:59:59Z"))).toBe("2026-03-10");
  });
});

describe("deliveries", () => {
  const base = emptyDelivery(ev("send", "a@x.example", "2026-03-01T00:00:00Z"));
  const apply = (d: Delivery, ...events: EmailEvent[]) => events.reduce(applyEvent, d);

  it("never count auto-responder replies as replies", () => {
    const d = apply(
      base,
      ev("send", "a@x.example", "2026-03-01T09:00:00Z"),
      ev("reply", "a@x.example", "2026-03-01T09:01:00Z", { autoReply: true }),
    );
    expect(d).toMatchObject({ replies: 0, autoReplies: 1, lastReplyAt: null });
    expect(blastContribution(d).uniqueReplies).toBe(0);
  });

  it("never count bounces or pre-send failures as successfully sent, whatever the order", () => {
    const send = ev("send", "a@x.example", "2026-03-01T09:00:00Z");
    const bounce = ev("bounce", "a@x.example", "2026-03-01T09:01:00Z");
    expect(isSuccessful(apply(base, send))).toBe(true);
    expect(isSuccessful(apply(base, send, bounce))).toBe(false);
    expect(isSuccessful(apply(base, bounce, send))).toBe(false);
    expect(isSuccessful(apply(base, ev("send_failed", "a@x.example", "2026-03-01T09:00:00Z")))).toBe(false);
  });

  it("keep the first send, the latest times and the location of the latest open", () => {
    const d = apply(
      base,
      ev("open", "a@x.example", "2026-03-02T10:00:00Z", { location: "Paris, FR" }),
      ev("send", "a@x.example", "2026-03-01T12:00:00Z"),
      ev("send", "a@x.example", "2026-03-01T09:00:00Z"),
      ev("open", "a@x.example", "2026-03-01T10:00:00Z", { location: "Lyon, FR" }),
    );
    expect(d).toMatchObject({
      sentAt: new Date("2026-03-01T09:00:00Z"),
      opens: 2,
      lastOpenAt: new Date("2026-03-02T10:00:00Z"),
      lastOpenLocation: "Paris, FR",
    });
  });
});

describe("batch plans", () => {
  const history = [
    ev("send", "a@x.example", "2026-03-01T09:00:00Z", { blastId: BLAST }),
    ev("open", "a@x.example", "2026-03-01T10:00:00Z", { blastId: BLAST }),
    ev("reply", "a@x.example", "2026-03-02T10:00:00Z", { blastId: BLAST }),
    ev("send", "b@x.example", "2026-03-01T09:00:00Z", { blastId: BLAST }),
    ev("reply", "b@x.example", "2026-03-01T09:01:00Z", { blastId: BLAST, autoReply: true }),
    ev("send", "c@x.example", "2026-03-01T09:00:00Z", { blastId: BLAST }),
    ev("open", "c@x.example", "2026-03-01T09:30:00Z", { blastId: BLAST }),
    ev("bounce", "c@x.example", "2026-03-01T09:40:00Z", { blastId: BLAST }),
  ];

  /** Applies a plan's deliveries and sums its counter changes, as the store would. */
  function replay(batches: EmailEvent[][]) {
    const deliveries = new Map<string, Delivery>();
    const sums = new Map<string, number>();
    /** Each sent email's sentAt, recomputed from all its deliveries as the store does for plan.sendTimes. */
    const sentAt = new Map<string, string | null>();
    const add = (key: string, delta: number) => sums.set(key, (sums.get(key) ?? 0) + delta);
    for (const batch of batches) {
      const plan: BatchPlan = planBatch(batch, deliveries);
      for (const d of plan.deliveries) deliveries.set(deliveryKey(d.sentEmailId, d.recipientEmail), d);
      for (const id of plan.sendTimes) {
        const times = [...deliveries.values()]
          .filter((d) => d.sentEmailId === id)
          .flatMap((d) => wentOutAt(d)?.toISOString() ?? []);
        sentAt.set(id, times.sort()[0] ?? null);
      }
      for (const a of plan.orgActivity) add(`${a.orgId} ${a.day} ${a.action}`, a.delta);
      for (const a of plan.blastActivity) add(`${a.orgId} ${a.blastId} ${a.day} ${a.action}`, a.delta);
      for (const b of plan.blasts) {
        for (const k of [
          "successfulSent",
          "uniqueOpens",
          "uniqueClicks",
          "uniqueReplies",
          "totalOpens",
          "totalReplies",
        ] as const) {
          add(`${b.orgId} ${b.blastId} ${k}`, b[k]);
        }
      }
    }
    return {
      deliveries: [...deliveries.values()].sort((x, y) =>
        deliveryKey(x.sentEmailId, x.recipientEmail) < deliveryKey(y.sentEmailId, y.recipientEmail) ? -1 : 1,
      ),
      sums,
      sentAt,
    };
  }
  const withoutZeros = (m: Map<string, number>) => [...m.entries()].filter(([, v]) => v !== 0).sort();
  const timesSet = (m: Map<string, string | null>) => [...m.entries()].filter(([, v]) => v !== null).sort();

  // Another org's events naming our blast id; an email that only failed before sending; an
  // email whose open is stamped before its send; a send taken back by a later pre-send failure.
  const M2 = { messageId: "m2" };
  const M3 = { messageId: "m3" };
  const M4 = { messageId: "m4" };
  const extras = [
    ev("send", "z@y.example", "2026-03-01T08:00:00Z", { orgId: OTHER_ORG, blastId: BLAST }),
    ev("open", "z@y.example", "2026-03-01T08:30:00Z", { orgId: OTHER_ORG, blastId: BLAST }),
    ev("reply", "z@y.example", "2026-03-02T08:00:00Z", { orgId: OTHER_ORG, blastId: BLAST }),
    ev("send_failed", "d@x.example", "2026-03-03T09:00:00Z", M2),
    ev("open", "e@x.example", "2026-03-03T08:00:00Z", M3),
    ev("send", "e@x.example", "2026-03-03T09:00:00Z", M3),
    ev("send", "f@x.example", "2026-03-03T07:00:00Z", M4),
    ev("send_failed", "f@x.example", "2026-03-03T07:00:01Z", M4),
    ev("send", "g@x.example", "2026-03-03T10:00:00Z", M4),
  ];
  it("count a blast against its successfully sent recipients only", () => {
    const { sums } = replay([history]);
    // a: sent, opened, replied; b: sent, auto-reply only; c: bounced (its open does not count as unique).
    expect(sums.get(`${ORG} ${BLAST} successfulSent`)).toBe(2);
    expect(sums.get(`${ORG} ${BLAST} uniqueOpens`)).toBe(1);
    expect(sums.get(`${ORG} ${BLAST} uniqueReplies`)).toBe(1);
    expect(sums.get(`${ORG} ${BLAST} totalOpens`)).toBe(2);
    expect(sums.get(`${ORG} 2026-03-01 sends`)).toBe(2);
    expect(sums.get(`${ORG} 2026-03-02 replies`)).toBe(1);
    expect(sums.get(`${ORG} 2026-03-01 replies`) ?? 0).toBe(0);
  });

  it("end in the same state however the events are split into batches or ordered", () => {
    const all = [...history, ...extras];
    const whole = replay([all]);
    const split = replay([all.slice(0, 3), all.slice(3, 6), all.slice(6, 10), all.slice(10)]);
    const reversed = replay([[...all].reverse()]);
    const oneByOne = replay(all.map((e) => [e]).reverse());
    const forward = replay(all.map((e) => [e]));
    const interleaved = replay([all.filter((_, i) => i % 2 === 1), all.filter((_, i) => i % 2 === 0)]);
    for (const other of [split, reversed, oneByOne, forward, interleaved]) {
      expect(other.deliveries).toEqual(whole.deliveries);
      expect(withoutZeros(other.sums)).toEqual(withoutZeros(whole.sums));
      expect(timesSet(other.sentAt)).toEqual(timesSet(whole.sentAt));
    }
  });

  it("keep one org's blast apart from another org's events naming the same blast id", () => {
    const mine = replay([history]);
    const both = replay([[...history, ...extras.slice(0, 3)]]);
    const mineOnly = (m: Map<string, number>) => withoutZeros(m).filter(([k]) => k.startsWith(ORG));
    expect(mineOnly(both.sums)).toEqual(mineOnly(mine.sums));
    // The other org's events count toward its own blast of that id, and nowhere else.
    expect(both.sums.get(`${OTHER_ORG} ${BLAST} successfulSent`)).toBe(1);
    expect(both.sums.get(`${OTHER_ORG} ${BLAST} uniqueReplies`)).toBe(1);
    expect(both.sums.get(`${OTHER_ORG} ${BLAST} 2026-03-01 sends`)).toBe(1);
    const plan = planBatch(extras.slice(0, 3), new Map());
    expect(plan.blasts.map((b) => [b.orgId, b.blastId])).toEqual([[OTHER_ORG, BLAST]]);
    expect(new Set(plan.blastActivity.map((a) => a.orgId))).toEqual(new Set([OTHER_ORG]));
  });

  it("time a sent email by its first send that went out, never by another event or a failed send", () => {
    const { sentAt } = replay([extras.slice(3)]);
    // m2 only failed before sending: no time (not a sent email). m3's open came first: its send's time.
    expect(sentAt.get(sentEmailId(ORG, "m2")) ?? null).toBeNull();
    expect(sentAt.get(sentEmailId(ORG, "m3"))).toBe("2026-03-03T09:00:00.000Z");
    // m4: f's send failed, so g's later send is the email's.
    expect(sentAt.get(sentEmailId(ORG, "m4"))).toBe("2026-03-03T10:00:00.000Z");
    // A bounce comes after the send: the bounced c still went out, on the blast email m1.
    const bounced = replay([[history[5] as EmailEvent, history[7] as EmailEvent]]);
    expect(bounced.sentAt.get(sentEmailId(ORG, "m1"))).toBe("2026-03-01T09:00:00.000Z");
  });

  it("take an email's time back when a later batch brings the pre-send failure of its only send", () => {
    const first = planBatch([ev("send", "f@x.example", "2026-03-03T07:00:00Z", M4)], new Map());
    expect(first.sendTimes).toEqual([sentEmailId(ORG, "m4")]);
    const before = new Map(first.deliveries.map((d) => [deliveryKey(d.sentEmailId, d.recipientEmail), d]));
    const second = planBatch([ev("send_failed", "f@x.example", "2026-03-03T07:00:01Z", M4)], before);
    expect(second.sendTimes).toEqual([sentEmailId(ORG, "m4")]);
    expect(wentOutAt(second.deliveries[0] as Delivery)).toBeNull();
    // Opens and replies move no send time, so they cost no recomputation.
    expect(planBatch([ev("open", "f@x.example", "2026-03-03T08:00:00Z", M4)], before).sendTimes).toEqual([]);
  });

  it("retract a recipient's send when a later batch brings its bounce", () => {
    const first = planBatch(history.slice(5, 7), new Map());
    const before = new Map(first.deliveries.map((d) => [deliveryKey(d.sentEmailId, d.recipientEmail), d]));
    const second = planBatch([history[7] as EmailEvent], before);
    expect(second.retracted).toEqual([{ orgId: ORG, recipientEmail: "c@x.example" }]);
    expect(second.orgActivity).toEqual([{ orgId: ORG, day: "2026-03-01", action: "sends", delta: -1 }]);
    expect(second.blastActivity).toEqual([
      { orgId: ORG, blastId: BLAST, day: "2026-03-01", action: "sends", delta: -1 },
    ]);
    expect(second.blasts[0]).toMatchObject({ orgId: ORG, blastId: BLAST, successfulSent: -1, uniqueOpens: -1 });
    // The bounce comes after the send: the email went out all the same, its time stays.
    expect(second.sendTimes).toEqual([]);
  });
});

describe("event and blast checks", () => {
  const recorded = (over: Record<string, unknown> = {}) =>
    create(EmailEventRecordedSchema, {
      eventId: "e-1",
      orgId: ORG,
      kind: EmailEventKind.REPLY,
      occurredAt: timestampFromDate(new Date("2026-03-01T00:00:00Z")),
      messageId: "m",
      recipientEmail: "  Ada@Example.COM ",
      senderUserId: USR,
      autoReply: true,
      location: "Paris",
      ...over,
    });

  it("normalise recipients and keep kind-specific fields only on their kind", () => {
    expect(emailEventOf(recorded())).toMatchObject({
      kind: "reply",
      recipientEmail: "ada@example.com",
      autoReply: true,
      location: null,
    });
  });

  it("name the offending field of a malformed event", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ orgId: "acme" }, "events[3].orgId"],
      [{ kind: EmailEventKind.UNSPECIFIED }, "events[3].kind"],
      [{ occurredAt: undefined }, "events[3].occurredAt"],
      [{ recipientEmail: "nobody" }, "events[3].recipientEmail"],
      [{ senderUserId: "" }, "events[3].senderUserId"],
      [{ blastId: "b1" }, "events[3].blastId"],
      [{ eventId: "" }, "events[3].eventId"],
    ];
    for (const [over, field] of cases) {
      expect(() => emailEventOf(recorded(over), "events[3]")).toThrow(field);
    }
  });

  it("keep a described blast with its org and Sent terminal; another org's events claim nothing", () => {
    const next = {
      id: BLAST,
      orgId: ORG,
      name: "n",
      templateName: "t",
      subject: "s",
      ownerUserId: USR,
      ownerDisplayName: "o",
      status: "Sending" as const,
      sentAt: null,
      recipientCount: 1,
    };
    const mine = (status: string | null, described = true) => ({ orgId: ORG, status, described });
    const theirs = (described: boolean) => ({ orgId: OTHER_ORG, status: described ? "Draft" : null, described });
    expect(() => checkBlastChange([], next)).not.toThrow();
    expect(() => checkBlastChange([mine("Scheduled")], next)).not.toThrow();
    expect(() => checkBlastChange([mine(null, false)], next)).not.toThrow();
    expect(() => checkBlastChange([mine("Sent")], next)).toThrow(/terminal/);
    expect(() => checkBlastChange([mine("Sent")], { ...next, status: "Sent" })).not.toThrow();
    expect(() => checkBlastChange([theirs(true)], next)).toThrow(/another organization/);
    expect(() => checkBlastChange([theirs(true), mine(null, false)], next)).toThrow(/another organization/);
    // Rows another org's events created are its own counts: they never lock the real owner out.
    expect(() => checkBlastChange([theirs(false)], next)).not.toThrow();
    expect(() => checkBlastChange([theirs(false), mine("Sending")], next)).not.toThrow();
  });
});
