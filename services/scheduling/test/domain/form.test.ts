import { describe, expect, it } from "vitest";
import {
  assertValidFormValues,
  canonicalFormValues,
  formValuesHash,
  validateFormValues,
} from "../../src/domain/form.js";
import { aField, problemName } from "./builders.js";

const fields = [
  aField({ key: "region", type: "select", options: ["EMEA", "AMER"], required: true }),
  aField({ key: "products", type: "multi-select", options: ["crm", "voice", "ai"] }),
  aField({ key: "company", type: "text" }),
  aField({ key: "seats", type: "number" }),
  aField({ key: "existing", type: "boolean" }),
];

describe("validateFormValues", () => {
  it("accepts valid values, with optional fields absent or null", () => {
    expect(validateFormValues(fields, { region: "EMEA" })).toEqual([]);
    expect(
      validateFormValues(fields, {
        region: "AMER",
        products: ["voice", "crm"],
        company: "Acme",
        seats: 12.5,
        existing: false,
      }),
    ).toEqual([]);
    expect(validateFormValues(fields, { region: "EMEA", company: null, seats: undefined })).toEqual([]);
  });

  it("reports a required field that is missing, blank or an empty list", () => {
    const required = [aField({ key: "region", type: "select", options: ["EMEA"], required: true })];
    const multi = [aField({ key: "products", type: "multi-select", options: ["crm"], required: true })];
    for (const values of [{}, { region: "" }, { region: "   " }, { region: null }]) {
      expect(validateFormValues(required, values)).toEqual([{ field: "region", message: "is required" }]);
    }
    expect(validateFormValues(multi, { products: [] })).toEqual([{ field: "products", message: "is required" }]);
  });

  it("ignores blank answers to optional fields", () => {
    expect(validateFormValues(fields, { region: "EMEA", products: [], company: "" })).toEqual([]);
  });

  it("rejects unknown keys, sorted, after the field errors", () => {
    expect(validateFormValues(fields, { zeta: 1, region: "Mars", alpha: "x" })).toEqual([
      { field: "region", message: 'must be one of "EMEA", "AMER"' },
      { field: "alpha", message: "unknown field" },
      { field: "zeta", message: "unknown field" },
    ]);
  });

  it("does not mistake prototype properties for answers or fields", () => {
    const form = [aField({ key: "constructor", type: "text", required: true })];
    expect(validateFormValues(form, {})).toEqual([{ field: "constructor", message: "is required" }]);
    expect(validateFormValues([], JSON.parse('{"__proto__": "x"}'))).toEqual([
      { field: "__proto__", message: "unknown field" },
    ]);
  });

  it("names the expected type when the type is wrong", () => {
    expect(
      validateFormValues(fields, { region: 1, products: "crm", company: 5, seats: "5", existing: "true" }),
    ).toEqual([
      { field: "region", message: "must be a string (one of the options)" },
      { field: "products", message: "must be an array of strings (options)" },
      { field: "company", message: "must be a string" },
      { field: "seats", message: "must be a finite number" },
      { field: "existing", message: "must be a boolean" },
    ]);
  });

  it("rejects non-finite numbers", () => {
    for (const seats of [Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(validateFormValues(fields, { region: "EMEA", seats })).toEqual([
        { field: "seats", message: "must be a finite number" },
      ]);
    }
  });

  it("checks multi-select elements: strings, among the options, no duplicates", () => {
    const check = (products: unknown) => validateFormValues(fields, { region: "EMEA", products });
    expect(check(["crm", 1])).toEqual([{ field: "products", message: "must be an array of strings (options)" }]);
    expect(check(["crm", "fax"])).toEqual([
      { field: "products", message: 'contains "fax", which is not one of "crm", "voice", "ai"' },
    ]);
    expect(check(["crm", "ai", "crm"])).toEqual([{ field: "products", message: 'contains "crm" more than once' }]);
  });

  it("matches select options exactly (case and spacing count)", () => {
    expect(validateFormValues(fields, { region: "emea" })).toHaveLength(1);
    expect(validateFormValues(fields, { region: "EMEA " })).toHaveLength(1);
  });

  it("assertValidFormValues throws form-validation with fieldErrors", () => {
    expect(() => assertValidFormValues(fields, { region: "EMEA" })).not.toThrow();
    expect(problemName(() => assertValidFormValues(fields, {}))).toBe("form-validation");
    try {
      assertValidFormValues(fields, {});
    } catch (err) {
      expect((err as { extensions: unknown }).extensions).toEqual({
        fieldErrors: [{ field: "region", message: "is required" }],
      });
    }
  });
});

describe("canonical form values", () => {
  it("sorts keys and keeps multi-select order", () => {
    const canonical = canonicalFormValues({ seats: 3, b: ["voice", "crm"], a: true });
    expect(Object.keys(canonical)).toEqual(["a", "b", "seats"]);
    expect(canonical.b).toEqual(["voice", "crm"]);
  });

  it("does not share arrays with the input", () => {
    const input = { products: ["crm"] };
    const canonical = canonicalFormValues(input);
    input.products.push("ai");
    expect(canonical.products).toEqual(["crm"]);
  });

  it("hashes independently of key order but not of answer order or type", () => {
    const h = formValuesHash({ region: "EMEA", products: ["crm", "ai"], seats: 5 });
    expect(h).toMatch(/^[0-9a-f]{64}$/);
    expect(formValuesHash({ seats: 5, products: ["crm", "ai"], region: "EMEA" })).toBe(h);
    expect(formValuesHash({ region: "EMEA", products: ["ai", "crm"], seats: 5 })).not.toBe(h);
    expect(formValuesHash({ region: "EMEA", products: ["crm", "ai"], seats: "5" })).not.toBe(h);
  });
});
