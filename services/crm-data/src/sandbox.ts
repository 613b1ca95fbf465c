import type { Clock } from "@platform/kit/clock";
import type { Db } from "@platform/kit/db";
import {
  sandboxAccountId,
  sandboxBotId,
  sandboxContactId,
  sandboxMeetingId,
  sandboxMeetingTimes,
  sandboxOrgId,
  sandboxUserId,
  sandboxUserName as userName,
} from "@platform/sandbox";
import { appendChat, appendChunks, reportBot, upsertAccounts, upsertContacts } from "./application/ingest.js";
import type { ChatFields, ChunkFields } from "./domain/ingest.js";
import { addMonths } from "./domain/retention.js";
import { CRM_SANDBOX } from "./sandbox-data.js";
import { txStore } from "./store/index.js";

export { CRM_SANDBOX } from "./sandbox-data.js";

/*
 * The sandbox (@platform/sandbox names its orgs, users, meetings and ids): the sandbox orgs get accounts and contacts (through the same ingestion
 * functions the admin plane runs), a few weeks of email sends to the named contacts, and
 * what the recording bot captured: a long bilingual transcript with word timings and chat of
 * the past `acme-intro-completed` meeting, a recording older than the retention, and a
 * meeting whose bot failed. Meetings themselves arrive as scheduling's sandbox events; the
 * bot reports describe the meetings too, so the order of the two never matters.
 */

const MINUTE_MS = 60_000;
const DAY_MS = 24 * 60 * MINUTE_MS;
const crmIdOf = (key: string) => `SBX-${key}`;

const LINES: Record<string, string[]> = {
  en: [
    "Thanks for making the time today",
    "We would like to roll this out to forty seats",
    "How does pricing work for a team of our size",
    "Routing by region is the feature we need most",
    "Can we connect it to our existing calendar",
    "Security review usually takes two weeks on our side",
  ],
  de: [
    "Vielen Dank für die Einladung",
    "Unser Team in Berlin arbeitet hauptsächlich auf Deutsch",
    "Die Datenschutzprüfung ist für uns entscheidend",
    "Wir brauchen eine Schnittstelle zu unserem Kalender",
  ],
};

/** Chunks of `count` utterances of `seconds` each, speakers in turn, words spread over each chunk. */
function transcript(
  speakers: { name: string; hostId: string; language: string }[],
  count: number,
  seconds: number,
): ChunkFields[] {
  return Array.from({ length: count }, (_, i) => {
    const s = speakers[i % speakers.length] as (typeof speakers)[number];
    const lines = LINES[s.language] as string[];
    const text = lines[i % lines.length] as string;
    const startTime = i * seconds;
    const endTime = startTime + seconds - 1;
    const tokens = text.split(" ");
    const step = (endTime - startTime) / tokens.length;
    return {
      sequence: i,
      speaker: s.name,
      hostId: s.hostId,
      language: s.language,
      startTime,
      endTime,
      text,
      words: tokens.map((t, k) => ({
        text: t,
        startTime: Math.round((startTime + k * step) * 100) / 100,
        endTime: Math.round((startTime + (k + 1) * step) * 100) / 100,
      })),
    };
  });
}

/**
 * Writes the sandbox in one transaction. Idempotent: when its first account exists it does
 * nothing; concurrent seeders take turns on an advisory lock. Returns whether it wrote anything.
 */
