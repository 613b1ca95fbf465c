import { describe, expect, it } from "vitest";
import { sharedSchemaSerializers } from "../src/serialization.js";

const shared = [
  { $id: "Money", type: "object", properties: { amount: { type: "integer" }, currency: { type: "string" } } },
  {
    $id: "Line",
    type: "object",
    properties: { sku: { type: "string" }, price: { $ref: "Money#" } },
  },
  { $id: "Unrelated", type: "object", properties: { x: { type: "string" } } },
];

const compile = sharedSchemaSerializers(shared);
const route = (schema: Record<string, unknown>) =>
  compile({ schema, method: "GET", url: "/x", httpStatus: "200" } as Parameters<typeof compile>[0]);

describe("response serializers over shared schemas", () => {
  it("follows $refs through shared schemas, and writes only declared fields", () => {
    const serialize = route({ type: "object", properties: { lines: { type: "array", items: { $ref: "Line#" } } } });
    const body = { lines: [{ sku: "A-1", price: { amount: 1250, currency: "EUR", secret: "no" }, extra: 1 }] };
    expect(JSON.parse(serialize(body))).toEqual({ lines: [{ sku: "A-1", price: { amount: 1250, currency: "EUR" } }] });
  });

  it("compiles a response schema once, whichever object carries it", () => {
    expect(route({ $ref: "Line#" })).toBe(route({ $ref: "Line#" }));
    expect(route({ $ref: "Line#" })).not.toBe(route({ $ref: "Money#" }));
  });

  it("fails to compile a reference to a schema that is not shared", () => {
    expect(() => route({ $ref: "Missing#" })).toThrow();
  });
});
