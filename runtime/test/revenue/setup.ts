import { TOPICS } from "@platform/kit/events";
import { decodeEvent } from "@platform/kit/outbox";
import { eventually } from "@platform/kit/testing";
import {
  SCHEDULING_SANDBOX,
  sandboxAccountId,
  sandboxContactId,
  sandboxDealId,
  sandboxMeetingId,
} from "@platform/sandbox";
import { afterAll, beforeAll, beforeEach, expect } from "vitest";
import type { EmbeddedPlatform } from "../../src/platform.js";
import { type ApiResponse, apiTest, CLOSE_TIMEOUT_MS, START_TIMEOUT_MS } from "../support/platform.js";

// Deals, Q&As and 8P insights end to end on the embedded platform: gateway → revenue →
// PGlite, with crm-data's references and scheduling's meeting events. Each test file of this
// folder starts a platform of its own with this setup.
export const SEED = "revenue-api-test";
export const t = apiTest({ name: SEED, platform: { env: {} } });
export const { call, problemType, keys, tokenIds, clock } = t;
/** Revenue's events as the bus delivered them, in order. */
export const events: { type: string; subject?: string; data: unknown }[] = [];
export let platform: EmbeddedPlatform;

export async function expectProblem(res: ApiResponse, status: number, name: string, extra = {}) {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers["content-type"]).toMatch(/application\/problem\+json/);
  expect(res.json()).toMatchObject({ type: problemType(name), status, ...extra });
}

export const deal = (key: string) => sandboxDealId(SEED, key);
export const account = (key: string) => sandboxAccountId(SEED, key);
export const contact = (key: string) => sandboxContactId(SEED, key);
export const meeting = (label: string) => sandboxMeetingId(SEED, label);
export const ANALYTICAL = () => deal("analytical-expansion");
// An id of the right prefix and shape that names nothing.
export const unknownId = (prefix: string) => `${prefix}0000000000000000000000zz`;
export const occurredIn = (label: string) => [{ meetingId: meeting(label), occurredAt: "2026-02-27T10:05:00Z" }];

/** Starts the platform before the file's tests, with scheduling's sandbox meetings projected. */
export function useRevenuePlatform(): void {
  beforeAll(async () => {
    platform = await t.start();
    await platform.bus.subscribe({
      groupId: "revenue-test-observer",
      topics: [TOPICS.revenue],
      fromBeginning: true,
      handler: async (m) => {
        const e = decodeEvent(m);
        events.push({ type: e.type, subject: e.subject, data: e.data });
      },
    });
    // Scheduling's sandbox meetings reach revenue's projection through the bus.
    await platform.drainOutbox();
    // Every one of them, the preview booking included (Q&As and insights may name it).
    const sandboxMeetings = SCHEDULING_SANDBOX.meetings.map((m) => meeting(m.label));
    await eventually("sandbox meetings projected", async () => {
      const rows = (await platform.dbs.revenue?.query<{ id: string }>("SELECT id FROM revenue.meetings")) ?? [];
      const projected = new Set(rows.map((r) => r.id));
      return sandboxMeetings.every((id) => projected.has(id)) ? rows : undefined;
    });
  }, START_TIMEOUT_MS);
  afterAll(() => t.close(), CLOSE_TIMEOUT_MS);
  beforeEach(() => t.clock.advance(61_000));
}
