import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openPglite, pgliteDb } from "@platform/kit/db";
import { kitMigrations, migrate } from "@platform/kit/migrate";
import { describe, expect, it } from "vitest";
import { endpointOrigin } from "../src/domain/endpoint.js";
import { WEBHOOKS_SCHEMA, webhooksMigrations } from "../src/server.js";

// 003 fills the new columns of subscriptions that existed before it: the endpoint origin the
// delivery's cap counts by (the same form the service writes), and the latest failure of a
// running failure run.
describe("migration 003", () => {
  it("backfills endpoint_origin as endpointOrigin() writes it, and last_failure_at of failing subscriptions", async () => {
    const before = mkdtempSync(join(tmpdir(), "webhooks-migrations-"));
    for (const f of ["001_webhooks.sql", "002_event_trace.sql"])
      copyFileSync(join(webhooksMigrations.dir, f), join(before, f));
    const pglite = await openPglite();
    const db = pgliteDb(pglite, WEBHOOKS_SCHEMA);
    try {
      await migrate(db, [kitMigrations, { name: webhooksMigrations.name, dir: before }]);
      const urls = [
        "https://Hooks.Example.com/a?x=1",
        "https://hooks.example.com.:443/b",
        "https://hooks.example.com:08443/c",
        "http://127.0.0.1:8080/hooks/3",
        "https://[2606:4700::1111]/x",
        "https://[2606:4700::1111]:8443/x",
      ];
      const at = new Date("2026-01-10T00:00:00Z");
      for (const [i, url] of urls.entries()) {
        await db.query(
          `INSERT INTO webhooks.subscriptions (id, org_id, endpoint_url, events, enabled, payload_version, secret,
             failing_since, created_at, updated_at)
           VALUES ($1, 'org_a', $2, ARRAY['revenue.deal.created'], true, 'v2', 'whsec_x', $3, $4, $4)`,
          [`sub_${i}`, url, i === 0 ? at : null, at],
        );
      }
      await db.query(
        "INSERT INTO webhooks.events (id, org_id, type, data, occurred_at) VALUES ('e1', 'org_a', 't', '{}', $1)",
        [at],
      );
      const failedAt = new Date("2026-01-11T06:00:00Z");
      await db.query(
        `INSERT INTO webhooks.attempts (id, subscription_id, event_id, attempt, trigger, status, scheduled_at,
           attempted_at, created_at)
         VALUES ('wd_1', 'sub_0', 'e1', 1, 'event', 'failed', $1, $2, $1)`,
        [at, failedAt],
      );

      // Later migrations follow it; this test is about 003.
      expect(await migrate(db, [kitMigrations, webhooksMigrations])).toContain(
        "webhooks/003_failure_run_and_endpoint.sql",
      );
      const rows = await db.query<{ id: string; endpoint_origin: string; last_failure_at: Date | null }>(
        "SELECT id, endpoint_origin, last_failure_at FROM webhooks.subscriptions ORDER BY id",
      );
      expect(rows.map((r) => r.endpoint_origin)).toEqual(urls.map(endpointOrigin));
      expect(new Date(rows[0]?.last_failure_at as Date)).toEqual(failedAt);
      expect(rows.slice(1).every((r) => r.last_failure_at === null)).toBe(true);
    } finally {
      await pglite.close();
      rmSync(before, { recursive: true, force: true });
    }
  });
});
