import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PGlite } from "@electric-sql/pglite";
import { type Db, openPglite, pgliteDb } from "@platform/kit/db";
import { kitMigrations, migrate } from "@platform/kit/migrate";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EmailEvent } from "../src/domain/email-event.js";
import { analyticsMigrations } from "../src/server.js";
import { txStore } from "../src/store/index.js";
import { ingestEvents } from "../src/store/ingest.store.js";
import { emailEvent } from "./builders.js";

// The summary reads the per-day rollup (migration 003); it must say exactly what counting the
// recipients themselves says, for every period start, whatever order events and bounces came in.
let pglite: PGlite;
let db: Db;
const ORGS = ["org_rollupa", "org_rollupb"];
const DAY = 86_400_000;
const START = Date.parse("2026-03-01T00:00:00Z");

/** A small deterministic generator, so a failure replays. */
function random(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1_103_515_245 + 12_345) % 2_147_483_648;
    return s / 2_147_483_648;
  };
}

function events(seed: number, count: number): EmailEvent[] {
  const r = random(seed);
  const kinds: EmailEvent["kind"][] = ["send", "send", "send", "open", "click", "reply", "bounce", "send_failed"];
  return Array.from({ length: count }, () => {
    const orgId = ORGS[Math.floor(r() * ORGS.length)] as string;
    return emailEvent({
      orgId,
      kind: kinds[Math.floor(r() * kinds.length)] as EmailEvent["kind"],
      messageId: `m${Math.floor(r() * 60)}`,
      recipientEmail: `p${Math.floor(r() * 25)}@example.com`,
      senderUserId: "usr_rollup",
      at: new Date(START + Math.floor(r() * 20 * DAY)).toISOString(),
      autoReply: r() < 0.2,
    });
  });
}

async function direct(orgId: string, since: Date) {
  const [r] = await db.query<Record<string, number>>(
    `SELECT count(*)::int AS "totalSent",
            (count(*) FILTER (WHERE last_open_at >= $2))::int AS "hadOpened",
            (count(*) FILTER (WHERE last_click_at >= $2))::int AS "hadClicked",
            (count(*) FILTER (WHERE last_reply_at >= $2))::int AS "hadReplied"
       FROM analytics.recipients WHERE org_id = $1 AND last_sent_at >= $2`,
    [orgId, since],
  );
  return r;
}

beforeAll(async () => {
  pglite = await openPglite();
  db = pgliteDb(pglite, "analytics");
  await migrate(db, [kitMigrations, analyticsMigrations]);
});
afterAll(() => pglite?.close());

describe("the summary's per-day rollup", () => {
  it("equals counting the recipients, for every period start, across batches, bounces and failed sends", async () => {
    const all = events(7, 1200);
    // Batches in an order that is not time order: later sends first, bounces after their sends.
    for (let i = 0; i < all.length; i += 97) await db.tx((q) => ingestEvents(q, all.slice(i, i + 97)));
    const reads = txStore(db);
    let nonEmpty = 0;
    for (const orgId of ORGS) {
      for (let d = 0; d <= 21; d++) {
        const since = new Date(START + d * DAY);
        const expected = await direct(orgId, since);
        expect(await reads.recipientSummary(orgId, since), `${orgId} since ${since.toISOString()}`).toEqual(expected);
        if ((expected?.totalSent ?? 0) > 0) nonEmpty++;
      }
    }
    // The comparison was not vacuous.
    expect(nonEmpty).toBeGreaterThan(20);
  });

  it("migration 003 fills it from the recipients that existed before it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "analytics-migrations-"));
    const old = await openPglite();
    try {
      for (const f of ["001_analytics.sql", "002_org_scoped_blasts_and_first_send.sql"]) {
        copyFileSync(join(analyticsMigrations.dir, f), join(dir, f));
      }
      const oldDb = pgliteDb(old, "analytics");
      await migrate(oldDb, [kitMigrations, { name: analyticsMigrations.name, dir }]);
      await oldDb.tx((q) => ingestEvents(q, events(11, 600)));
      expect(await migrate(oldDb, [kitMigrations, analyticsMigrations])).toContain("analytics/003_recipient_days.sql");
      // And ingesting after it keeps it exact.
      await oldDb.tx((q) => ingestEvents(q, events(13, 200)));
      const reads = txStore(oldDb);
      const saved = db;
      db = oldDb;
      try {
        for (const orgId of ORGS) {
          for (const d of [0, 5, 12]) {
            const since = new Date(START + d * DAY);
            expect(await reads.recipientSummary(orgId, since)).toEqual(await direct(orgId, since));
          }
        }
      } finally {
        db = saved;
      }
    } finally {
      await old.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
