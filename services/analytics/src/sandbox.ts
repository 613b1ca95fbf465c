import type { Clock } from "@platform/kit/clock";
import type { Db } from "@platform/kit/db";
import { seededRandom } from "@platform/kit/random";
import { sandboxBlastId, sandboxOrgId, sandboxUserId } from "@platform/sandbox";
import type { EmailEvent, EmailEventKindName } from "./domain/email-event.js";
import type { BlastMetadata, BlastStatus } from "./domain/model.js";
import { txStore } from "./store/index.js";

// The sandbox's email activity: three weeks of Acme's emails relative to the clock, drawn
// from a PRNG seeded with the sandbox seed (the same seed, the same story), plus blasts in
// several statuses and one follow-up whose three recipients show a reply, an
// auto-responder reply and a bounce.

const DAY_MS = 86_400_000;

const SENDERS = [
  { label: "acme-ae", displayName: "Casey Morgan" },
  { label: "acme-sdr", displayName: "Devon Lee" },
  { label: "acme-owner", displayName: "Avery Stone" },
] as const;

/** The CRM sandbox's contacts (crm-data resolves their contactId) and other prospects. */
const CRM_CONTACTS = ["ada.lovelace@analytical.example", "grace.hopper@cobol.example", "alan.turing@bletchley.example"];
const PROSPECTS = [
  "jordan.baker@northwind-traders.example",
  "mia.chen@contoso.example",
  "liam.patel@fabrikam.example",
  "sofia.rossi@tailspin.example",
  "noah.kim@wingtip.example",
  "emma.dubois@adventure-works.example",
  "lucas.silva@litware.example",
  "olivia.nowak@proseware.example",
  "ethan.murphy@woodgrove.example",
  "ava.schmidt@lucerne.example",
  "mason.jones@fourthcoffee.example",
  "isla.brown@alpine-ski.example",
];
const RECIPIENTS = [...CRM_CONTACTS, ...PROSPECTS];
const CITIES = ["Boston, US", "London, GB", "Berlin, DE", "Toronto, CA", "Austin, US", ""];
const SUBJECTS = [
  "Quick question about your Q2 pipeline",
  "Notes from today's call",
  "Proposal for {company}",
  "Intro: our scheduling platform",
  "Checking in",
  "Pricing follow-up",
];

export const ANALYTICS_SANDBOX = {
  orgLabel: "acme",
  days: 21,
  /** The follow-up whose recipients reply, auto-reply and bounce. */
  followUpMessageId: "sandbox-follow-up",
  blasts: [
    {
      label: "spring-update",
      name: "Spring product update",
      template: "Product update",
      status: "Sent",
      daysAgo: 12,
      size: 10,
    },
    {
      label: "webinar",
      name: "Webinar invitation: Smarter scheduling",
      template: "Event invite",
      status: "Sent",
      daysAgo: 4,
      size: 12,
    },
    { label: "renewal", name: "Renewal reminder", template: "Renewal", status: "Sending", daysAgo: 0, size: 8 },
    {
      label: "pricing",
      name: "Q3 pricing preview",
      template: "Announcement",
      status: "Scheduled",
      daysAgo: null,
      size: 15,
    },
    { label: "survey", name: "Customer survey", template: "Survey", status: "Draft", daysAgo: null, size: 0 },
    {
      label: "partner",
      name: "Partner newsletter",
      template: "Newsletter",
      status: "Rejected",
      daysAgo: null,
      size: 40,
    },
  ] satisfies {
    label: string;
    name: string;
    template: string;
    status: BlastStatus;
    daysAgo: number | null;
    size: number;
  }[],
} as const;

interface Story {
  events: EmailEvent[];
  blasts: BlastMetadata[];
}

