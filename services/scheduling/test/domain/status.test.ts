import { describe, expect, it } from "vitest";
import { meetingStatus } from "../../src/domain/status.js";

const end = new Date("2026-03-10T15:00:00.000Z");
const before = new Date(end.getTime() - 1);
const after = new Date(end.getTime() + 1);

describe("meetingStatus", () => {
  it("is scheduled until the end time and completed from it on", () => {
    expect(meetingStatus({ end, canceledAt: null }, before)).toBe("scheduled");
    expect(meetingStatus({ end, canceledAt: null }, end)).toBe("completed");
    expect(meetingStatus({ end, canceledAt: null }, after)).toBe("completed");
  });

  it("is canceled whenever canceled, before or after the end", () => {
    const canceledAt = new Date("2026-03-09T10:00:00.000Z");
    expect(meetingStatus({ end, canceledAt }, before)).toBe("canceled");
    expect(meetingStatus({ end, canceledAt }, after)).toBe("canceled");
    expect(meetingStatus({ end, canceledAt: after }, after)).toBe("canceled");
  });
});
