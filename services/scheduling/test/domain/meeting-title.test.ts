import { describe, expect, it } from "vitest";
import { meetingTitle } from "../../src/domain/meeting-title.js";

describe("meetingTitle", () => {
  it("joins the schedule name and the attendee's name", () => {
    expect(meetingTitle("Intro call", { firstName: "Ada", lastName: "Lovelace" })).toBe("Intro call: Ada Lovelace");
  });

  it("tidies whitespace and never leaves a dangling separator", () => {
    expect(meetingTitle("  Intro   call ", { firstName: " Ada ", lastName: "King  Lovelace" })).toBe(
      "Intro call: Ada King Lovelace",
    );
    expect(meetingTitle("Intro call", { firstName: "", lastName: " " })).toBe("Intro call");
    expect(meetingTitle("", { firstName: "Ada", lastName: "" })).toBe("Ada");
  });
});