/** The sandbox's events and blasts as of `now`. */
export function sandboxStory(seed: string, now: Date): Story {
  const random = seededRandom(`analytics:${seed}`);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)] as T;
  const orgId = sandboxOrgId(seed, ANALYTICS_SANDBOX.orgLabel);
  const events: EmailEvent[] = [];
  let n = 0;
  const at = (base: Date, minutes: number) => new Date(Math.min(now.getTime(), base.getTime() + minutes * 60_000));
  const add = (
    kind: EmailEventKindName,
    occurredAt: Date,
    email: { messageId: string; subject: string; sender: (typeof SENDERS)[number]; blastId: string | null },
    recipientEmail: string,
    extra: Partial<EmailEvent> = {},
  ) => {
    events.push({
      eventId: `sandbox:${seed}:${n++}`,
      orgId,
      kind,
      occurredAt,
      messageId: email.messageId,
      recipientEmail,
      subject: email.subject,
      senderUserId: sandboxUserId(seed, email.sender.label),
      senderDisplayName: email.sender.displayName,
      blastId: email.blastId,
      autoReply: false,
      location: null,
      ...extra,
    });
  };
  /** A plausible life of one delivered email: opens, clicks, a reply, or a bounce. */
  const engage = (email: Parameters<typeof add>[2], to: string, sentAt: Date) => {
    add("send", sentAt, email, to);
    if (random() < 0.04) return add("bounce", at(sentAt, 1), email, to);
    if (random() < 0.06) add("reply", at(sentAt, 3), email, to, { autoReply: true });
    if (random() < 0.45) return;
    const opens = 1 + Math.floor(random() * 3);
    for (let i = 0; i < opens; i++) {
      add("open", at(sentAt, 20 + i * 240 + Math.floor(random() * 120)), email, to, {
        location: pick(CITIES) || null,
      });
    }
    if (random() < 0.4) add("click", at(sentAt, 30 + Math.floor(random() * 600)), email, to);
    if (random() < 0.3) add("reply", at(sentAt, 60 + Math.floor(random() * 1200)), email, to);
  };

  const today = Math.floor(now.getTime() / DAY_MS) * DAY_MS;
  for (let day = ANALYTICS_SANDBOX.days - 1; day >= 0; day--) {
    const perDay = 3 + Math.floor(random() * 4);
    for (let i = 0; i < perDay; i++) {
      const sentAt = new Date(today - day * DAY_MS + (8 + Math.floor(random() * 9)) * 3_600_000);
      if (sentAt > now) continue;
      const to = pick(RECIPIENTS);
      const email = {
        messageId: `sandbox-${day}-${i}`,
        subject: pick(SUBJECTS).replace("{company}", to.split("@")[1]?.split(".")[0] ?? "you"),
        sender: pick(SENDERS),
        blastId: null,
      };
      engage(email, to, sentAt);
    }
  }

  // The follow-up: Ada replies, Grace's auto-responder answers (never a reply), Alan's address bounces.
  const followUpAt = new Date(Math.max(today - 2 * DAY_MS + 10 * 3_600_000, now.getTime() - 3 * DAY_MS));
  const followUp = {
    messageId: ANALYTICS_SANDBOX.followUpMessageId,
    subject: "Following up on our call",
    sender: SENDERS[0],
    blastId: null,
  };
  for (const to of CRM_CONTACTS) add("send", followUpAt, followUp, to);
  add("open", at(followUpAt, 15), followUp, CRM_CONTACTS[0] as string, { location: "London, GB" });
  add("click", at(followUpAt, 16), followUp, CRM_CONTACTS[0] as string);
  add("reply", at(followUpAt, 45), followUp, CRM_CONTACTS[0] as string);
  add("reply", at(followUpAt, 1), followUp, CRM_CONTACTS[1] as string, { autoReply: true });
  add("bounce", at(followUpAt, 1), followUp, CRM_CONTACTS[2] as string);

  const blasts: BlastMetadata[] = [];
  for (const b of ANALYTICS_SANDBOX.blasts) {
    const id = sandboxBlastId(seed, b.label);
    const owner = b.label === "webinar" ? SENDERS[1] : SENDERS[2];
    const sentAt =
      b.daysAgo === null ? null : new Date(Math.min(now.getTime(), today - b.daysAgo * DAY_MS + 9 * 3_600_000));
    blasts.push({
      id,
      orgId,
      name: b.name,
      templateName: b.template,
      subject: b.name,
      ownerUserId: sandboxUserId(seed, owner.label),
      ownerDisplayName: owner.displayName,
      status: b.status,
      sentAt,
      recipientCount: b.size,
    });
    if (sentAt === null) continue;
    // A blast sends one personalised email per recipient; the renewal is still sending.
    const sent = b.status === "Sending" ? Math.ceil(b.size / 2) : b.size;
    for (let i = 0; i < sent; i++) {
      const to = RECIPIENTS[i % RECIPIENTS.length] as string;
      const email = { messageId: `sandbox-${b.label}-${i}`, subject: b.name, sender: owner, blastId: id };
      if (i === sent - 1 && b.label === "webinar") {
        add("send_failed", sentAt, email, to);
        continue;
      }
      engage(email, to, new Date(sentAt.getTime() + i * 1_000));
    }
  }
  return { events, blasts };
}

/** Seeds the sandbox when missing; true when it wrote it. */
export async function seedAnalyticsSandbox(db: Db, clock: Clock, seed: string): Promise<boolean> {
  const orgId = sandboxOrgId(seed, ANALYTICS_SANDBOX.orgLabel);
  const [present] = await db.query("SELECT 1 FROM analytics.blasts WHERE org_id = $1 LIMIT 1", [orgId]);
  if (present) return false;
  const story = sandboxStory(seed, clock.now());
  await db.tx(async (q) => {
    await txStore(q).upsertBlasts(story.blasts, clock.now());
    await txStore(q).ingestEvents(story.events);
  });
  return true;
}
