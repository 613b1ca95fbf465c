import { create, toJson } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { EmailEventKind, EmailEventRecordedSchema } from "@platform/contracts/events/email";
import { EVENT_TYPES, TOPICS } from "@platform/kit/events";
import { toBusMessage } from "@platform/kit/outbox";
import { describe, expect, it } from "vitest";
import { acct, acme, call, clock, cont, expectProblem, mtg, ok, platform, settle, useCrmPlatform } from "./setup.js";

// Activity timelines: meetings and emails on contacts and accounts.

useCrmPlatform();

describe("activity timelines", () => {
  it("puts the sandbox meeting and the email sends on the contact's and the account's timeline", async () => {
    const ada = await ok(`/contacts/${cont("ada-lovelace")}/activity?limit=100`);
    const meeting = ada.items.find((i: { type: string }) => i.type === "meeting");
    expect(meeting).toEqual({
      type: "meeting",
      occurredAt: expect.stringMatching(/Z$/),
      reference: { id: mtg("acme-intro-completed"), title: expect.any(String), hostName: "Blake Rivera" },
    });
    const emails = ada.items.filter((i: { type: string }) => i.type === "email");
    expect(emails).toHaveLength(6);
    expect(emails[0].reference).toEqual({ subject: expect.any(String), senderName: expect.any(String) });
    const times = ada.items.map((i: { occurredAt: string }) => i.occurredAt);
    expect(times).toEqual([...times].sort().reverse());
    const account = await ok(`/accounts/${acct("analytical")}/activity?limit=100`);
    expect(account.items).toEqual(ada.items);
  });

  it("filters by type (repeatable), since, and sorts by occurredAt", async () => {
    const url = `/contacts/${cont("ada-lovelace")}/activity`;
    expect((await ok(`${url}?type=meeting`)).items.map((i: { type: string }) => i.type)).toEqual(["meeting"]);
    expect(new Set((await ok(`${url}?type=email`)).items.map((i: { type: string }) => i.type))).toEqual(
      new Set(["email"]),
    );
    expect((await ok(`${url}?type=meeting&type=email&limit=100`)).items).toHaveLength(7);
    const since = new Date(clock.now().getTime() - 10 * 86_400_000).toISOString();
    const recent = await ok(`${url}?since=${since}`);
    expect(recent.items.length).toBeGreaterThan(0);
    expect(recent.items.every((i: { occurredAt: string }) => i.occurredAt >= since)).toBe(true);
    expect(recent.items.length).toBeLessThan(7);
    const asc = (await ok(`${url}?sort=occurredAt&limit=100`)).items.map((i: { occurredAt: string }) => i.occurredAt);
    expect(asc).toEqual([...asc].sort());
    const paged = await ok(`${url}?limit=3`);
    expect(paged.items).toHaveLength(3);
    const rest = await ok(`${url}?limit=100&cursor=${encodeURIComponent(paged.nextCursor)}`);
    expect(rest.items).toHaveLength(4);
    await expectProblem(`${url}?type=call`, 400, "invalid-filter");
    await expectProblem(`${url}?since=yesterday`, 400, "invalid-filter");
    await expectProblem(`${url}?sort=type`, 400, "invalid-sort-field");
  });

  it("looks back 12 months by default; older email sends need since", async () => {
    const old = create(EmailEventRecordedSchema, {
      eventId: "crm-api-test-old-send",
      orgId: acme,
      kind: EmailEventKind.SEND,
      occurredAt: timestampFromDate(new Date(clock.now().getTime() - 400 * 86_400_000)),
      messageId: "msg-old",
      recipientEmail: "GRACE.HOPPER@cobol.example",
      subject: "Catching up after a year",
      senderDisplayName: "Casey Nguyen",
    });
    const envelope = {
      id: old.eventId,
      type: EVENT_TYPES.emailEventRecorded,
      source: "email-system",
      time: clock.now().toISOString(),
      data: toJson(EmailEventRecordedSchema, old),
    };
    // Delivered twice: the projection is idempotent by event id.
    await platform.bus.publish(TOPICS.email, [toBusMessage(envelope, acme), toBusMessage(envelope, acme)]);
    await platform.bus.idle();
    const url = `/contacts/${cont("grace-hopper")}/activity?type=email&limit=100`;
    const subjects = (await ok(url)).items.map((i: { reference: { subject: string } }) => i.reference.subject);
    expect(subjects).not.toContain("Catching up after a year");
    const all = (await ok(`${url}&since=2024-01-01`)).items.map(
      (i: { reference: { subject: string } }) => i.reference.subject,
    );
    expect(all.filter((s: string) => s === "Catching up after a year")).toHaveLength(1);
    const account = await ok(`/accounts/${acct("cobol")}/activity?type=email&since=2024-01-01T00:00:00Z&limit=100`);
    expect(account.items).toHaveLength(7);
  });

  it("keeps canceled and preview meetings off the timelines", async () => {
    const grace = await ok(`/contacts/${cont("grace-hopper")}/activity?type=meeting`);
    expect(grace.items).toEqual([]);
    const katherine = await ok(`/contacts/${cont("katherine-johnson")}/activity?type=meeting`);
    expect(katherine.items).toEqual([]);
    const alan = await ok(`/contacts/${cont("alan-turing")}/activity?type=meeting`);
    expect(alan.items.map((i: { reference: { id: string } }) => i.reference.id)).toEqual([
      mtg("acme-intro-upcoming-amer"),
    ]);
  });

  it("shows a meeting booked through the gateway on the contact's and the account's timeline, moves and drops it", async () => {
    const attendeeEmail = "charles.babbage.1@analytical.example";
    const contact = (await ok(`/contacts?email=${attendeeEmail}`)).items[0];
    expect(contact.account.id).toBe(acct("analytical"));
    const schedules = await ok("/smart-schedules?name=intro");
    const scheduleId = schedules.items[0].id as string;
    const detail = await ok(`/smart-schedules/${scheduleId}`);
    const region = detail.matchingForm.fields.find((f: { key: string }) => f.key === "region");
    const formValues = { region: region.options[0] };
    const availability = await call("POST", `/smart-schedules/${scheduleId}/availability`, {
      body: {
        formValues,
      },
    });
    expect(availability.statusCode, availability.body).toBe(200);
    const slots = availability
      .json()
      .hostGroups.flat()
      .flatMap((h: { slots: { slotToken: string; startTime: string }[] }) => h.slots);
    expect(slots.length).toBeGreaterThan(1);
    const booked = await call("POST", "/scheduled-meetings", {
      body: {
        slotToken: slots[0].slotToken,
        attendee: { firstName: "Charles", lastName: "Babbage", email: attendeeEmail.toUpperCase() },
        formValues,
        surveyResponses: { "What would you like to discuss?": "Difference engines" },
      },
    });
    expect(booked.statusCode, booked.body).toBe(201);
    const meeting = booked.json();
    await settle();

    const onContact = await ok(`/contacts/${contact.id}/activity?type=meeting`);
    expect(onContact.items).toEqual([
      {
        type: "meeting",
        occurredAt: meeting.startTime,
        reference: { id: meeting.id, title: meeting.title, hostName: meeting.host.displayName },
      },
    ]);
    const onAccount = await ok(`/accounts/${acct("analytical")}/activity?type=meeting`);
    expect(onAccount.items.map((i: { reference: { id: string } }) => i.reference.id)).toContain(meeting.id);

    // A reschedule moves the item.
    const later = slots.find(
      (s: { startTime: string }) => s.startTime > meeting.startTime && s.startTime >= meeting.endTime,
    );
    const moved = await call("PATCH", `/scheduled-meetings/${meeting.id}`, {
      body: {
        slotToken: later.slotToken,
      },
    });
    expect(moved.statusCode, moved.body).toBe(200);
    await settle();
    const afterMove = await ok(`/contacts/${contact.id}/activity?type=meeting`);
    expect(afterMove.items.map((i: { occurredAt: string }) => i.occurredAt)).toEqual([moved.json().startTime]);

    // A cancellation takes it off the timelines.
    expect((await call("DELETE", `/scheduled-meetings/${meeting.id}`)).statusCode).toBe(204);
    await settle();
    expect((await ok(`/contacts/${contact.id}/activity?type=meeting`)).items).toEqual([]);
    const afterCancel = await ok(`/accounts/${acct("analytical")}/activity?type=meeting`);
    expect(afterCancel.items.map((i: { reference: { id: string } }) => i.reference.id)).not.toContain(meeting.id);
  });
});
