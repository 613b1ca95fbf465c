import { eventually } from "@platform/kit/testing";
import { describe, expect, it } from "vitest";
import {
  BOOKED,
  base,
  CANCELED,
  call,
  clock,
  keys,
  type LoggedEvent,
  logged,
  platform,
  runCli,
  useEventsPlatform,
} from "./setup.js";

// npx platform trigger: events published through the API reach the log.

useEventsPlatform();

describe("npx platform trigger", { timeout: 90_000 }, () => {
  it("causes real events through the public API, each in the log, and frees the slot again", async () => {
    // The CLI as an integrator runs it: its own process, talking to this platform over HTTP.
    const { code, stdout, stderr } = await runCli([
      "trigger",
      "scheduling.smartscheduler.rescheduled",
      "--api-url",
      base,
      "--api-key",
      keys["acme-full"]!,
      "--json",
    ]);
    expect(code, stderr).toBe(0);
    const steps = JSON.parse(stdout) as { action: string; id: string; emits: string }[];
    expect(steps.map((s) => s.emits)).toEqual([BOOKED, "scheduling.smartscheduler.rescheduled", CANCELED]);
    const meetingId = steps[0]!.id;
    expect(meetingId).toMatch(/^mtg_/);
    await eventually(
      "the three events in the log",
      async () => ((await logged(meetingId)).length === 3 ? true : undefined),
      30_000,
    );
    expect((await call("GET", `/scheduled-meetings/${meetingId}`)).json().status).toBe("canceled");
  });
});

describe("npx platform trigger, revenue kinds", { timeout: 120_000 }, () => {
  /** Runs `trigger <kind> --json` with acme's full key; the steps it printed. */
  async function triggered(kind: string): Promise<{ action: string; id: string; emits: string }[]> {
    const { code, stdout, stderr } = await runCli([
      "trigger",
      kind,
      "--api-url",
      base,
      "--api-key",
      keys["acme-full"]!,
      "--json",
    ]);
    expect(code, stderr).toBe(0);
    return JSON.parse(stdout);
  }
  /** Waits for an event of `type` about `id` in acme's log, then finds it through GET /events. */
  async function inAcmeEvents(type: string, id: string): Promise<void> {
    await eventually(
      `${type} about ${id} in the log`,
      async () => {
        const rows = await platform.dbs.webhooks!.query(
          "SELECT 1 FROM webhooks.event_log WHERE type = $1 AND position($2 in payload::text) > 0",
          [type, id],
        );
        return rows.length > 0 ? true : undefined;
      },
      30_000,
    );
    const res = await call("GET", `/events?type=${type}&limit=100`);
    expect(res.statusCode, res.body).toBe(200);
    const items = res.json().items as LoggedEvent[];
    expect(items.some((e) => JSON.stringify(e.data).includes(id))).toBe(true);
  }

  it("revenue.deal.created creates a deal in the caller's org, named as such, and its event is in GET /events", async () => {
    const steps = await triggered("revenue.deal.created");
    expect(steps.map((s) => s.emits)).toEqual(["revenue.deal.created"]);
    const dealId = steps[0]!.id;
    expect(dealId).toMatch(/^deal_/);
    const deal = (await call("GET", `/deals/${dealId}`)).json();
    expect(deal.name).toBe("Created by platform trigger");
    await inAcmeEvents("revenue.deal.created", dealId);
  });

  it("revenue.deal.updated creates then renames a deal; both events are in GET /events", async () => {
    const steps = await triggered("revenue.deal.updated");
    expect(steps.map((s) => s.emits)).toEqual(["revenue.deal.created", "revenue.deal.updated"]);
    expect((await call("GET", `/deals/${steps[1]!.id}`)).json().name).toBe("Created by platform trigger (updated)");
    await inAcmeEvents("revenue.deal.updated", steps[1]!.id);
  });

  it("revenue.qna.created and revenue.qna.updated create and dismiss a discovery Q&A", async () => {
    const created = await triggered("revenue.qna.created");
    expect(created.map((s) => s.emits)).toEqual([
      "revenue.deal.created",
      "revenue.insight.created",
      "revenue.qna.created",
    ]);
    expect(created[2]!.id).toMatch(/^qna_/);
    await inAcmeEvents("revenue.qna.created", created[2]!.id);
    clock.advance(61_000);
    const updated = await triggered("revenue.qna.updated");
    expect(updated.at(-1)!.emits).toBe("revenue.qna.updated");
    expect((await call("GET", `/qnas/${updated.at(-1)!.id}`)).json().state).toBe("dismissed");
  });

  it("revenue.insight.item-appended creates the Problem record and appends an item; the event is in GET /events", async () => {
    const steps = await triggered("revenue.insight.item-appended");
    expect(steps.map((s) => s.emits)).toEqual([
      "revenue.deal.created",
      "revenue.insight.created",
      "revenue.insight.item-appended",
    ]);
    await inAcmeEvents("revenue.insight.item-appended", steps[2]!.id);
  });

  it("a key lacking deals:write gets one line naming the scope", async () => {
    const { code, stdout, stderr } = await runCli([
      "trigger",
      "revenue.deal.created",
      "--api-url",
      base,
      "--api-key",
      keys["acme-readonly"]!,
    ]);
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(stderr.trim().split("\n")).toHaveLength(1);
    expect(stderr).toMatch(/insufficient-scope.*deals:write/);
  });
});
