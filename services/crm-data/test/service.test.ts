import { create, toJson } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { AccountService, ContactService, ReferenceService, TranscriptService } from "@platform/contracts/crm";
import { EmailEventKind, EmailEventRecordedSchema } from "@platform/contracts/events/email";
import { MeetingRescheduledSchema } from "@platform/contracts/events/scheduling";
import { EVENT_TYPES } from "@platform/kit/events";
import { newId } from "@platform/kit/ids";
import { problemOf } from "@platform/kit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chatVisible } from "../src/domain/chat.js";
import { seedCrmSandbox } from "../src/sandbox.js";
import { transcriptStore } from "../src/store/transcript.store.js";
import { bookedEvent, canceledEvent, createTestCrm, meetingOf, type TestCrm, TOPICS } from "./builders.js";

let t: TestCrm;
const org = newId("org_");
const otherOrg = newId("org_");

beforeAll(async () => {
  t = await createTestCrm();
  await t.admin.upsertAccounts({
    orgId: org,
    accounts: [{ crmId: "A1", name: "Analytical", rootDomain: "analytical.example" }],
  });
  await t.admin.upsertAccounts({ orgId: otherOrg, accounts: [{ crmId: "A1", name: "Elsewhere" }] });
});
afterAll(() => t.close());

const contactIdOf = async (email: string) => {
  const res = await t.caller(ContactService, org).listContacts({ email });
  return res.contacts[0]?.id as string;
};

describe("timeline projection", () => {
  it("resolves attendees when read, so a contact synced after the booking gets the meeting", async () => {
    const meeting = meetingOf({
      id: newId("mtg_"),
      orgId: org,
      start: new Date("2026-03-05T10:00:00Z"),
      updated: new Date("2026-03-01T10:00:00Z"),
      attendee: "someone@elsewhere.example",
      additional: ["Late.Sync@Analytical.example"],
    });
    await t.publish(TOPICS.scheduling, bookedEvent(meeting));
    await t.admin.upsertContacts({
      orgId: org,
      contacts: [
        {
          crmId: "C-late",
          firstName: "Late",
          lastName: "Sync",
          email: "late.sync@analytical.example",
          accountCrmId: "A1",
        },
      ],
    });
    const id = await contactIdOf("late.sync@analytical.example");
    const timeline = await t.caller(ContactService, org).listContactActivity({ contactId: id, types: ["meeting"] });
    expect(timeline.items.map((i) => i.reference.value && "id" in i.reference.value && i.reference.value.id)).toEqual([
      meeting.id,
    ]);
  });

  it("applies each event once and never lets an older version overwrite a newer one", async () => {
    await t.admin.upsertContacts({
      orgId: org,
      contacts: [
        { crmId: "C-order", firstName: "Or", lastName: "Der", email: "order@analytical.example", accountCrmId: "A1" },
      ],
    });
    const contactId = await contactIdOf("order@analytical.example");
    const id = newId("mtg_");
    const v1 = meetingOf({
      id,
      orgId: org,
      start: new Date("2026-03-05T10:00:00Z"),
      updated: new Date("2026-03-01T10:00:00Z"),
      attendee: "order@analytical.example",
    });
    const v2 = meetingOf({
      id,
      orgId: org,
      start: new Date("2026-03-06T10:00:00Z"),
      updated: new Date("2026-03-01T11:00:00Z"),
      attendee: "order@analytical.example",
    });
    const moved = {
      id: newId("evt_"),
      type: EVENT_TYPES.meetingRescheduled,
      source: "scheduling",
      time: new Date().toISOString(),
      data: toJson(MeetingRescheduledSchema, create(MeetingRescheduledSchema, { meeting: v2 })),
    };
    // The reschedule arrives first, then the booking, which is older; then the reschedule again.
    await t.publish(TOPICS.scheduling, moved, bookedEvent(v1), moved);
    const items = (await t.caller(ContactService, org).listContactActivity({ contactId })).items;
    expect(items.map((i) => i.occurredAt && new Date(Number(i.occurredAt.seconds) * 1000).toISOString())).toEqual([
      "2026-03-06T10:00:00.000Z",
    ]);
    const processed = await t.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM crm.processed_events WHERE event_id = $1",
      [moved.id],
    );
    expect(processed[0]?.n).toBe(1);
    await t.publish(
      TOPICS.scheduling,
      canceledEvent({ ...v2, updateTime: timestampFromDate(new Date("2026-03-01T12:00:00Z")) }),
    );
    expect((await t.caller(ContactService, org).listContactActivity({ contactId })).items).toEqual([]);
  });

  it("ignores another org's meetings and emails for the same address", async () => {
    await t.publish(TOPICS.email, {
      id: "evt-other-org",
      type: EVENT_TYPES.emailEventRecorded,
      source: "email",
      time: new Date().toISOString(),
      data: toJson(
        EmailEventRecordedSchema,
        create(EmailEventRecordedSchema, {
          eventId: "evt-other-org",
          orgId: otherOrg,
          kind: EmailEventKind.SEND,
          occurredAt: timestampFromDate(new Date("2026-03-01T10:00:00Z")),
          recipientEmail: "order@analytical.example",
          subject: "Not yours",
          senderDisplayName: "X",
        }),
      ),
    });
    const contactId = await contactIdOf("order@analytical.example");
    expect((await t.caller(ContactService, org).listContactActivity({ contactId, types: ["email"] })).items).toEqual(
      [],
    );
  });
});

