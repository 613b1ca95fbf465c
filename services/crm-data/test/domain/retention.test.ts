import { describe, expect, it } from "vitest";
import { addMonths, transcriptExpired, transcriptExpiresAt } from "../../src/domain/retention.js";

describe("transcript retention", () => {
  it("ends 12 calendar months after the meeting end", () => {
    const end = new Date("2025-03-02T10:30:00Z");
    expect(transcriptExpiresAt(end).toISOString()).toBe("2026-03-02T10:30:00.000Z");
    expect(transcriptExpired(end, new Date("2026-03-02T10:29:59.999Z"))).toBe(false);
    expect(transcriptExpired(end, new Date("2026-03-02T10:30:00Z"))).toBe(true);
  });

  it("counts from the end, not the start, of the meeting", () => {
    const now = new Date("2026-03-02T10:15:00Z");
    expect(transcriptExpired(new Date("2025-03-02T10:00:00Z"), now)).toBe(true);
    expect(transcriptExpired(new Date("2025-03-02T10:30:00Z"), now)).toBe(false);
  });

  it("clamps month ends and leap days", () => {
    expect(addMonths(new Date("2024-02-29T00:00:00Z"), 12).toISOString()).toBe("2025-02-28T00:00:00.000Z");
    expect(addMonths(new Date("2026-01-31T12:00:00Z"), 1).toISOString()).toBe("2026-02-28T12:00:00.000Z");
    expect(addMonths(new Date("2026-03-31T12:00:00Z"), -12).toISOString()).toBe("2025-03-31T12:00:00.000Z");
  });
});
