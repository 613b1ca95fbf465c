import { ALL_SCOPES } from "@platform/kit/scopes";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openApiDocument } from "../../scripts/openapi-document.js";
import { API, buildTestGateway, expectProblem, get, ORG, type TestGateway } from "./harness.js";

// Issue 56 on the gateway's side: sort allowlists as enums in the document (typed clients get
// unions) without changing what the spec answers, enum errors that list the values, and the
// revenue webhook payloads described field by field.
let gw: TestGateway;
let key: string;

beforeAll(async () => {
  gw = await buildTestGateway();
  key = gw.identity.addToken({ orgId: ORG, scopes: [...ALL_SCOPES].filter((s) => s !== "partner:act-as-child") });
});
afterAll(async () => {
  await gw.app.close();
});

type Json = Record<string, unknown>;
/** The value at `path` of a JSON document (array indexes as numbers). */
function dig(value: unknown, ...path: (string | number)[]): Json {
  let at = value;
  for (const key of path) at = (at as Record<string | number, unknown> | undefined)?.[key];
  return at as Json;
}

describe("sort as an enum", () => {
  it("documents each list's sort allowlist, both directions, as the enum of its sort parameter", async () => {
    const doc = await openApiDocument({});
    const parameters = dig(doc, "paths", `${API}/deals`, "get", "parameters") as unknown as Json[];
    const sort = parameters.find((p) => p.name === "sort");
    expect(dig(sort, "schema", "enum")).toEqual([
      "updatedAt",
      "-updatedAt",
      "createdAt",
      "-createdAt",
      "name",
      "-name",
      "closeDate",
      "-closeDate",
      "amount",
      "-amount",
    ]);
  });

  it("still answers a sort outside the allowlist with invalid-sort-field, and passes what the guard accepts", async () => {
    expectProblem(await get(gw.app, `${API}/deals?sort=nam`, key), "invalid-sort-field", { field: "nam" });
    // Accepted by the guard (trimmed, or empty for the default): the schema passes them on to
    // the service, which this harness does not fake (501), instead of refusing them.
    for (const sort of ["%20name%20", "", "-amount"]) {
      const res = await get(gw.app, `${API}/deals?sort=${sort}`, key);
      expect(res.json().type, `sort=${sort}`).toMatch(/not-implemented$/);
    }
  });
});

describe("an enum value that is not one of them", () => {
  it("names the allowed values", async () => {
    const res = await get(gw.app, `${API}/events?type=revenue.deal.creatd`, key);
    expect(res.statusCode).toBe(400);
    expect(res.json().type).toMatch(/invalid-filter$/);
    expect(res.json().detail).toMatch(
      /^Query parameter 'type' must be one of: scheduling\.smartscheduler\.booked, .*revenue\.deal\.created/,
    );
  });
});

describe("revenue webhook payloads", () => {
  it("describe each kind's data field by field, from its proto message", async () => {
    const doc = await openApiDocument({});
    // The v2 body of a kind: allOf [the envelope, the kind's own type and data].
    const dataOf = (kind: string) =>
      dig(doc, "webhooks", kind, "post", "requestBody", "content", "application/json", "schema", "oneOf", 0, "allOf", 1)
        .properties as Json;
    const propertiesOf = (kind: string) => dig(dataOf(kind), "data", "properties");
    expect(dig(propertiesOf("revenue.deal.created"), "deal", "properties")).toMatchObject({
      id: { type: "string" },
      stage: { type: "string" },
      createTime: { type: "string", format: "date-time" },
    });
    expect(propertiesOf("revenue.deal.updated").previousStage).toEqual({ type: "string" });
    expect(Object.keys(propertiesOf("revenue.insight.item-appended"))).toEqual([
      "recordId",
      "dealId",
      "orgId",
      "schemaType",
      "fieldKey",
      "item",
    ]);
    for (const kind of ["revenue.qna.created", "revenue.qna.updated", "revenue.insight.created"]) {
      expect(Object.keys(propertiesOf(kind) ?? {}).length, kind).toBeGreaterThan(0);
    }
  });
});
