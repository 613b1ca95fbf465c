import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { createClient } from "@connectrpc/connect";
import {
  AnalyticsAdminService,
  type EmailBlastMetadata,
  EmailBlastMetadataSchema,
} from "@platform/contracts/analytics";
import { EmailEventKind, type EmailEventRecorded, EmailEventRecordedSchema } from "@platform/contracts/events/email";
import { adminClientInterceptor, httpTransport } from "@platform/kit/connect";
import { isId, seededId } from "@platform/kit/ids";
import { seededRandom } from "@platform/kit/random";
import { SANDBOX, sandboxOrgId, sandboxUserId } from "@platform/sandbox";
import { type Command, InvalidArgumentError } from "commander";

// `platform sandbox generate`: realistic email activity at volume for one org, sent to
// analytics' admin plane in batches. The same seed gives the same event ids, so running it
// twice records nothing new (ingestion is idempotent by event id).

const DAY_MS = 86_400_000;

/** Plausible outbound sales email rates (per delivered email unless noted). */
export const RATES = {
  /** Pre-send failure (suppressed or invalid address), per email. */
  sendFailed: 0.01,
  /** Bounce after the send. */
  bounce: 0.02,
  /** Auto-responder reply (out of office). */
  autoReply: 0.04,
  /** At least one open; openers open 1 to 4 times. */
  open: 0.45,
  /** Of openers: a click. */
  click: 0.25,
  /** Of openers: a human reply. */
  reply: 0.12,
  /** Share of emails that belong to a blast, when there are blasts. */
  inBlast: 0.3,
} as const;

export interface Sender {
  userId: string;
  displayName: string;
}

export interface GenerateOptions {
  orgId: string;
  /** Emails to send (each to one recipient); the events number about 2.3 per email. */
  emails: number;
  days: number;
  blasts: number;
  seed: string;
  now: Date;
  senders: readonly Sender[];
  /** Stop after this many events (the benchmark's exact volume). */
  maxEvents?: number;
}

const SUBJECTS = [
  "Quick question about your pipeline",
  "Following up on our call",
  "Ideas for {company}",
  "Intro: smarter scheduling",
  "Checking in",
  "Pricing follow-up",
  "Case study you asked for",
  "Next steps",
];
const CITIES = ["Boston, US", "London, GB", "Berlin, DE", "Toronto, CA", "Austin, US", "Paris, FR", "Sydney, AU", ""];
const BLAST_NAMES = ["Product update", "Webinar invitation", "Customer newsletter", "Renewal reminder", "Event recap"];

/** The kind-specific fields of an event. */
interface EventDetail {
  autoReply?: boolean;
  location?: string;
  url?: string;
  failureReason?: string;
}

export const generatedBlastId = (seed: string, orgId: string, k: number) =>
  seededId("blast_", seed, `generated:${orgId}:${k}`);

/** The blasts of a run: spread over the period, the latest still sending. */
export function generatedBlasts(opts: GenerateOptions, recipientCounts: readonly number[]): EmailBlastMetadata[] {
  return Array.from({ length: opts.blasts }, (_, k) => {
    const owner = opts.senders[k % opts.senders.length] as Sender;
    const sentAt = blastSentAt(opts, k);
    return create(EmailBlastMetadataSchema, {
      blastId: generatedBlastId(opts.seed, opts.orgId, k),
      orgId: opts.orgId,
      name: `${BLAST_NAMES[k % BLAST_NAMES.length]} #${k + 1}`,
      templateName: BLAST_NAMES[k % BLAST_NAMES.length] as string,
      subject: `${BLAST_NAMES[k % BLAST_NAMES.length]} from our team`,
      ownerUserId: owner.userId,
      ownerDisplayName: owner.displayName,
      status: k === opts.blasts - 1 ? "Sending" : "Sent",
      sentTime: timestampFromDate(sentAt),
      recipientCount: BigInt(recipientCounts[k] ?? 0),
    });
  });
}

function blastSentAt(opts: GenerateOptions, k: number): Date {
  const span = opts.days * DAY_MS;
  return new Date(opts.now.getTime() - span + Math.floor(((k + 0.5) / Math.max(1, opts.blasts)) * span));
}

/**
 * The events of a run, email by email (so a million need not sit in memory), each email's
 * events in time order; `blastRecipients` counts each blast's emails as they are made.
 */
