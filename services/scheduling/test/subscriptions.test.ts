import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type Meeting, MeetingService, SmartScheduleService } from "@platform/contracts/scheduling";
import type { Subscription } from "@platform/kit/bus";
import { TOPICS } from "@platform/kit/events";
import { newId } from "@platform/kit/ids";
import { InProcessBus } from "@platform/kit/in-process-bus";
import { toBusMessage } from "@platform/kit/outbox";
import { startOutboxRelay } from "@platform/kit/outbox-relay";
import { capturingLogger } from "@platform/kit/testing";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { logNotifier, type Notice, type Notifier } from "../src/application/notifier.js";
import type { HostRecord, ScheduleRecord } from "../src/domain/model.js";
import { startSchedulingConsumers } from "../src/events/subscriptions.js";
import {
  anAttendee,
  createTestScheduling,
  formValues,
  givenHost,
  givenSchedule,
  SURVEY,
  silentLogger,
  type TestScheduling,
} from "./builders.js";

let t: TestScheduling;
let bus: InProcessBus;
let subscriptions: Subscription[];
let sent: Notice[];
let failNextSend: boolean;
let logLines: Record<string, unknown>[];
const acme = newId("org_");
let host: HostRecord;
let schedule: ScheduleRecord;

const notifier: Notifier = {
  async send(notice) {
    sent.push(notice);
    if (failNextSend) {
      failNextSend = false;
      throw new Error("provider down");
    }
  },
};

beforeAll(async () => {
  t = await createTestScheduling();
});
afterAll(() => t.close());
beforeEach(async () => {
  await t.reset();
  sent = [];
  failNextSend = false;
  logLines = [];
  bus = new InProcessBus();
  subscriptions = await startSchedulingConsumers({
    db: t.db,
    bus,
    logger: capturingLogger("scheduling-test", "info", logLines),
    notifier,
  });
  host = await givenHost(t.db, acme, { email: "host@acme.example" });
  schedule = await givenSchedule(t.db, acme, [host]);
});
afterEach(async () => {
  await Promise.all(subscriptions.map((s) => s.close()));
  await bus.close();
});

/** Publishes the outbox and waits until the consumers are done with it. */
async function deliver(): Promise<void> {
  const relay = startOutboxRelay({ db: t.db, bus, logger: silentLogger });
  try {
    await relay.drain();
    await bus.idle();
  } finally {
    await relay.stop();
  }
}

async function book(opts: { phone?: string; scheduleId?: string } = {}): Promise<Meeting> {
  const start = new Date("2026-01-16T09:00:00Z");
  const availability = await t.caller(SmartScheduleService, acme).getAvailability({
    scheduleId: opts.scheduleId ?? schedule.id,
    formValues: formValues({ region: "EMEA" }),
    rangeStart: timestampFromDate(start),
    rangeEnd: timestampFromDate(new Date(start.getTime() + 30 * 60_000)),
  });
  const { meeting } = await t.caller(MeetingService, acme).bookMeeting({
    slotToken: availability.hostGroups[0]?.hosts[0]?.slots[0]?.slotToken ?? "",
    attendee: anAttendee(opts.phone ? { phone: opts.phone } : {}),
    formValues: formValues({ region: "EMEA" }),
    surveyResponses: SURVEY,
  });
  if (!meeting) throw new Error("no meeting");
  return meeting;
}

const summary = () => sent.map((n) => `${n.kind}:${n.channel}:${n.recipient}:${n.to}`);

