import { describe, expect, it } from "vitest";
import { account, call, contact, deal, expectProblem, unknownId, useRevenuePlatform } from "./setup.js";

// Deal PATCH errors, replays and the order of their checks.

useRevenuePlatform();

describe("deal PATCH errors, replays and their order", () => {
  async function freshDeal(name: string) {
    const res = await call("POST", "/deals", { body: { name, accountId: account("analytical"), stage: "Discovery" } });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().id as string;
  }

  it("refuses another org's contact and a CRM id another deal has, with the problem's members", async () => {
    const id = await freshDeal("PATCH errors");
    await expectProblem(
      await call("PATCH", `/deals/${id}`, { body: { primaryContactId: contact("umbrella-charlie") } }),
      404,
      "contact-not-found",
    );
    await expectProblem(
      await call("PATCH", `/deals/${id}`, { body: { sourceRefs: { crm: { id: "006Acme000000001AAA" } } } }),
      422,
      "source-ref-conflict",
      { sourceType: "crm", sourceId: "006Acme000000001AAA" },
    );
    // Neither refusal changed the deal.
    expect((await call("GET", `/deals/${id}`)).json()).toMatchObject({ primaryContact: null, sourceRefs: {} });
  });

  it("replays a PATCH per Idempotency-Key, refuses the key with another body, and requires a key", async () => {
    const id = await freshDeal("PATCH replay");
    const headers = { "idempotency-key": `patch-replay-${id}` };
    const first = await call("PATCH", `/deals/${id}`, { body: { name: "Renamed once" }, headers });
    expect(first.statusCode, first.body).toBe(200);
    expect(first.headers["x-idempotent-replay"]).toBeUndefined();
    // A change in between: the replay still answers what the first request got.
    const between = await call("PATCH", `/deals/${id}`, { body: { name: "Renamed twice" } });
    expect(between.statusCode).toBe(200);
    const replay = await call("PATCH", `/deals/${id}`, { body: { name: "Renamed once" }, headers });
    expect(replay.statusCode).toBe(200);
    expect(replay.headers["x-idempotent-replay"]).toBe("true");
    expect(replay.json()).toEqual(first.json());
    expect((await call("GET", `/deals/${id}`)).json().name).toBe("Renamed twice");
    await expectProblem(
      await call("PATCH", `/deals/${id}`, { body: { name: "Something else" }, headers }),
      422,
      "idempotency-key-conflict",
    );
    // The spec requires Idempotency-Key on PATCH /deals; the gateway refuses a missing or empty one.
    await expectProblem(
      await call("PATCH", `/deals/${id}`, { body: { name: "No key" }, headers: { "idempotency-key": "" } }),
      400,
      "idempotency-key-required",
    );
  });

  it("closes a deal moved to Won: any PATCH is then 409 deal-closed, even one naming an unknown account", async () => {
    const id = await freshDeal("Won by PATCH");
    const won = await call("PATCH", `/deals/${id}`, { body: { stage: "Won" } });
    expect(won.statusCode, won.body).toBe(200);
    expect(won.json().stage).toBe("Won");
    for (const body of [
      { name: "Reopened?" },
      { stage: "Discovery" },
      { customFields: { probability: 100 } },
      { accountId: unknownId("acct_") },
      { accountId: account("umbrella-wonka") },
      { primaryContactId: unknownId("cont_") },
    ]) {
      await expectProblem(await call("PATCH", `/deals/${id}`, { body }), 409, "deal-closed", { stage: "Won" });
    }
  });

  it("answers deal-not-found for an unknown deal before looking at the account the body names", async () => {
    await expectProblem(
      await call("PATCH", `/deals/${unknownId("deal_")}`, { body: { accountId: unknownId("acct_") } }),
      404,
      "deal-not-found",
    );
    await expectProblem(
      await call("PATCH", `/deals/${deal("umbrella-wonka")}`, { body: { primaryContactId: unknownId("cont_") } }),
      404,
      "deal-not-found",
    );
  });
});
