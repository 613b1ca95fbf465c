import { describe, expect, it } from "vitest";
import { createCursorCodec } from "../src/cursor.js";
import { pageOf, parseLimit, parseSort } from "../src/pagination.js";
import { ProblemError } from "../src/problems.js";

const problemOf = (fn: () => unknown): ProblemError => {
  try {
    fn();
  } catch (err) {
    if (err instanceof ProblemError) return err;
    throw err;
  }
  throw new Error("expected a problem");
};

describe("cursor codec", () => {
  const codec = createCursorCodec("test-secret-0123456789");

  it("round-trips a position under the same sort", () => {
    const cursor = codec.encode("-updatedAt", ["2026-01-15T12:00:00.000Z", "usr_1"]);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(codec.decode(cursor, "-updatedAt")).toEqual(["2026-01-15T12:00:00.000Z", "usr_1"]);
  });

  it("rejects a cursor minted under another sort", () => {
    const cursor = codec.encode("-updatedAt", ["x", "usr_1"]);
    expect(problemOf(() => codec.decode(cursor, "updatedAt")).problemName).toBe("invalid-cursor");
    expect(problemOf(() => codec.decode(cursor, "-createdAt")).problemName).toBe("invalid-cursor");
  });

  it("rejects tampered, foreign and malformed cursors", () => {
    const cursor = codec.encode("name", ["b", "usr_1"]);
    const [payload, signature] = cursor.split(".");
    const forged = `${Buffer.from(JSON.stringify(["a", "usr_0"])).toString("base64url")}.${signature}`;
    const foreign = createCursorCodec("another-secret-987654").encode("name", ["b", "usr_1"]);
    for (const bad of [forged, foreign, `${payload}.`, payload ?? "", "", "a.b.c", "not a cursor", `${cursor}x`]) {
      const p = problemOf(() => codec.decode(bad, "name"));
      expect(p.problemName).toBe("invalid-cursor");
      expect(p.status).toBe(400);
    }
  });

  it("rejects a correctly signed payload that is not a position list", () => {
    const crafted = codec.encode("name", { not: "a list" } as unknown as unknown[]);
    expect(problemOf(() => codec.decode(crafted, "name")).problemName).toBe("invalid-cursor");
  });
});

describe("parseLimit", () => {
  it("defaults, and clamps to 1..max", () => {
    expect(parseLimit(undefined)).toBe(25);
    expect(parseLimit("")).toBe(25);
    expect(parseLimit("0")).toBe(1);
    expect(parseLimit("-3")).toBe(1);
    expect(parseLimit("42")).toBe(42);
    expect(parseLimit("500")).toBe(100);
    expect(parseLimit("99999999999999999999999")).toBe(100);
    expect(parseLimit(undefined, 5, 20)).toBe(5);
    expect(parseLimit("50", 5, 20)).toBe(20);
  });

  it("rejects a non-numeric limit naming the field", () => {
    for (const raw of ["abc", "1.5", "10x", " "]) {
      const p = problemOf(() => parseLimit(raw));
      expect(p.status).toBe(400);
      expect(p.problemName).toBe("invalid-field");
      expect(p.detail).toContain("limit");
      expect(p.extensions).toEqual({ field: "limit" });
    }
  });
});

describe("parseSort", () => {
  const allowed = ["updatedAt", "createdAt", "name"];

  it("parses direction and normalises the key", () => {
    expect(parseSort(undefined, allowed, "-updatedAt")).toEqual({
      field: "updatedAt",
      descending: true,
      key: "-updatedAt",
    });
    expect(parseSort("name", allowed, "-updatedAt")).toEqual({ field: "name", descending: false, key: "name" });
    expect(parseSort("-createdAt", allowed, "-updatedAt")).toEqual({
      field: "createdAt",
      descending: true,
      key: "-createdAt",
    });
  });

  it("rejects a field outside the allowlist with the allowed fields", () => {
    const p = problemOf(() => parseSort("-email", allowed, "-updatedAt"));
    expect(p.problemName).toBe("invalid-sort-field");
    expect(p.extensions).toEqual({ field: "email", allowedSortFields: allowed });
  });
});

describe("pageOf", () => {
  const codec = createCursorCodec("test-secret-0123456789");
  const rows = [
    { id: "a", n: 1 },
    { id: "b", n: 2 },
    { id: "c", n: 3 },
  ];

  it("returns a cursor after the last item when an extra row was fetched", () => {
    const page = pageOf(rows, 2, (r) => [r.n, r.id], codec, "n");
    expect(page.items).toEqual(rows.slice(0, 2));
    expect(page.nextCursor).not.toBeNull();
    expect(codec.decode(page.nextCursor ?? "", "n")).toEqual([2, "b"]);
  });

  it("returns null on the last page", () => {
    expect(pageOf(rows, 3, (r) => [r.n, r.id], codec, "n")).toEqual({ items: rows, nextCursor: null });
    expect(pageOf([], 3, (r: { n: number }) => [r.n], codec, "n")).toEqual({ items: [], nextCursor: null });
  });
});