describe("reference lookups", () => {
  it("answers only the caller's org's records", async () => {
    const [mine] = (await t.caller(AccountService, org).listAccounts({})).accounts;
    const [theirs] = (await t.caller(AccountService, otherOrg).listAccounts({})).accounts;
    const refs = t.caller(ReferenceService, org);
    const found = await refs.lookupAccounts({ accountIds: [mine?.id as string, theirs?.id as string, "junk"] });
    expect(found.accounts.map((a) => a.accountId)).toEqual([mine?.id]);
    const byEmail = await refs.lookupContactsByEmail({ emails: ["ORDER@analytical.example", "nobody@x.example"] });
    expect(byEmail.contacts).toEqual([
      expect.objectContaining({ accountId: mine?.id, displayName: "Or Der", email: "order@analytical.example" }),
    ]);
    const ids = byEmail.contacts.map((c) => c.contactId);
    expect((await refs.lookupContacts({ contactIds: ids })).contacts).toHaveLength(1);
    expect((await t.caller(ReferenceService, otherOrg).lookupContacts({ contactIds: ids })).contacts).toEqual([]);
    const ofAccount = await t
      .caller(AccountService, org)
      .listAccountContacts({ accountId: mine?.id as string, limit: 100 });
    const emails = (await refs.listAccountContactEmails({ accountId: mine?.id as string })).emails;
    expect(emails).toContain("order@analytical.example");
    expect(emails).toEqual(ofAccount.contacts.map((c) => c.email).sort());
    const foreign = t.caller(ReferenceService, otherOrg);
    expect((await foreign.listAccountContactEmails({ accountId: mine?.id as string })).emails).toEqual([]);
    expect((await refs.listAccountContactEmails({ accountId: "junk" })).emails).toEqual([]);
    expect(
      await problemOf(refs.lookupAccounts({ accountIds: Array.from({ length: 101 }, () => newId("acct_")) })),
    ).toBe("invalid-field");
  });

  it("reports transcript availability exactly when GET transcript succeeds", async () => {
    const recorded = newId("mtg_");
    const silent = newId("mtg_");
    const expired = newId("mtg_");
    const now = t.clock.now();
    const describe = (id: string, endsAgoDays: number) => ({
      orgId: org,
      meetingId: id,
      botId: newId("trs_"),
      status: "done",
      provider: "video_a",
      meetingTitle: "M",
      meetingStartTime: timestampFromDate(new Date(now.getTime() - endsAgoDays * 86_400_000 - 1_800_000)),
      meetingEndTime: timestampFromDate(new Date(now.getTime() - endsAgoDays * 86_400_000)),
    });
    await t.admin.updateBotStatus(describe(recorded, 1));
    await t.admin.updateBotStatus(describe(silent, 1));
    await t.admin.updateBotStatus(describe(expired, 400));
    const chunk = { sequence: 0, speaker: "A", language: "en", startTime: 0, endTime: 5, text: "hi" };
    await t.admin.appendTranscriptChunks({ orgId: org, meetingId: recorded, chunks: [chunk] });
    await t.admin.appendTranscriptChunks({ orgId: org, meetingId: expired, chunks: [chunk] });
    const available = await t.caller(ReferenceService, org).getTranscriptAvailability({
      meetingIds: [recorded, silent, expired, newId("mtg_")],
    });
    expect(available.availableMeetingIds).toEqual([recorded]);
    const transcripts = t.caller(TranscriptService, org);
    expect((await transcripts.getTranscript({ meetingId: recorded })).transcript?.compiledText).toBe("A: hi");
    expect(await problemOf(transcripts.getTranscript({ meetingId: silent }))).toBe("transcript-not-available");
    expect(await problemOf(transcripts.getTranscript({ meetingId: expired }))).toBe("transcript-expired");
    expect(
      (await t.caller(ReferenceService, otherOrg).getTranscriptAvailability({ meetingIds: [recorded] }))
        .availableMeetingIds,
    ).toEqual([]);
  });
});