export async function seedCrmSandbox(db: Db, clock: Clock, seed: string): Promise<boolean> {
  const now = clock.now();
  return db.tx(async (q) => {
    if (db.kind === "pg") await q.query("SELECT pg_advisory_xact_lock(hashtext('crm:sandbox'))");
    const w = txStore(q);
    const acme = sandboxOrgId(seed, "acme");
    if (await w.findAccount(acme, sandboxAccountId(seed, "babbage"))) return false;

    // The CRM ids are made from the records' keys; ingestion asks for the id of each CRM id,
    // which derives from the key.
    const keyOf = new Map<string, string>();
    const byKey = <R extends { key: string }>(rows: R[]): R[] => {
      for (const r of rows) keyOf.set(crmIdOf(r.key), r.key);
      return rows;
    };
    const idOf = (derive: (seed: string, key: string) => string) => (crmId: string) =>
      derive(seed, keyOf.get(crmId) ?? crmId);
    const crmRef = (kind: "accounts" | "contacts", key: string) => ({
      crmId: crmIdOf(key),
      crmUrl: `https://crm.example/${kind}/${crmIdOf(key)}`,
    });
    for (const org of new Set(CRM_SANDBOX.accounts.map((a) => a.org))) {
      const orgId = sandboxOrgId(seed, org);
      const accounts = byKey(CRM_SANDBOX.accounts.filter((a) => a.org === org));
      const accountFields = accounts.map(({ key, org: _org, parent, ...a }) => ({
        ...a,
        ...crmRef("accounts", key),
        ...(parent ? { parentCrmId: crmIdOf(parent) } : {}),
      }));
      await upsertAccounts(w, now, orgId, accountFields, idOf(sandboxAccountId));
      const contacts = byKey(CRM_SANDBOX.contacts.filter((c) => c.org === org));
      const contactFields = contacts.map(({ key, org: _org, account, ...c }) => ({
        ...c,
        ...crmRef("contacts", key),
        accountCrmId: crmIdOf(account),
      }));
      await upsertContacts(w, now, orgId, contactFields, idOf(sandboxContactId));
    }

    // Weekly sends to the named acme contacts over the last six weeks, as email events would record them.
    const senders = ["acme-ae", "acme-sdr"].map(userName);
    const named = CRM_SANDBOX.contacts.filter((c) => c.org === "acme" && !c.key.startsWith("analytical-"));
    for (const [i, c] of named.entries()) {
      for (let week = 0; week < 6; week++) {
        await w.recordEmailSend({
          eventId: `sandbox:${seed}:email:${c.key}:${week}`,
          orgId: acme,
          recipientEmail: c.email,
          occurredAt: new Date(now.getTime() - (week * 7 + i + 1) * DAY_MS),
          subject: week === 0 ? `Following up, ${c.firstName}` : `Resources for ${c.lastName} (${6 - week}/6)`,
          senderName: senders[(i + week) % senders.length] as string,
        });
      }
    }

    const host = { label: "acme-admin", id: sandboxUserId(seed, "acme-admin") };
    // The past intro with Ada: 30 minutes in English and German, and a chat with a private message.
    const completed = sandboxMeetingId(seed, "acme-intro-completed");
    // At the time scheduling's sandbox books it, so the recording lines up with the meeting.
    const { start: completedStart } = sandboxMeetingTimes(now, "acme-intro-completed");
    await reportBot(w, now, {
      orgId: acme,
      meetingId: completed,
      botId: sandboxBotId(seed, "acme-intro-completed"),
      ownerUserId: host.id,
      status: "done",
      startedAt: completedStart,
      endedAt: new Date(completedStart.getTime() + 30 * MINUTE_MS),
      joinUrl: "https://meet.platform.example/acme-intro-completed",
      provider: "video_a",
      recordingAvailable: true,
      errorReason: "",
      meeting: {
        title: "Intro call: Ada Lovelace",
        start: completedStart,
        end: new Date(completedStart.getTime() + 30 * MINUTE_MS),
      },
    });
    await appendChunks(
      w,
      acme,
      completed,
      transcript(
        [
          { name: userName(host.label), hostId: host.id, language: "en" },
          { name: "Ada Lovelace", hostId: "", language: "en" },
          { name: "Johanna Weber", hostId: "", language: "de" },
        ],
        120,
        15,
      ),
    );
    const chatAt = (minute: number) => new Date(completedStart.getTime() + minute * MINUTE_MS);
    const chat: ChatFields[] = [
      {
        sequence: 0,
        sender: userName(host.label),
        senderHostId: host.id,
        sentAt: chatAt(1),
        text: "Welcome! The agenda is in the invite.",
        recipients: "everyone",
        recipientHostId: "",
      },
      {
        sequence: 1,
        sender: "Ada Lovelace",
        senderHostId: "",
        sentAt: chatAt(4),
        text: "Could you share the pricing sheet?",
        recipients: "everyone",
        recipientHostId: "",
      },
      {
        sequence: 2,
        sender: "Ada Lovelace",
        senderHostId: "",
        sentAt: chatAt(9),
        text: "Off the record: budget is approved.",
        recipients: "private",
        recipientHostId: host.id,
      },
      {
        sequence: 3,
        sender: "Ada Lovelace",
        senderHostId: "",
        sentAt: chatAt(12),
        text: "Johanna, can you take notes?",
        recipients: "private",
        recipientHostId: "",
      },
      {
        sequence: 4,
        sender: userName(host.label),
        senderHostId: host.id,
        sentAt: chatAt(28),
        text: "Thanks all, follow-up by email.",
        recipients: "everyone",
        recipientHostId: "",
      },
    ];
    await appendChat(w, acme, completed, chat);

    // A recording past the 12-month retention, of a meeting only the bot knows.
    const archive = sandboxMeetingId(seed, "acme-archive-2025");
    const archiveEnd = addMonths(now, -13);
    await reportBot(w, now, {
      orgId: acme,
      meetingId: archive,
      botId: sandboxBotId(seed, "acme-archive-2025"),
      ownerUserId: host.id,
      status: "done",
      startedAt: new Date(archiveEnd.getTime() - 45 * MINUTE_MS),
      endedAt: archiveEnd,
      joinUrl: "https://meet.platform.example/acme-archive-2025",
      provider: "video_a",
      recordingAvailable: true,
      errorReason: "",
      meeting: {
        title: "Renewal review 2025",
        start: new Date(archiveEnd.getTime() - 45 * MINUTE_MS),
        end: archiveEnd,
      },
    });
    await appendChunks(
      w,
      acme,
      archive,
      transcript([{ name: userName(host.label), hostId: host.id, language: "en" }], 10, 20),
    );

    // A meeting whose bot never got in.
    const failed = sandboxMeetingId(seed, "acme-failed-recording");
    const failedStart = new Date(now.getTime() - 3 * DAY_MS);
    await reportBot(w, now, {
      orgId: acme,
      meetingId: failed,
      botId: sandboxBotId(seed, "acme-failed-recording"),
      ownerUserId: host.id,
      status: "failed",
      startedAt: failedStart,
      endedAt: new Date(failedStart.getTime() + 10 * MINUTE_MS),
      joinUrl: "https://meet.platform.example/acme-failed-recording",
      provider: "video_b",
      recordingAvailable: false,
      errorReason: "The bot was not admitted from the waiting room before the meeting ended.",
      meeting: { title: "Pipeline review", start: failedStart, end: new Date(failedStart.getTime() + 30 * MINUTE_MS) },
    });
    return true;
  });
}