export function* generateEmailEvents(
  opts: GenerateOptions,
  blastRecipients: number[] = [],
): Generator<EmailEventRecorded> {
  const random = seededRandom(`${opts.seed}:${opts.orgId}`);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)] as T;
  const recipientPool = Math.max(200, Math.floor(opts.emails / 15));
  const span = opts.days * DAY_MS;
  const end = opts.now.getTime();
  let n = 0;
  for (let i = 0; i < opts.emails; i++) {
    const k = opts.blasts > 0 && random() < RATES.inBlast ? Math.floor(random() * opts.blasts) : -1;
    const sender = k >= 0 ? (opts.senders[k % opts.senders.length] as Sender) : pick(opts.senders);
    const r = Math.floor(random() * recipientPool);
    const to = `buyer${r}@company${r % 997}.example`;
    const sentAt =
      k >= 0 ? blastSentAt(opts, k).getTime() + Math.floor(random() * 3_600_000) : end - Math.floor(random() * span);
    if (k >= 0) blastRecipients[k] = (blastRecipients[k] ?? 0) + 1;
    const subject =
      k >= 0
        ? `${BLAST_NAMES[k % BLAST_NAMES.length]} from our team`
        : pick(SUBJECTS).replace("{company}", `Company ${r % 997}`);
    const base = {
      orgId: opts.orgId,
      messageId: `gen-${opts.seed}-${i}`,
      recipientEmail: to,
      subject,
      senderUserId: sender.userId,
      senderDisplayName: sender.displayName,
      blastId: k >= 0 ? generatedBlastId(opts.seed, opts.orgId, k) : "",
    };
    const events: { kind: EmailEventKind; at: number; extra?: EventDetail }[] = [];
    const after = (minMinutes: number, maxMinutes: number) =>
      sentAt + (minMinutes + Math.floor(random() * (maxMinutes - minMinutes))) * 60_000;
    if (random() < RATES.sendFailed) {
      events.push({ kind: EmailEventKind.SEND_FAILED, at: sentAt, extra: { failureReason: "suppressed address" } });
    } else {
      events.push({ kind: EmailEventKind.SEND, at: sentAt });
      if (random() < RATES.bounce) {
        events.push({ kind: EmailEventKind.BOUNCE, at: after(0, 5), extra: { failureReason: "mailbox unavailable" } });
      } else {
        if (random() < RATES.autoReply)
          events.push({ kind: EmailEventKind.REPLY, at: after(0, 3), extra: { autoReply: true } });
        if (random() < RATES.open) {
          const opens = 1 + Math.floor(random() * 4);
          for (let o = 0; o < opens; o++) {
            events.push({ kind: EmailEventKind.OPEN, at: after(5, 4 * 24 * 60), extra: { location: pick(CITIES) } });
          }
          if (random() < RATES.click) {
            events.push({
              kind: EmailEventKind.CLICK,
              at: after(10, 4 * 24 * 60),
              extra: { url: "https://example.com/demo" },
            });
          }
          if (random() < RATES.reply) events.push({ kind: EmailEventKind.REPLY, at: after(30, 5 * 24 * 60) });
        }
      }
    }
    for (const e of events.sort((a, b) => a.at - b.at)) {
      if (e.at > end) continue;
      if (opts.maxEvents !== undefined && n >= opts.maxEvents) return;
      yield create(EmailEventRecordedSchema, {
        ...base,
        ...e.extra,
        eventId: `gen:${opts.seed}:${opts.orgId}:${n++}`,
        kind: e.kind,
        occurredAt: timestampFromDate(new Date(e.at)),
      });
    }
  }
}

/** The sandbox org's senders (identity's sandbox users), or synthetic ones for another org. */
export function sendersOf(orgId: string, sandboxSeed: string): Sender[] {
  for (const org of SANDBOX.organizations) {
    if (sandboxOrgId(sandboxSeed, org.label) !== orgId) continue;
    return org.users.slice(0, 4).map((u) => ({
      userId: sandboxUserId(sandboxSeed, u.label),
      displayName: `${u.firstName} ${u.lastName}`,
    }));
  }
  return ["Alex Sender", "Sam Outreach"].map((displayName) => ({
    userId: seededId("usr_", orgId, `generated-sender:${displayName}`),
    displayName,
  }));
}

