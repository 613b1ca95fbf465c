import { ProblemError } from "@platform/kit/problems";
import { describe, expect, it } from "vitest";
import { recordingBlocked } from "../../src/domain/access.js";
import { botReport } from "../../src/domain/bot.js";
import { accountFields, chatFields, chunkFields } from "../../src/domain/ingest.js";
import { displayName, parentCompany } from "../../src/domain/records.js";

const name = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return err instanceof ProblemError ? err.problemName : String(err);
  }
  return "ok";
};

describe("parent company", () => {
  it("is the tracked account, else the raw name with a null id, else null", () => {
    const tracked = { id: "acct_p", name: "Parent" };
    expect(parentCompany({ parentCrmId: "P", parentName: "Raw" }, tracked)).toEqual(tracked);
    expect(parentCompany({ parentCrmId: "P", parentName: "Raw" }, null)).toEqual({ id: null, name: "Raw" });
    expect(parentCompany({ parentCrmId: null, parentName: null }, null)).toBeNull();
  });
  it("joins first and last name", () => {
    expect(displayName({ firstName: "Ada", lastName: "Lovelace" })).toBe("Ada Lovelace");
    expect(displayName({ firstName: "", lastName: "Plato" })).toBe("Plato");
  });
});

describe("ingestion rules", () => {
  it("normalises accounts and enforces the spec's employeeCount range", () => {
    const a = accountFields({
      crmId: " X ",
      crmUrl: "",
      name: "Acme",
      rootDomain: "Acme.Example.",
      industries: ["A", "A", " "],
    });
    expect(a).toMatchObject({ crmId: "X", rootDomain: "acme.example", industries: ["A"], employeeCount: null });
    expect(name(() => accountFields({ crmId: "X", crmUrl: "", name: "A", industries: [], employeeCount: 0 }))).toBe(
      "invalid-field",
    );
    expect(
      name(() => accountFields({ crmId: "X", crmUrl: "", name: "A", industries: [], employeeCount: 1_000_001 })),
    ).toBe("invalid-field");
    expect(name(() => accountFields({ crmId: "", crmUrl: "", name: "A", industries: [] }))).toBe("invalid-field");
    expect(
      name(() =>
        accountFields({
          crmId: "X",
          crmUrl: "",
          name: "A",
          industries: [],
          valuation: { amount: 1, currency: "EUR", asOf: "2026-02-30" },
        }),
      ),
    ).toBe("invalid-field");
  });

  it("keeps words inside their chunk and languages as ISO codes", () => {
    const base = {
      sequence: 0,
      speaker: "A",
      hostId: "",
      language: "en",
      startTime: 1,
      endTime: 2,
      text: "hi",
      words: [],
    };
    expect(chunkFields(base).hostId).toBeNull();
    expect(name(() => chunkFields({ ...base, language: "English" }))).toBe("invalid-field");
    expect(name(() => chunkFields({ ...base, startTime: 3 }))).toBe("invalid-field");
    expect(name(() => chunkFields({ ...base, words: [{ text: "hi", startTime: 1.5, endTime: 2.5 }] }))).toBe(
      "invalid-field",
    );
    expect(name(() => chunkFields({ ...base, hostId: "blake" }))).toBe("invalid-field");
  });

  it("gives private chat a recipient only when private", () => {
    const base = {
      sequence: 0,
      sender: "A",
      senderHostId: "",
      sentAt: new Date(),
      text: "x",
      recipients: "everyone",
      recipientHostId: "",
    };
    expect(chatFields(base).recipients).toBe("everyone");
    expect(name(() => chatFields({ ...base, recipients: "some" }))).toBe("invalid-field");
    expect(name(() => chatFields({ ...base, recipientHostId: "usr_0123456789abcdefghjkmnpq" }))).toBe("invalid-field");
  });

  it("sets errorReason exactly when the bot failed", () => {
    expect(botReport("failed", " boom ")).toEqual({ status: "failed", errorReason: "boom" });
    expect(botReport("done", "ignored")).toEqual({ status: "done", errorReason: null });
    expect(name(() => botReport("failed", ""))).toBe("invalid-field");
    expect(name(() => botReport("crashed", ""))).toBe("invalid-field");
  });
});

describe("recording access", () => {
  const now = new Date("2026-03-02T10:00:00Z");
  const recent = new Date("2026-03-01T10:00:00Z");
  const old = new Date("2025-03-01T10:00:00Z");

  it("checks unknown meeting, then nothing recorded, then expiry", () => {
    expect(
      recordingBlocked({ meetingEnd: undefined, hasBot: true, chunkCount: 5, hasChat: false }, now, "transcript"),
    ).toBe("meeting-not-found");
    expect(recordingBlocked({ meetingEnd: old, hasBot: false, chunkCount: 0, hasChat: false }, now, "transcript")).toBe(
      "transcript-not-available",
    );
    expect(
      recordingBlocked({ meetingEnd: recent, hasBot: true, chunkCount: 0, hasChat: false }, now, "transcript"),
    ).toBe("transcript-not-available");
    expect(recordingBlocked({ meetingEnd: old, hasBot: true, chunkCount: 5, hasChat: false }, now, "transcript")).toBe(
      "transcript-expired",
    );
    expect(
      recordingBlocked({ meetingEnd: recent, hasBot: true, chunkCount: 5, hasChat: false }, now, "transcript"),
    ).toBeUndefined();
  });

  it("lets the chat be read when the bot recorded chunks or chat, not when it recorded nothing", () => {
    const facts = { meetingEnd: recent, hasBot: true };
    expect(recordingBlocked({ ...facts, chunkCount: 0, hasChat: true }, now, "chat")).toBeUndefined();
    expect(recordingBlocked({ ...facts, chunkCount: 3, hasChat: false }, now, "chat")).toBeUndefined();
    expect(recordingBlocked({ ...facts, chunkCount: 0, hasChat: false }, now, "chat")).toBe("transcript-not-available");
    expect(recordingBlocked({ ...facts, chunkCount: 0, hasChat: true }, now, "transcript")).toBe(
      "transcript-not-available",
    );
  });
});