describe("notification consumer", () => {
  it("confirms a booking by email to host and attendee, and by SMS when a phone is given", async () => {
    const meeting = await book({ phone: "+14155550123" });
    await deliver();
    expect(summary()).toEqual([
      "confirmation:email:host:host@acme.example",
      "confirmation:email:attendee:ada@analytical.example",
      "confirmation:sms:attendee:+14155550123",
    ]);
    expect(sent[0]).toMatchObject({ orgId: acme, meetingId: meeting.id, title: meeting.title });
  });

  it("sends no SMS without a phone", async () => {
    await book();
    await deliver();
    expect(summary()).toEqual([
      "confirmation:email:host:host@acme.example",
      "confirmation:email:attendee:ada@analytical.example",
    ]);
  });

  it("sends no confirmation email when the schedule turns them off, the SMS still following the phone", async () => {
    const quiet = await givenSchedule(t.db, acme, [host], { sendConfirmations: false });
    await book({ scheduleId: quiet.id, phone: "+14155550123" });
    await deliver();
    expect(summary()).toEqual(["confirmation:sms:attendee:+14155550123"]);
  });

  it("announces a cancellation unless the caller suppressed it", async () => {
    const loud = await book({ phone: "+14155550123" });
    await t.caller(MeetingService, acme).cancelMeeting({ meetingId: loud.id, sendNotifications: true });
    await deliver();
    expect(summary().filter((s) => s.startsWith("cancellation"))).toEqual([
      "cancellation:email:host:host@acme.example",
      "cancellation:email:attendee:ada@analytical.example",
      "cancellation:sms:attendee:+14155550123",
    ]);

    sent = [];
    const quiet = await book({ phone: "+14155550123" });
    await deliver();
    sent = [];
    await t.caller(MeetingService, acme).cancelMeeting({ meetingId: quiet.id, sendNotifications: false });
    await deliver();
    expect(sent).toEqual([]);
  });

  it("announces a reschedule as an update", async () => {
    const meeting = await book();
    const start = new Date("2026-01-16T11:00:00Z");
    const availability = await t.caller(SmartScheduleService, acme).getAvailability({
      scheduleId: schedule.id,
      formValues: formValues({ region: "EMEA" }),
      rangeStart: timestampFromDate(start),
      rangeEnd: timestampFromDate(new Date(start.getTime() + 30 * 60_000)),
    });
    await t.caller(MeetingService, acme).rescheduleMeeting({
      meetingId: meeting.id,
      slotToken: availability.hostGroups[0]?.hosts[0]?.slots[0]?.slotToken ?? "",
    });
    await deliver();
    expect(summary().filter((s) => s.startsWith("update"))).toEqual([
      "update:email:host:host@acme.example",
      "update:email:attendee:ada@analytical.example",
    ]);
  });

  it("handles each event once, however often it is delivered", async () => {
    await book();
    const [row] = await t.db.query<{ id: string; type: string; source: string; time: Date; data: unknown }>(
      "SELECT id, type, source, time, data FROM scheduling.outbox",
    );
    if (!row) throw new Error("no outbox row");
    const message = toBusMessage({ ...row, time: row.time.toISOString() }, acme);
    await bus.publish(TOPICS.scheduling, [message, message]);
    await bus.idle();
    await bus.publish(TOPICS.scheduling, [message]);
    await bus.idle();
    expect(sent).toHaveLength(2);
  });

  it("skips unreadable messages, and logs a failed send without retrying it", async () => {
    const garbage = { key: "k", value: Buffer.from("{"), headers: { "content-type": "application/json" } };
    await bus.publish(TOPICS.scheduling, [garbage]);
    failNextSend = true;
    await book();
    await deliver();
    expect(logLines.some((l) => l.msg === "unreadable event skipped")).toBe(true);
    expect(logLines).toContainEqual(expect.objectContaining({ msg: "meeting notice failed", channel: "email" }));
    expect(summary()).toEqual([
      "confirmation:email:host:host@acme.example",
      "confirmation:email:attendee:ada@analytical.example",
    ]);
  });
});

describe("logNotifier", () => {
  it("logs one line per message naming the meeting and channel, without personal data", async () => {
    await logNotifier(capturingLogger("scheduling-test", "info", logLines)).send({
      kind: "confirmation",
      channel: "sms",
      recipient: "attendee",
      orgId: acme,
      meetingId: "mtg_1",
      to: "+14155550123",
      title: "Intro call: Ada Lovelace",
      startTime: new Date(),
      endTime: new Date(),
    });
    expect(logLines).toHaveLength(1);
    expect(logLines[0]).toMatchObject({
      msg: "meeting notice sent",
      meetingId: "mtg_1",
      channel: "sms",
      kind: "confirmation",
    });
    expect(JSON.stringify(logLines[0])).not.toMatch(/4155550123|Lovelace/);
  });
});
