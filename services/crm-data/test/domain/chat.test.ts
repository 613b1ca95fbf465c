import { describe, expect, it } from "vitest";
import { chatVisible } from "../../src/domain/chat.js";

const owner = "usr_owner";

describe("chat privacy", () => {
  it("always shows messages to everyone", () => {
    expect(chatVisible({ recipients: "everyone", senderHostId: null, recipientHostId: null }, owner)).toBe(true);
    expect(chatVisible({ recipients: "everyone", senderHostId: null, recipientHostId: null }, "")).toBe(true);
  });

  it("shows a private message only when the bot's owner sent or received it", () => {
    expect(chatVisible({ recipients: "private", senderHostId: owner, recipientHostId: null }, owner)).toBe(true);
    expect(chatVisible({ recipients: "private", senderHostId: null, recipientHostId: owner }, owner)).toBe(true);
    expect(chatVisible({ recipients: "private", senderHostId: "usr_other", recipientHostId: null }, owner)).toBe(false);
    expect(chatVisible({ recipients: "private", senderHostId: null, recipientHostId: null }, owner)).toBe(false);
  });

  it("hides every private message of a bot without an owner", () => {
    expect(chatVisible({ recipients: "private", senderHostId: null, recipientHostId: null }, "")).toBe(false);
  });
});
