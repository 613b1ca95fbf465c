import { describe, expect, it } from "vitest";
import { idFault, newId, parseId } from "../src/ids.js";

// Issue 56, point 7: a refused path id names what is wrong with it (the status and type stay
// the spec's: 400 invalid-resource-id).
const refusal = (prefix: string | string[], raw: string) => {
  try {
    parseId(prefix, raw, "dealId");
  } catch (err) {
    return err as { status: number; problemName: string; detail: string; message: string };
  }
  throw new Error(`${raw} was accepted`);
};

describe("invalid-resource-id details", () => {
  it("names the length when the prefix is right", () => {
    const err = refusal("deal_", "deal_123");
    expect(err).toMatchObject({ status: 400, problemName: "invalid-resource-id" });
    expect(err.message).toBe("dealId 'deal_123' is not a valid resource id: after deal_ come 24 characters, not 3");
    expect(err.message).not.toContain("expected prefix");
  });

  it("names the characters outside the alphabet when the length is right", () => {
    const raw = `deal_${"A".repeat(23)}i`;
    expect(idFault("deal_", raw)).toBe(
      "after deal_ come only 0-9 and lowercase a-z without i, l, o and u, not 'A', 'i'",
    );
  });

  it("names the expected prefixes when the prefix is wrong", () => {
    expect(refusal(["ins_", "qna_"], "deal_x").message).toContain("expected prefix ins_, qna_");
  });

  it("accepts every id the platform makes", () => {
    const id = newId("deal_");
    expect(parseId("deal_", id)).toBe(id);
  });
});