describe("ingestion plane", () => {
  it("rejects bad input with problems and keeps a meeting's bot id", async () => {
    expect(await problemOf(t.admin.upsertAccounts({ orgId: "acme", accounts: [{ crmId: "X", name: "X" }] }))).toBe(
      "invalid-field",
    );
    expect(
      await problemOf(
        t.admin.upsertContacts({
          orgId: org,
          contacts: [{ crmId: "X", firstName: "A", lastName: "B", email: "nope" }],
        }),
      ),
    ).toBe("invalid-email");
    const meetingId = newId("mtg_");
    expect(
      await problemOf(
        t.admin.updateBotStatus({ orgId: org, meetingId, botId: newId("trs_"), status: "done", provider: "video_a" }),
      ),
    ).toBe("meeting-not-found");
    expect(
      await problemOf(
        t.admin.appendTranscriptChunks({
          orgId: org,
          meetingId,
          chunks: [{ sequence: 0, speaker: "A", language: "en", text: "x" }],
        }),
      ),
    ).toBe("bot-not-configured");
    const report = {
      orgId: org,
      meetingId,
      botId: newId("trs_"),
      status: "failed",
      provider: "video_b",
      meetingTitle: "M",
      meetingStartTime: timestampFromDate(t.clock.now()),
      meetingEndTime: timestampFromDate(t.clock.now()),
    };
    expect(await problemOf(t.admin.updateBotStatus(report))).toBe("invalid-field");
    // Providers carry the spec's neutral names only.
    expect(await problemOf(t.admin.updateBotStatus({ ...report, provider: "zoom", errorReason: "x" }))).toBe(
      "invalid-field",
    );
    const bot = await t.admin.updateBotStatus({ ...report, errorReason: "No access" });
    expect(bot.bot).toMatchObject({ status: "failed", errorReason: "No access" });
    expect(await problemOf(t.admin.updateBotStatus({ ...report, botId: newId("trs_"), status: "done" }))).toBe(
      "invalid-field",
    );
    const recovered = await t.admin.updateBotStatus({ ...report, status: "done" });
    expect(recovered.bot?.errorReason).toBeUndefined();
  });

  it("filters chat in SQL exactly as the domain rule does", async () => {
    const meetingId = newId("mtg_");
    const owner = newId("usr_");
    const other = newId("usr_");
    await t.admin.updateBotStatus({
      orgId: org,
      meetingId,
      botId: newId("trs_"),
      ownerUserId: owner,
      status: "recording",
      provider: "video_c",
      meetingTitle: "M",
      meetingStartTime: timestampFromDate(t.clock.now()),
      meetingEndTime: timestampFromDate(t.clock.now()),
    });
    const parties = ["", owner, other];
    const combos = parties.flatMap((s) => [
      ...parties.map((r) => ({ s, r, recipients: "private" })),
      { s, r: "", recipients: "everyone" },
    ]);
    await t.admin.appendChatMessages({
      orgId: org,
      meetingId,
      messages: combos.map((c, i) => ({
        sequence: i,
        sender: "S",
        senderHostId: c.s,
        recipientHostId: c.r,
        recipients: c.recipients,
        text: String(i),
        sentAt: timestampFromDate(new Date(t.clock.now().getTime() + i * 1000)),
      })),
    });
    for (const viewer of [owner, other, ""]) {
      const rows = await transcriptStore(t.db).listChat(meetingId, viewer, {
        sort: { key: { expr: "m.sent_at", type: "timestamptz", nullable: false }, descending: false },
        limit: 100,
      });
      const expected = combos
        .map((c, i) => ({
          i,
          visible: chatVisible(
            { recipients: c.recipients as "private", senderHostId: c.s || null, recipientHostId: c.r || null },
            viewer,
          ),
        }))
        .filter((x) => x.visible)
        .map((x) => String(x.i));
      expect(rows.map((r) => r.item.text)).toEqual(expected);
    }
  });
});

describe("sandbox", () => {
  it("seeds once", async () => {
    expect(await seedCrmSandbox(t.db, t.clock, "svc-test")).toBe(true);
    expect(await seedCrmSandbox(t.db, t.clock, "svc-test")).toBe(false);
  });
});