const MAX_BATCH = 5_000;

/** An option parser for an integer in min..max; commander reports a bad value as a usage error. */
function intIn(min: number, max: number) {
  return (raw: string): number => {
    const n = /^\d+$/.test(raw.trim()) ? Number(raw) : Number.NaN;
    if (!(n >= min && n <= max)) {
      throw new InvalidArgumentError(`expected an integer from ${min} to ${max.toLocaleString("en-US")}.`);
    }
    return n;
  };
}

function orgIdOption(raw: string): string {
  if (!isId("org_", raw)) throw new InvalidArgumentError("expected an org_ id.");
  return raw;
}

export interface GenerateCommandDeps {
  adminUrl(): string;
  adminSecret: string;
  sandboxSeed: string;
  now(): Date;
  out(text: string): void;
  progress(text: string): void;
}

/** Registers `generate` under the CLI's `sandbox` command. */
export function registerSandboxGenerate(sandbox: Command, deps: GenerateCommandDeps): void {
  sandbox
    .command("generate")
    .description("generate realistic email activity at volume for an org, through analytics' admin plane")
    .requiredOption(
      "--emails <n>",
      "emails to send (each yields about 2.3 events: sends, opens, clicks, replies, bounces)",
      intIn(1, 10_000_000),
    )
    .option("--org <orgId>", "organization (default: the sandbox's Acme)", orgIdOption)
    .option("--days <n>", "days the activity spreads over, ending now", intIn(1, 365), 30)
    .option("--blasts <n>", "email blasts (about 30 % of the emails belong to one)", intIn(0, 1_000), 5)
    .option("--seed <seed>", "PRNG seed; the same seed gives the same event ids, so a rerun adds nothing", "generate")
    .option("--batch <n>", `events per ingestion call (1..${MAX_BATCH})`, intIn(1, MAX_BATCH), 2_000)
    .option("--json", "print a JSON summary {orgId, events, recorded, duplicates, blasts}")
    .addHelpText(
      "after",
      `
Rates: ${Object.entries(RATES)
        .map(([k, v]) => `${k} ${v * 100}%`)
        .join(", ")}.

Examples:
  $ platform sandbox generate --emails 10000
  $ platform sandbox generate --emails 400000 --days 30 --blasts 20 --seed bench --json`,
    )
    .action(
      async (opts: {
        emails: number;
        org?: string;
        days: number;
        blasts: number;
        seed: string;
        batch: number;
        json?: boolean;
      }) => {
        const orgId = opts.org ?? sandboxOrgId(deps.sandboxSeed, "acme");
        const run: GenerateOptions = {
          orgId,
          emails: opts.emails,
          days: opts.days,
          blasts: opts.blasts,
          seed: opts.seed,
          now: deps.now(),
          senders: sendersOf(orgId, deps.sandboxSeed),
        };
        const batchSize = opts.batch;
        const admin = createClient(
          AnalyticsAdminService,
          httpTransport(deps.adminUrl(), [adminClientInterceptor(deps.adminSecret)]),
        );
        const blastRecipients: number[] = [];
        const totals = { events: 0, recorded: 0, duplicates: 0 };
        let batch: EmailEventRecorded[] = [];
        const flush = async () => {
          if (batch.length === 0) return;
          const res = await admin.ingestEmailEvents({ events: batch }, { timeoutMs: 120_000 });
          totals.events += batch.length;
          totals.recorded += res.recorded;
          totals.duplicates += res.duplicates;
          batch = [];
          deps.progress(`\r${totals.events.toLocaleString("en-US")} events ingested`);
        };
        for (const event of generateEmailEvents(run, blastRecipients)) {
          batch.push(event);
          if (batch.length >= batchSize) await flush();
        }
        await flush();
        deps.progress("\n");
        const blasts = generatedBlasts(run, blastRecipients);
        if (blasts.length > 0) await admin.upsertEmailBlasts({ blasts });
        const summary = { orgId, ...totals, blasts: blasts.length };
        if (opts.json) return deps.out(JSON.stringify(summary, null, 2));
        deps.out(
          `${orgId}: ${totals.events.toLocaleString("en-US")} events (${totals.recorded.toLocaleString("en-US")} new, ` +
            `${totals.duplicates.toLocaleString("en-US")} already recorded), ${blasts.length} blasts`,
        );
      },
    );
}
