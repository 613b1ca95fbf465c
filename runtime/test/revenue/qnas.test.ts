import { sandboxQnaId } from "@platform/sandbox";
import { describe, expect, it } from "vitest";
import {
  ANALYTICAL,
  call,
  contact,
  deal,
  expectProblem,
  meeting,
  occurredIn,
  platform,
  SEED,
  unknownId,
  useRevenuePlatform,
} from "./setup.js";

// Q&As: the lifecycle, optional transition bodies, errors, defaults and shape.

useRevenuePlatform();

describe("Q&As", () => {
  it("shows the backlog in six buckets, also filtered by meeting", async () => {
    const backlog = (await call("GET", `/deals/${ANALYTICAL()}/qnas`)).json();
    for (const direction of ["discovery", "rfi"]) {
      for (const state of ["open", "answered", "dismissed"]) {
        expect(backlog[direction][state].count, `${direction}.${state}`).toBeGreaterThanOrEqual(1);
        expect(backlog[direction][state].items.every((q: { state: string }) => q.state === state)).toBe(true);
      }
    }
    const item = backlog.rfi.open.items.find((q: { id: string }) => q.id === sandboxQnaId(SEED, "sso"));
    expect(item).toMatchObject({
      direction: "rfi",
      linkedInsight: null,
      contact: { id: contact("ada-lovelace"), displayName: "Ada Lovelace" },
      answerText: null,
      occurrences: [{ meetingId: meeting("acme-intro-completed"), source: "ai-agent" }],
    });
    const forMeeting = (
      await call("GET", `/deals/${ANALYTICAL()}/qnas/meetings/${meeting("acme-intro-completed")}`)
    ).json();
    expect(forMeeting.rfi.open.count).toBe(backlog.rfi.open.count);
    const unrelated = (
      await call("GET", `/deals/${ANALYTICAL()}/qnas/meetings/${meeting("acme-intro-canceled")}`)
    ).json();
    expect(unrelated.discovery.open).toEqual({ count: 0, items: [] });
    expect(unrelated.rfi.dismissed).toEqual({ count: 0, items: [] });
    await expectProblem(
      await call("GET", `/deals/${ANALYTICAL()}/qnas/meetings/mtg_0000000000000000000000zz`),
      404,
      "meeting-not-found",
    );
    await expectProblem(await call("GET", `/deals/${deal("umbrella-wonka")}/qnas`), 404, "deal-not-found");
  });

  it("creates items of both directions and refuses invalid shapes", async () => {
    const occurrences = [{ meetingId: meeting("acme-intro-completed"), occurredAt: "2026-02-27T10:05:00Z" }];
    const url = `/deals/${ANALYTICAL()}/qnas`;
    const created = await call("POST", url, {
      body: {
        direction: "discovery",
        questionText: "What is the rollout date?",
        linkedInsight: { schemaType: "plan", fieldKey: "targetSignDate" },
        occurrences,
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json()).toMatchObject({ state: "open", importance: "medium", contact: null, answerText: null });
    const rfi = await call("POST", url, {
      body: {
        direction: "rfi",
        questionText: "Is there an on-premise option?",
        contactId: contact("ada-lovelace"),
        importance: "high",
        occurrences,
      },
    });
    expect(rfi.statusCode).toBe(201);
    await expectProblem(
      await call("POST", url, { body: { direction: "discovery", questionText: "q", occurrences } }),
      422,
      "qna-shape-invalid",
    );
    await expectProblem(
      await call("POST", url, { body: { direction: "rfi", questionText: "q", occurrences } }),
      422,
      "qna-shape-invalid",
    );
    await expectProblem(
      await call("POST", url, {
        body: {
          direction: "discovery",
          questionText: "q",
          linkedInsight: { schemaType: "plan", fieldKey: "colour" },
          occurrences,
        },
      }),
      422,
      "insight-field-invalid",
    );
    await expectProblem(
      await call("POST", url, {
        body: { direction: "rfi", questionText: "q", contactId: contact("umbrella-charlie"), occurrences },
      }),
      404,
      "contact-not-found",
    );
    await expectProblem(
      await call("POST", url, {
        body: {
          direction: "rfi",
          questionText: "q",
          contactId: contact("ada-lovelace"),
          occurrences: [{ ...occurrences[0], meetingId: "mtg_0000000000000000000000zz" }],
        },
      }),
      404,
      "meeting-not-found",
    );
    await expectProblem(
      await call("POST", url, {
        body: { direction: "rfi", questionText: "q", contactId: contact("ada-lovelace"), occurrences },
        headers: { "idempotency-key": "" },
      }),
      400,
      "idempotency-key-required",
    );
  });

  it("answers by confidence and moves items only as the state table allows", async () => {
    const url = `/deals/${ANALYTICAL()}/qnas`;
    const occurrences = [{ meetingId: meeting("acme-intro-completed"), occurredAt: "2026-02-27T10:05:00Z" }];
    const { id } = (
      await call("POST", url, {
        body: { direction: "rfi", questionText: "Can we pay yearly?", contactId: contact("ada-lovelace"), occurrences },
      })
    ).json();
    const draft = await call("POST", `/qnas/${id}/answer`, {
      body: { answerText: "Probably", source: { type: "grounding-doc", documentId: "doc-7" } },
    });
    expect(draft.statusCode, draft.body).toBe(200);
    expect(draft.json()).toMatchObject({ state: "open", answerText: "Probably" });
    await expectProblem(
      await call("POST", `/qnas/${id}/answer`, { body: { answerText: "x", source: { type: "meeting" } } }),
      422,
      "answer-source-invalid",
    );
    await expectProblem(
      await call("POST", `/qnas/${id}/answer`, { body: { answerText: "x", source: { type: "grounding-doc" } } }),
      422,
      "answer-source-invalid",
    );
    const answered = await call("POST", `/qnas/${id}/answer`, {
      body: {
        answerText: "Yes, yearly in advance",
        source: { type: "meeting", meetingId: meeting("acme-intro-completed") },
        confidence: 0.9,
      },
    });
    expect(answered.json()).toMatchObject({ state: "answered", answerText: "Yes, yearly in advance" });

    const move = (target: string) => call("POST", `/qnas/${id}/transitions/${target}`, { body: { reason: "test" } });
    await expectProblem(await move("answered"), 409, "qna-transition-invalid", { currentState: "answered" });
    expect((await move("open")).json().state).toBe("open");
    expect((await move("dismissed")).json().state).toBe("dismissed");
    await expectProblem(await move("answered"), 409, "qna-transition-invalid", { currentState: "dismissed" });
    await expectProblem(
      await call("POST", `/qnas/${id}/answer`, { body: { answerText: "x", source: { type: "manual" } } }),
      409,
      "qna-transition-invalid",
      {
        currentState: "dismissed",
      },
    );
    expect((await move("open")).json().state).toBe("open");
    expect((await move("answered")).json().state).toBe("answered");
    expect((await move("dismissed")).json().state).toBe("dismissed");
    await expectProblem(await move("closed"), 400, "invalid-target-state");
    await expectProblem(
      await call("POST", "/qnas/qna_0000000000000000000000zz/transitions/open"),
      404,
      "qna-item-not-found",
    );
    expect((await call("GET", `/qnas/${id}`)).json().state).toBe("dismissed");
    await expectProblem(await call("GET", "/qnas/qna_0000000000000000000000zz"), 404, "qna-item-not-found");
    await expectProblem(
      await call("GET", `/qnas/${sandboxQnaId(SEED, "sso")}`, { as: "umbrella-full" }),
      404,
      "qna-item-not-found",
    );
  });
});

describe("optional bodies", () => {
  it("accept no body or an object, and refuse unknown fields and non-objects", async () => {
    const budget = sandboxQnaId(SEED, "punch-cards");
    const reopened = await call("POST", `/qnas/${budget}/transitions/open`);
    expect(reopened.statusCode, reopened.body).toBe(200);
    await expectProblem(
      await call("POST", `/qnas/${budget}/transitions/dismissed`, { body: { why: "x" } }),
      400,
      "invalid-field",
      {
        field: "why",
      },
    );
    await expectProblem(
      await call("POST", `/qnas/${budget}/transitions/dismissed`, { body: [1] }),
      400,
      "invalid-field",
    );
    await expectProblem(
      await call("POST", `/deals/${ANALYTICAL()}/insights/plan`, { body: { schema: "x" } }),
      400,
      "invalid-field",
    );
  });
});

describe("Q&A errors, defaults and shape", () => {
  it("answers exactly the spec's Q&A fields", async () => {
    const res = await call("GET", `/qnas/${sandboxQnaId(SEED, "sso")}`);
    expect(res.statusCode).toBe(200);
    expect(Object.keys(res.json()).sort()).toEqual(
      [
        "id",
        "direction",
        "state",
        "questionText",
        "answerText",
        "importance",
        "linkedInsight",
        "contact",
        "occurrences",
        "createdAt",
        "updatedAt",
      ].sort(),
    );
    const backlog = (await call("GET", `/deals/${ANALYTICAL()}/qnas`)).json();
    expect(backlog.dealId).toBe(ANALYTICAL());
    expect(backlog.rfi.open.items[0]).not.toHaveProperty("dealId");
  });

  it("404s a create on an unknown deal and an answer to an unknown item", async () => {
    const body = {
      direction: "rfi",
      questionText: "Any item?",
      contactId: contact("ada-lovelace"),
      occurrences: occurredIn("acme-intro-completed"),
    };
    await expectProblem(await call("POST", `/deals/${unknownId("deal_")}/qnas`, { body }), 404, "deal-not-found");
    await expectProblem(await call("POST", `/deals/${deal("umbrella-wonka")}/qnas`, { body }), 404, "deal-not-found");
    await expectProblem(
      await call("POST", `/qnas/${unknownId("qna_")}/answer`, {
        body: { answerText: "x", source: { type: "manual" } },
      }),
      404,
      "qna-item-not-found",
    );
  });

  it("refuses an unknown direction and an item without occurrences as qna-shape-invalid", async () => {
    const url = `/deals/${ANALYTICAL()}/qnas`;
    const rfi = {
      questionText: "q",
      contactId: contact("ada-lovelace"),
      occurrences: occurredIn("acme-intro-completed"),
    };
    await expectProblem(await call("POST", url, { body: { ...rfi, direction: "sideways" } }), 422, "qna-shape-invalid");
    await expectProblem(
      await call("POST", url, { body: { ...rfi, direction: "rfi", occurrences: [] } }),
      422,
      "qna-shape-invalid",
    );
    await expectProblem(
      await call("POST", url, {
        body: {
          direction: "discovery",
          questionText: "q",
          linkedInsight: { schemaType: "plan", fieldKey: "targetSignDate" },
          occurrences: [],
        },
      }),
      422,
      "qna-shape-invalid",
    );
  });

  it("refuses open → open with 409 and currentState", async () => {
    const created = await call("POST", `/deals/${ANALYTICAL()}/qnas`, {
      body: {
        direction: "rfi",
        questionText: "Stay open?",
        contactId: contact("ada-lovelace"),
        occurrences: occurredIn("acme-intro-completed"),
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    await expectProblem(
      await call("POST", `/qnas/${created.json().id}/transitions/open`),
      409,
      "qna-transition-invalid",
      { currentState: "open" },
    );
  });

  it("defaults the confidence per source type: 1.0 manual, 0.5 grounding-doc and external, 0.8/0.6 meeting", async () => {
    const cases = [
      { source: { type: "manual" }, confidence: 1, state: "answered" },
      { source: { type: "grounding-doc", documentId: "doc-1" }, confidence: 0.5, state: "open" },
      { source: { type: "external" }, confidence: 0.5, state: "open" },
      {
        source: { type: "meeting", meetingId: meeting("acme-intro-completed"), chunkId: "chunk-3" },
        confidence: 0.8,
        state: "answered",
      },
      // The meeting as a whole scores exactly the threshold: it answers.
      { source: { type: "meeting", meetingId: meeting("acme-intro-completed") }, confidence: 0.6, state: "answered" },
    ];
    for (const c of cases) {
      const created = await call("POST", `/deals/${ANALYTICAL()}/qnas`, {
        body: {
          direction: "rfi",
          questionText: `Answered from ${c.source.type}?`,
          contactId: contact("ada-lovelace"),
          occurrences: occurredIn("acme-intro-completed"),
        },
      });
      expect(created.statusCode, created.body).toBe(201);
      const id = created.json().id as string;
      const answered = await call("POST", `/qnas/${id}/answer`, {
        body: { answerText: `From ${c.source.type}`, source: c.source },
      });
      expect(answered.statusCode, answered.body).toBe(200);
      // Below 0.6 the answer stays as a draft on the open item.
      expect(answered.json(), c.source.type).toMatchObject({ state: c.state, answerText: `From ${c.source.type}` });
      // The REST item carries no confidence; the stored answer shows the default applied.
      const [row] =
        (await platform.dbs.revenue?.query<{ confidence: string }>(
          "SELECT answer ->> 'confidence' AS confidence FROM revenue.qnas WHERE id = $1",
          [id],
        )) ?? [];
      expect(Number(row?.confidence), c.source.type).toBe(c.confidence);
    }
  });
});
