import { isCalendarDate as isIsoDate } from "@platform/kit/dates";
import { describe, expect, it } from "vitest";
import { answerFromInsight } from "../../src/domain/auto-close.js";
import { customFieldsMismatch, mergeCustomFields } from "../../src/domain/custom-fields.js";
import { amountProblem, checkAgainstSchema } from "../../src/domain/deal-input.js";
import { type DealSchemaRecord, schemaVersionAfterUpdate, stageOf } from "../../src/domain/deal-schema.js";
import { type FieldDefinition, valueMismatch } from "../../src/domain/field-values.js";
import { INSIGHT_PREFIXES, INSIGHT_TYPES, insightTypeOfId } from "../../src/domain/insight-types.js";

const def = (key: string, type: FieldDefinition["type"], options: string[] = []): FieldDefinition => ({
  key,
  label: key,
  type,
  options,
});

const schema: DealSchemaRecord = {
  id: "schm_x",
  orgId: "org_x",
  name: "Default",
  isDefault: true,
  version: 3,
  stages: [
    { name: "Discovery", outcome: "open" },
    { name: "Won", outcome: "won" },
    { name: "Lost", outcome: "lost" },
  ],
  customFields: [def("probability", "number"), def("tier", "string", ["gold", "silver"]), def("goLive", "date")],
  insightFields: {},
  createdAt: new Date(0),
  updatedAt: new Date(0),
};

describe("customFields merge", () => {
  it("sets present keys, removes null ones and keeps the rest (top level only)", () => {
    const current = { a: 1, b: "x", nested: { keep: true, drop: 1 } };
    expect(mergeCustomFields(current, { b: "y", a: null, c: [1], nested: { only: 2 } })).toEqual({
      b: "y",
      c: [1],
      nested: { only: 2 },
    });
    expect(current).toEqual({ a: 1, b: "x", nested: { keep: true, drop: 1 } });
  });

  it("is the identity for an empty patch", () => {
    expect(mergeCustomFields({ a: 1 }, {})).toEqual({ a: 1 });
  });
});

describe("customFields validation", () => {
  it("accepts the schema's keys with values of their types", () => {
    expect(customFieldsMismatch(schema.customFields, { probability: 40, tier: "gold", goLive: "2026-02-28" })).toBe(
      undefined,
    );
  });

  it("names an unknown key, a wrong type, an option outside the list and an impossible date", () => {
    expect(customFieldsMismatch(schema.customFields, { color: "red" })).toMatch(/no field 'color'/);
    expect(customFieldsMismatch(schema.customFields, { probability: "40" })).toMatch(/'probability' must be a number/);
    expect(customFieldsMismatch(schema.customFields, { tier: "bronze" })).toMatch(/one of: gold, silver/);
    expect(customFieldsMismatch(schema.customFields, { goLive: "2026-02-30" })).toMatch(/ISO 8601 date/);
  });
});

describe("8P value typing", () => {
  it("checks every type the schema can name, null never fitting", () => {
    const cases: [FieldDefinition["type"], unknown, boolean][] = [
      ["string", "text", true],
      ["string", 1, false],
      ["number", 2.5, true],
      ["number", "2.5", false],
      ["boolean", false, true],
      ["boolean", "false", false],
      ["array", ["a", 1], true],
      ["array", { 0: "a" }, false],
      ["object", { a: 1 }, true],
      ["object", [1], false],
      ["object", null, false],
      ["date", "2024-02-29", true],
      ["date", "2023-02-29", false],
    ];
    for (const [type, value, fits] of cases) {
      expect(valueMismatch(def("f", type), value as never) === undefined, `${type} ${JSON.stringify(value)}`).toBe(
        fits,
      );
    }
    expect(isIsoDate("2026-13-01")).toBe(false);
  });

  it("maps each 8P prefix to its type and nothing else", () => {
    INSIGHT_TYPES.forEach((t, i) => {
      expect(insightTypeOfId(`${INSIGHT_PREFIXES[i]}abc`)).toBe(t);
    });
    expect(insightTypeOfId("deal_abc")).toBeUndefined();
  });
});

describe("deal against its schema", () => {
  it("finds stages by their exact name, Won and Lost terminal", () => {
    expect(stageOf(schema, "Won")?.outcome).toBe("won");
    expect(stageOf(schema, "won")).toBeUndefined();
  });

  it("needs a currency with a value, a known stage and matching custom fields", () => {
    expect(amountProblem({ value: 10, currency: "" })).toMatch(/currency is required/);
    expect(amountProblem({ value: 10, currency: "usd" })).toMatch(/ISO 4217/);
    expect(amountProblem({ currency: "EUR" })).toBeUndefined();
    expect(checkAgainstSchema(schema, { stage: "Nope", amount: null, customFields: {} })).toEqual({
      mismatch: "stage 'Nope' is not one of: Discovery, Won, Lost",
    });
    expect(
      checkAgainstSchema(schema, { stage: "Discovery", amount: { value: 1, currency: "" }, customFields: {} }),
    ).toHaveProperty("mismatch");
    expect(checkAgainstSchema(schema, { stage: "Discovery", amount: null, customFields: { x: 1 } })).toHaveProperty(
      "mismatch",
    );
    expect(
      checkAgainstSchema(schema, { stage: "Discovery", amount: { value: 1, currency: "EUR" }, customFields: {} }),
    ).toEqual({
      stage: { name: "Discovery", outcome: "open" },
    });
  });

  it("bumps the deal's schema version to the schema's on update", () => {
    expect(schemaVersionAfterUpdate(schema)).toBe(3);
    expect(schemaVersionAfterUpdate({ version: 1 })).toBe(1);
  });
});

describe("auto-close answer", () => {
  it("keeps an existing draft, otherwise takes the insight's value as text", () => {
    expect(answerFromInsight("draft", "value")).toBe("draft");
    expect(answerFromInsight(null, "Ada owns it")).toBe("Ada owns it");
    expect(answerFromInsight(null, ["a", "b"])).toBe('["a","b"]');
  });
});
