import { sealCursor } from "@platform/gateway/http/cursor-binding";
import { createCursorCodec } from "@platform/kit/cursor";
import { ALL_SCOPES } from "@platform/kit/scopes";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { API, buildTestGateway, expectProblem, get, ORG, type TestGateway } from "./harness.js";

// The guard checks sort and cursor of every list route before the owning service runs,
// so a list whose service is not faked here (its call is a 501) still answers pagination errors exactly.
let gw: TestGateway;
let key: string;
let codec: ReturnType<typeof createCursorCodec>;

beforeAll(async () => {
  gw = await buildTestGateway();
  key = gw.identity.addToken({ orgId: ORG, scopes: [...ALL_SCOPES].filter((s) => s !== "partner:act-as-child") });
  codec = createCursorCodec(gw.config.PLATFORM_CURSOR_SECRET);
});
afterAll(async () => {
  await gw.app.close();
});
beforeEach(() => gw.clock.advance(60_000));

describe("list routes", () => {
  it("rejects a sort outside the allowlist with field and allowedSortFields", async () => {
    expectProblem(await get(gw.app, `${API}/deals?sort=-color`, key), "invalid-sort-field", {
      field: "color",
      allowedSortFields: ["updatedAt", "createdAt", "name", "closeDate", "amount"],
    });
  });

  it("rejects a sort on a list that has none", async () => {
    const chat = `${API}/scheduled-meetings/mtg_0123456789abcdefghjkmnpq/chat?sort=sentAt`;
    expectProblem(await get(gw.app, chat, key), "invalid-sort-field", { field: "sentAt", allowedSortFields: [] });
  });

  it("rejects a malformed or tampered cursor with 400 invalid-cursor", async () => {
    expectProblem(await get(gw.app, `${API}/deals?cursor=abc`, key), "invalid-cursor");
    const good = codec.encode("-updatedAt", ["2026-01-01T00:00:00.000Z", "deal_0123456789abcdefghjkmnpq"]);
    const [payload = "", mac = ""] = good.split(".");
    const forged = `${Buffer.from(JSON.stringify({ s: "-updatedAt", p: ["x"] })).toString("base64url")}.${mac}`;
    expectProblem(await get(gw.app, `${API}/deals?cursor=${forged}`, key), "invalid-cursor");
    const flipped = `${payload.slice(0, -2)}${payload.endsWith("A") ? "B" : "A"}${payload.slice(-1)}.${mac}`;
    expectProblem(await get(gw.app, `${API}/deals?cursor=${encodeURIComponent(flipped)}`, key), "invalid-cursor");
  });

  it("rejects a cursor replayed under another sort, and accepts it under its own", async () => {
    const position = ["2026-01-01T00:00:00.000Z", "deal_0123456789abcdefghjkmnpq"];
    const cursor = sealCursor(codec, codec.encode("-updatedAt", position), "-updatedAt", {
      operationId: "listDeals",
      params: {},
      orgId: ORG,
    });
    expectProblem(await get(gw.app, `${API}/deals?sort=name&cursor=${cursor}`, key), "invalid-cursor");
    // The default sort of GET /deals is -updatedAt: the same cursor passes both spellings.
    expectProblem(await get(gw.app, `${API}/deals?cursor=${cursor}`, key), "not-implemented");
    expectProblem(await get(gw.app, `${API}/deals?sort=-updatedAt&cursor=${cursor}`, key), "not-implemented");
  });

  it("rejects a non-numeric limit with 400 naming limit", async () => {
    const body = expectProblem(await get(gw.app, `${API}/deals?limit=ten`, key), "invalid-field");
    expect(body.detail).toMatch(/limit/);
  });
});
