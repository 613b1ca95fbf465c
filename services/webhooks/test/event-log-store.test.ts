import type { Db } from "@platform/kit/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventLogStore } from "../src/store/event-log.store.js";
import { openTestDb } from "./builders.js";

let db: Db;
let closeDb: () => Promise<void>;

beforeAll(async () => {
  const t = await openTestDb();
  db = t.db;
  closeDb = () => t.pglite.close();
});
afterAll(() => closeDb());

const event = (id: string) => ({
  id,
  type: "scheduling.smartscheduler.booked",
  occurredAt: new Date("2026-01-15T12:00:00Z"),
  payload: `{"id":"${id}"}`,
});

const positions = (orgId: string) =>
  db.query<{ id: string; position: number }>(
    "SELECT id, position::int AS position FROM webhooks.event_log WHERE org_id = $1 ORDER BY position",
    [orgId],
  );

describe("EventLogStore.logEvents", () => {
  it("appends a batch at the org's next positions in the order given, skipping ids already logged", async () => {
    const store = eventLogStore(db);
    expect(await store.logEvents("org_a", [event("e1"), event("e2")])).toBe(2);
    // e2 is known: it keeps position 2, and e3 and e4 follow it without a gap.
    expect(await store.logEvents("org_a", [event("e3"), event("e2"), event("e4")])).toBe(2);
    expect(await positions("org_a")).toEqual([
      { id: "e1", position: 1 },
      { id: "e2", position: 2 },
      { id: "e3", position: 3 },
      { id: "e4", position: 4 },
    ]);
    expect(await store.logHead("org_a")).toBe(4);
  });

  it("leaves the head alone when nothing in the batch is new, and each org counts on its own", async () => {
    const store = eventLogStore(db);
    expect(await store.logEvents("org_b", [event("b1")])).toBe(1);
    expect(await store.logEvents("org_b", [event("b1")])).toBe(0);
    expect(await store.logEvents("org_b", [])).toBe(0);
    expect(await store.logHead("org_b")).toBe(1);
    expect(await store.logHead("org_c")).toBe(0);
    expect(await positions("org_b")).toEqual([{ id: "b1", position: 1 }]);
  });
});
