import { ProblemError } from "@platform/kit/problems";
import { describe, expect, it } from "vitest";
import {
  activitySince,
  activityTypes,
  EMAIL_SEND_KIND,
  emailSendOf,
  meetingFacts,
  onTimeline,
} from "../../src/domain/activity.js";

const times = {
  start: new Date("2026-03-03T10:00:00Z"),
  end: new Date("2026-03-03T10:30:00Z"),
  updated: new Date("2026-03-01T09:00:00Z"),
};

const meeting = (over: object = {}) => ({
  id: "mtg_1",
  orgId: "org_1",
  title: "Intro",
  status: "scheduled",
  host: { displayName: "Blake Rivera" },
  attendee: { email: " Ada.Lovelace@Analytical.example " },
  additionalAttendees: ["joan@bletchley.example", "ada.lovelace@analytical.example", ""],
  smartScheduling: { preview: false },
  ...over,
});

describe("meeting projection", () => {
  it("keeps attendee and additional attendees, lower case, once each", () => {
    const facts = meetingFacts(meeting(), times, false);
    expect(facts.attendeeEmails).toEqual(["ada.lovelace@analytical.example", "joan@bletchley.example"]);
    expect(facts).toMatchObject({ hostName: "Blake Rivera", start: times.start, versionTime: times.updated });
    expect(onTimeline(facts)).toBe(true);
  });

  it("takes canceled meetings and preview bookings off the timelines", () => {
    expect(onTimeline(meetingFacts(meeting(), times, true))).toBe(false);
    expect(onTimeline(meetingFacts(meeting({ status: "canceled" }), times, false))).toBe(false);
    expect(onTimeline(meetingFacts(meeting({ smartScheduling: { preview: true } }), times, false))).toBe(false);
  });
});

describe("email sends", () => {
  const event = (kind: number, over: object = {}) => ({
    eventId: "e1",
    orgId: "org_1",
    kind,
    recipientEmail: "Grace.Hopper@cobol.example",
    subject: "Hello",
    senderDisplayName: "Casey",
    ...over,
  });
  const at = new Date("2026-03-01T09:00:00Z");

  it("turns a SEND into a timeline entry for the recipient", () => {
    expect(emailSendOf(event(EMAIL_SEND_KIND), at)).toEqual({
      eventId: "e1",
      orgId: "org_1",
      recipientEmail: "grace.hopper@cobol.example",
      occurredAt: at,
      subject: "Hello",
      senderName: "Casey",
    });
  });

  it("ignores opens, clicks, replies and incomplete events", () => {
    for (const kind of [2, 3, 4, 5, 6]) expect(emailSendOf(event(kind), at)).toBeUndefined();
    expect(emailSendOf(event(EMAIL_SEND_KIND), undefined)).toBeUndefined();
    expect(emailSendOf(event(EMAIL_SEND_KIND, { recipientEmail: "" }), at)).toBeUndefined();
  });
});

describe("timeline query", () => {
  it("means both types when none is given and rejects others with invalid-filter", () => {
    expect(activityTypes([])).toEqual(["meeting", "email"]);
    expect(activityTypes(["email", "email"])).toEqual(["email"]);
    expect(() => activityTypes(["call"])).toThrow(ProblemError);
  });

  it("looks back 12 months unless since is given", () => {
    const now = new Date("2026-03-02T10:00:00Z");
    expect(activitySince(undefined, now).toISOString()).toBe("2025-03-02T10:00:00.000Z");
    const since = new Date("2020-01-01T00:00:00Z");
    expect(activitySince(since, now)).toBe(since);
  });
});
