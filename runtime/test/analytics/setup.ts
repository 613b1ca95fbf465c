import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { AnalyticsAdminService } from "@platform/contracts/analytics";
import { EmailEventKind, type EmailEventRecorded, EmailEventRecordedSchema } from "@platform/contracts/events/email";
import { ManualClock } from "@platform/kit/clock";
import { seededId } from "@platform/kit/ids";
import { sandboxOrgId } from "@platform/sandbox";
import { afterAll, beforeAll, expect } from "vitest";
import type { EmbeddedPlatform } from "../../src/platform.js";
import { apiTest, CLOSE_TIMEOUT_MS, START_TIMEOUT_MS } from "../support/platform.js";

// Buyer signals and email blasts end to end on the embedded platform: fixtures go in through
// the admin plane (and the bus), every figure comes out through the gateway and is checked
// against the values computed by hand in the comments. Each test file of this folder starts a
// platform of its own with this setup.
export const SEED = "analytics-api-test";
// Period starts: 7 days → 2026-03-04T00:00Z, 14 → 2026-02-25, 30 → 2026-02-09.
export const clock = new ManualClock(new Date("2026-03-10T12:00:00Z"));
export const t = apiTest({ name: SEED, clock, admin: true, defaultKey: "umbrella-full" });
export const { problemType } = t;

export let platform: EmbeddedPlatform;
/** umbrella-full: the org of the fixture. */
export let key: string;
export let acmeKey: string;
export let noScopesKey: string;

export const ORG = sandboxOrgId(SEED, "umbrella");
export const ANN = seededId("usr_", SEED, "ann");
export const BEN = seededId("usr_", SEED, "ben");
export const B1 = seededId("blast_", SEED, "march-newsletter");
export const B2 = seededId("blast_", SEED, "draft");
export const B3 = seededId("blast_", SEED, "february-promo");
export const r = (n: number) => `r${n}@umbrella-buyers.example`;

export function get(url: string, apiKey = key) {
  return t.call("GET", url, { apiKey });
}
export async function ok(url: string) {
  const res = await get(url);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

export const adminClient = () => t.adminClient(AnalyticsAdminService);

export type Kind = "SEND" | "OPEN" | "CLICK" | "REPLY" | "BOUNCE" | "SEND_FAILED";
export interface Email {
  messageId: string;
  subject: string;
  blastId?: string;
  sender?: string;
}
let eventCount = 0;
export function ev(
  email: Email,
  kind: Kind,
  to: string,
  at: string,
  extra: Partial<Omit<EmailEventRecorded, "$typeName">> = {},
) {
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

export const E1 = { messageId: "m1", subject: "Pricing for Q2" };
export const E2 = { messageId: "m2", subject: "Old news" };
export const E3 = { messageId: "b1-1", subject: "March newsletter", blastId: B1 };
export const E4 = { messageId: "b1-2", subject: "March newsletter", blastId: B1 };
export const E5 = { messageId: "b1-3", subject: "March newsletter", blastId: B1 };
export const E6 = { messageId: "b1-4", subject: "March newsletter", blastId: B1 };
export const E7 = { messageId: "b3-1", subject: "February promo", blastId: B3 };
export const E8 = { messageId: "m8", subject: "Intro call", sender: BEN };

// Deliberately out of time order: the rollups must not depend on arrival order.
export const FIXTURE = [
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

export const blast = (
  id: string,
  name: string,
  template: string,
  status: string,
  owner: string,
  sentAt?: string,
  n = 0,
) => ({
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

export async function sentEmailId(subject: string): Promise<string> {
  const list = await ok(`/buyer-signals/sent-emails?periodDays=30&search=${encodeURIComponent(subject)}`);
  return list.items[0].id;
}

/** Starts the platform before the file's tests, with the blasts and the email events of the fixture. */
export function useAnalyticsPlatform(): void {
  beforeAll(async () => {
    platform = await t.start();
    key = t.keys["umbrella-full"]!;
    acmeKey = t.keys["acme-full"]!;
    noScopesKey = t.keys["acme-noscopes"]!;
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
  }, START_TIMEOUT_MS);
  afterAll(() => t.close(), CLOSE_TIMEOUT_MS);
}
