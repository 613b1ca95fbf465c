import { sandboxQnaId } from "@platform/sandbox";
import { describe, expect, it } from "vitest";
import {
  ANALYTICAL,
  account,
  call,
  contact,
  deal,
  events,
  expectProblem,
  meeting,
  occurredIn,
  platform,
  SEED,
  tokenIds,
  unknownId,
  useRevenuePlatform,
} from "./setup.js";

// 8P insights, the preview bookings they may name, and the events revenue publishes; with the
// deal PATCH errors and replays, whose updates (like the preview bookings' Q&As) are among the
// events the insights test expects on the bus, so they run first.

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

describe("preview bookings", () => {
  const PREVIEW = "acme-demo-upcoming";
  const ORBITAL = () => deal("orbital-trajectory");

  it("are meetings Q&As and insights may name, though never linked to the deal", async () => {
    // The sandbox meeting is a preview booking as scheduling reports it.
    const scheduled = await call("GET", `/scheduled-meetings/${meeting(PREVIEW)}`);
    expect(scheduled.statusCode, scheduled.body).toBe(200);
    expect(scheduled.json().smartScheduling).toMatchObject({ preview: true });

    const created = await call("POST", `/deals/${ORBITAL()}/qnas`, {
      body: {
        direction: "rfi",
        questionText: "Which trajectories will the demo cover?",
        contactId: contact("katherine-johnson"),
        occurrences: [{ meetingId: meeting(PREVIEW), occurredAt: "2026-03-06T09:10:00Z" }],
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().id as string;
    expect(created.json().occurrences).toMatchObject([{ meetingId: meeting(PREVIEW) }]);

    const forPreview = await call("GET", `/deals/${ORBITAL()}/qnas/meetings/${meeting(PREVIEW)}`);
    expect(forPreview.statusCode, forPreview.body).toBe(200);
    expect(forPreview.json().rfi.open).toMatchObject({ count: 1, items: [{ id }] });

    const answered = await call("POST", `/qnas/${id}/answer`, {
      body: { answerText: "Lunar orbits", source: { type: "meeting", meetingId: meeting(PREVIEW) }, confidence: 0.9 },
    });
    expect(answered.statusCode, answered.body).toBe(200);
    expect(answered.json().state).toBe("answered");

    expect((await call("POST", `/deals/${ORBITAL()}/insights/profile`)).statusCode).toBe(201);
    const appended = await call("POST", `/deals/${ORBITAL()}/insights/profile/fields/companyOverview`, {
      body: { value: "Computes trajectories for crewed flights.", capturedFrom: { meetingId: meeting(PREVIEW) } },
    });
    expect(appended.statusCode, appended.body).toBe(200);
    expect(appended.json().fields.companyOverview).toMatchObject([{ capturedFrom: { meetingId: meeting(PREVIEW) } }]);

    // Still no deal link: preview bookings stay out of the CRM-sync side.
    expect((await call("GET", `/deals/${ORBITAL()}/meetings`)).json().items).toEqual([]);
  });
});

describe("8P insights", () => {
  it("shows all eight records, null where absent, one by type and one by id", async () => {
    const all = (await call("GET", `/deals/${ANALYTICAL()}/insights`)).json();
    expect(Object.keys(all).sort()).toEqual(
      ["dealId", "profile", "problem", "pain", "power", "position", "phases", "process", "plan"].sort(),
    );
    expect(all.position).toBeNull();
    expect(all.problem.fields.problemStatement[0]).toMatchObject({
      importance: "high",
      rationale: "Raised twice in the intro call.",
      capturedFrom: { meetingId: meeting("acme-intro-completed"), chunkId: null },
      capturedBy: { type: "ai-agent", agentName: "deal-intel-assistant" },
    });
    const power = (await call("GET", `/deals/${ANALYTICAL()}/insights/power`)).json();
    expect(power.fields.budgetHolder).toEqual([]);
    expect((await call("GET", `/insights/${power.id}`)).json()).toEqual(power);
    await expectProblem(await call("GET", `/deals/${ANALYTICAL()}/insights/price`), 400, "invalid-schema-type");
    await expectProblem(await call("GET", `/deals/${ANALYTICAL()}/insights/position`), 404, "insight-record-not-found");
    await expectProblem(await call("GET", `/insights/${ANALYTICAL()}`), 400, "invalid-resource-id");
    await expectProblem(
      await call("GET", `/insights/${power.id}`, { as: "umbrella-full" }),
      404,
      "insight-record-not-found",
    );
  });

  it("creates records idempotently (201 then 200), appends typed items and closes linked discovery items", async () => {
    const url = `/deals/${ANALYTICAL()}/insights/position`;
    const created = await call("POST", url);
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json().fields).toEqual({ alternatives: [], differentiators: [] });
    const again = await call("POST", url, { body: {} });
    expect(again.statusCode).toBe(200);
    expect(again.json().id).toBe(created.json().id);
    await expectProblem(await call("POST", `/deals/${ANALYTICAL()}/insights/price`), 400, "invalid-schema-type");
    await expectProblem(
      await call("POST", `/deals/${ANALYTICAL()}/insights/plan`, { body: { schemaId: "schm_nope" } }),
      422,
      "schema-not-found",
    );
    await expectProblem(await call("POST", `/deals/${deal("umbrella-wonka")}/insights/plan`), 404, "deal-not-found");

    const append = (fieldKey: string, body: object) => call("POST", `${url}/fields/${fieldKey}`, { body });
    const one = await append("alternatives", {
      value: ["Jacquard Looms"],
      capturedFrom: { meetingId: meeting("acme-intro-completed") },
    });
    expect(one.statusCode, one.body).toBe(200);
    const two = await append("alternatives", {
      value: ["Build in-house"],
      importance: "low",
      rationale: "Mentioned once",
    });
    expect(two.json().fields.alternatives.map((i: { value: string[] }) => i.value)).toEqual([
      ["Jacquard Looms"],
      ["Build in-house"],
    ]);
    expect(two.json().fields.alternatives[0]).toMatchObject({
      importance: "medium",
      capturedFrom: { meetingId: meeting("acme-intro-completed") },
    });
    await expectProblem(await append("alternatives", { value: "not a list" }), 422, "insight-field-invalid");
    await expectProblem(await append("colour", { value: "red" }), 422, "insight-field-invalid");
    await expectProblem(
      await append("differentiators", { value: "x", capturedFrom: { meetingId: "mtg_0000000000000000000000zz" } }),
      404,
      "meeting-not-found",
    );
    await expectProblem(
      await call("POST", `/deals/${ANALYTICAL()}/insights/process/fields/securityReview`, { body: { value: true } }),
      404,
      "insight-record-not-found",
    );

    // The sandbox's open discovery item about the budget holder is linked to power.budgetHolder.
    const budget = sandboxQnaId(SEED, "budget-holder");
    expect((await call("GET", `/qnas/${budget}`)).json().state).toBe("open");
    const closed = await call("POST", `/deals/${ANALYTICAL()}/insights/power/fields/budgetHolder`, {
      body: { value: "Ada Lovelace" },
    });
    expect(closed.statusCode).toBe(200);
    expect((await call("GET", `/qnas/${budget}`)).json()).toMatchObject({
      state: "answered",
      answerText: "Ada Lovelace",
    });

    const summary = (await call("GET", `/deals/${ANALYTICAL()}`)).json().insightSummary;
    expect(summary.positionId).toBe(created.json().id);
    await platform.drainOutbox();
    await platform.bus.idle();
    const types = new Set(events.map((e) => e.type));
    for (const t of [
      "revenue.insight.created",
      "revenue.insight.item-appended",
      "revenue.qna.updated",
      "revenue.qna.created",
      "revenue.deal.updated",
    ]) {
      expect(types.has(t), t).toBe(true);
    }
  });
});

describe("8P insight replays, 404s and authors", () => {
  const BABBAGE = () => deal("babbage-holdings");

  it("replays a create and an append per Idempotency-Key, and refuses the key with another body", async () => {
    const url = `/deals/${BABBAGE()}/insights/pain`;
    const createKey = { "idempotency-key": "insight-create-replay" };
    const created = await call("POST", url, { headers: createKey });
    expect(created.statusCode, created.body).toBe(201);
    const createReplay = await call("POST", url, { headers: createKey });
    expect(createReplay.statusCode).toBe(201);
    expect(createReplay.headers["x-idempotent-replay"]).toBe("true");
    expect(createReplay.json()).toEqual(created.json());

    const appendUrl = `${url}/fields/consequences`;
    const appendKey = { "idempotency-key": "insight-append-replay" };
    const body = { value: "Ledgers reconciled by hand every quarter." };
    const appended = await call("POST", appendUrl, { body, headers: appendKey });
    expect(appended.statusCode, appended.body).toBe(200);
    const replay = await call("POST", appendUrl, { body, headers: appendKey });
    expect(replay.statusCode).toBe(200);
    expect(replay.headers["x-idempotent-replay"]).toBe("true");
    expect(replay.json()).toEqual(appended.json());
    // Executed once: one item, not two.
    expect((await call("GET", `/deals/${BABBAGE()}/insights/pain`)).json().fields.consequences).toHaveLength(1);
    await expectProblem(
      await call("POST", appendUrl, { body: { value: "Another consequence" }, headers: appendKey }),
      422,
      "idempotency-key-conflict",
    );
    await expectProblem(
      await call("POST", url, { body: { schemaId: "schm_other" }, headers: createKey }),
      422,
      "idempotency-key-conflict",
    );
  });

  it("404s the insights of an unknown or another org's deal", async () => {
    for (const id of [unknownId("deal_"), deal("umbrella-wonka")]) {
      await expectProblem(await call("GET", `/deals/${id}/insights`), 404, "deal-not-found");
      await expectProblem(await call("GET", `/deals/${id}/insights/profile`), 404, "deal-not-found");
    }
  });

  it("records who appended: the integration behind the token", async () => {
    const url = `/deals/${BABBAGE()}/insights/power`;
    expect((await call("POST", url)).statusCode).toBe(201);
    const res = await call("POST", `${url}/fields/decisionMakers`, { body: { value: ["Charles Babbage"] } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().fields.decisionMakers).toEqual([
      expect.objectContaining({
        value: ["Charles Babbage"],
        importance: "medium",
        rationale: null,
        capturedFrom: null,
        capturedBy: { type: "ai-agent", agentName: `integration:${tokenIds["acme-full"]}` },
      }),
    ]);
  });
});

describe("revenue events", () => {
  const ofSubject = (type: string, subject: string) => events.filter((e) => e.type === type && e.subject === subject);

  it("publish each Q&A and insight change once, with the resource as the subject", async () => {
    const created = await call("POST", `/deals/${deal("babbage-holdings")}/qnas`, {
      body: {
        direction: "rfi",
        questionText: "Who signs?",
        contactId: contact("ada-lovelace"),
        occurrences: occurredIn("acme-intro-completed"),
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    const qnaId = created.json().id as string;
    const answered = await call("POST", `/qnas/${qnaId}/answer`, {
      body: { answerText: "The board", source: { type: "manual" } },
    });
    expect(answered.statusCode).toBe(200);
    const url = `/deals/${deal("babbage-holdings")}/insights/plan`;
    const record = await call("POST", url);
    expect(record.statusCode, record.body).toBe(201);
    const recordId = record.json().id as string;
    // The 200 repeat creates nothing, so publishes nothing.
    expect((await call("POST", url)).statusCode).toBe(200);
    const appended = await call("POST", `${url}/fields/targetSignDate`, { body: { value: "2026-06-30" } });
    expect(appended.statusCode, appended.body).toBe(200);

    await platform.drainOutbox();
    await platform.bus.idle();
    expect(ofSubject("revenue.qna.created", qnaId)).toHaveLength(1);
    expect(ofSubject("revenue.qna.updated", qnaId)).toMatchObject([
      { data: { qna: { id: qnaId, state: "answered" }, previousState: "open", cause: "answer" } },
    ]);
    expect(ofSubject("revenue.insight.created", recordId)).toMatchObject([{ data: { record: { id: recordId } } }]);
    expect(ofSubject("revenue.insight.item-appended", recordId)).toMatchObject([
      { data: { recordId, dealId: deal("babbage-holdings"), schemaType: "plan", fieldKey: "targetSignDate" } },
    ]);
  });
});
