import { randomBytes } from "node:crypto";
import { WebhookSubscriptionService } from "@platform/contracts/webhooks";
import { ManualClock } from "@platform/kit/clock";
import { ConfigError } from "@platform/kit/config";
import type { Db } from "@platform/kit/db";
import { newId } from "@platform/kit/ids";
import { secretBox } from "@platform/kit/secret-box";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEVELOPMENT_WEBHOOK_SECRET_KEY, loadWebhooksConfig } from "../src/config.js";
import { newSecret } from "../src/domain/signature.js";
import { build, sealStoredSecrets } from "../src/server.js";
import { CURSOR_SECRET, callerOf, fakeResolver, openTestDb } from "./builders.js";

const keyOf = (id: string) => `${id}:${randomBytes(32).toString("base64")}`;
const K1 = keyOf("k1");
const K2 = keyOf("k2");

describe("secretBox", () => {
  it("seals with AES-256-GCM under a named key, opens with it, and refuses tampering", () => {
    const box = secretBox(K1);
    const secret = newSecret();
    const sealed = box.seal(secret);
    expect(sealed).toMatch(/^enc:v1:k1:/);
    expect(sealed).not.toContain(secret.slice(6));
    expect(box.seal(secret)).not.toBe(sealed);
    expect(box.open(sealed)).toBe(secret);
    expect(box.isCurrent(sealed)).toBe(true);
    const flipped = sealed.slice(0, -2) + (sealed.at(-2) === "A" ? "B" : "A") + sealed.at(-1);
    expect(() => box.open(flipped)).toThrow();
    // Relabelled to another key id: the id is authenticated, so it does not open.
    expect(() => secretBox(K2, [K1.replace("k1:", "k9:")]).open(sealed.replace(":k1:", ":k9:"))).toThrow();
  });

  it("opens what a retired key sealed, and names an unknown key", () => {
    const sealed = secretBox(K1).seal("whsec_x");
    const rotated = secretBox(K2, [K1]);
    expect(rotated.open(sealed)).toBe("whsec_x");
    expect(rotated.isCurrent(sealed)).toBe(false);
    expect(() => secretBox(K2).open(sealed)).toThrow(/unknown key id 'k1'/);
  });

  it("refuses keys that are not 32 bytes or have no id", () => {
    expect(() => secretBox(`k1:${randomBytes(16).toString("base64")}`)).toThrow(/32 bytes/);
    expect(() => secretBox(randomBytes(32).toString("base64"))).toThrow(/key id/);
  });
});

describe("WEBHOOK_SECRET_KEY", () => {
  const production = {
    PLATFORM_ENV: "production",
    PLATFORM_CONTEXT_SECRET: "prod-context-secret-0123456789",
    PLATFORM_CURSOR_SECRET: "prod-cursor-secret-0123456789",
    DATABASE_URL: "postgres://app@db.internal:5432/webhooks",
  };

  it("is refused at its development default in production, and accepted when given", () => {
    const refused = (() => {
      try {
        loadWebhooksConfig(production);
      } catch (err) {
        return err;
      }
    })();
    expect(refused).toBeInstanceOf(ConfigError);
    expect((refused as Error).message).toContain("WEBHOOK_SECRET_KEY");
    expect(() => loadWebhooksConfig({ ...production, WEBHOOK_SECRET_KEY: DEVELOPMENT_WEBHOOK_SECRET_KEY })).toThrow(
      /WEBHOOK_SECRET_KEY/,
    );
    expect(loadWebhooksConfig({ ...production, WEBHOOK_SECRET_KEY: K1 }).WEBHOOK_SECRET_KEY).toBe(K1);
    expect(() => loadWebhooksConfig({ WEBHOOK_SECRET_KEY: "k1:short" })).toThrow(/WEBHOOK_SECRET_KEY.*hidden/);
  });
});

describe("the webhooks API stores secrets sealed", () => {
  const clock = new ManualClock("2026-01-15T12:00:00Z");
  const box = secretBox(K1);
  let db: Db;
  let close: () => Promise<void>;
  let api: ReturnType<typeof callerOf>;

  beforeAll(async () => {
    const t = await openTestDb();
    db = t.db;
    close = () => t.pglite.close();
    const resolve = fakeResolver({ "hooks.example.com": ["93.184.216.34"] });
    const { routes } = build({
      db,
      clock,
      cursorSecret: CURSOR_SECRET,
      allowPrivateTargets: false,
      resolve,
      secrets: box,
    });
    api = callerOf(routes, clock);
  });
  afterAll(() => close());

  const stored = async (id: string) =>
    (
      await db.query<{ secret: string; previous_secret: string | null }>(
        "SELECT secret, previous_secret FROM webhooks.subscriptions WHERE id = $1",
        [id],
      )
    )[0];
  const records = () => db.query<{ response: unknown }>("SELECT response FROM webhooks.idempotency_keys");

  it("in the row and in the Idempotency-Key records of create and rotate; replays still show the clear secret", async () => {
    const org = newId("org_");
    const client = api(WebhookSubscriptionService, org, { idempotencyKey: "create-sealed" });
    const body = { endpointUrl: "https://hooks.example.com/in", events: ["scheduling.smartscheduler.booked"] };
    const created = await client.createWebhookSubscription(body);
    const id = created.subscription?.id ?? "";
    expect(created.secret).toMatch(/^whsec_/);
    const row = await stored(id);
    expect(row?.secret).toMatch(/^enc:v1:k1:/);
    expect(box.open(row?.secret ?? "")).toBe(created.secret);

    const rotator = api(WebhookSubscriptionService, org, { idempotencyKey: "rotate-sealed" });
    const rotated = await rotator.rotateWebhookSecret({ subscriptionId: id });
    expect(rotated.secret).toMatch(/^whsec_/);
    const after = await stored(id);
    expect(box.open(after?.secret ?? "")).toBe(rotated.secret);
    expect(box.open(after?.previous_secret ?? "")).toBe(created.secret);

    const everything = JSON.stringify(await records());
    for (const clear of [created.secret, rotated.secret]) expect(everything).not.toContain(clear.slice(6));

    expect((await client.createWebhookSubscription(body)).secret).toBe(created.secret);
    expect((await rotator.rotateWebhookSecret({ subscriptionId: id })).secret).toBe(rotated.secret);
  });

  it("seals rows and records stored in clear before (migration 004), and re-seals them after a key rotation", async () => {
    const id = newId("sub_");
    const [clear, previous] = [newSecret(), newSecret()];
    const at = clock.now();
    await db.query(
      `INSERT INTO webhooks.subscriptions (id, org_id, endpoint_url, endpoint_origin, events, enabled, payload_version,
         secret, previous_secret, previous_secret_expires_at, created_at, updated_at)
       VALUES ($1, 'org_old', 'https://hooks.example.com/old', 'https://hooks.example.com:443',
         ARRAY['scheduling.smartscheduler.booked'], true, 'v2', $2, $3, $4, $4, $4)`,
      [id, clear, previous, at],
    );
    await db.query(
      `INSERT INTO webhooks.idempotency_keys (token_id, acting_org_id, key, request_hash, status_code, response, created_at)
       VALUES ('tok_old', '', 'old-create', 'h', 200, $1::jsonb, $2)`,
      [JSON.stringify({ subscription: { id }, secret: clear }), at],
    );
    const first = await sealStoredSecrets(db, box);
    expect(first).toMatchObject({ subscriptions: 1, idempotencyRecords: 1 });
    const row = await stored(id);
    expect(row?.secret).toMatch(/^enc:v1:k1:/);
    expect([box.open(row?.secret ?? ""), box.open(row?.previous_secret ?? "")]).toEqual([clear, previous]);
    expect(JSON.stringify(await records())).not.toContain(clear.slice(6));
    expect(await sealStoredSecrets(db, box)).toEqual({ subscriptions: 0, idempotencyRecords: 0 });

    const next = secretBox(K2, [K1]);
    const resealed = await sealStoredSecrets(db, next);
    expect(resealed.subscriptions).toBeGreaterThanOrEqual(2);
    expect(resealed.idempotencyRecords).toBeGreaterThanOrEqual(3);
    const rows = await db.query<{ secret: string; previous_secret: string | null }>(
      "SELECT secret, previous_secret FROM webhooks.subscriptions",
    );
    for (const r of rows) {
      expect(next.isCurrent(r.secret)).toBe(true);
      if (r.previous_secret) expect(next.isCurrent(r.previous_secret)).toBe(true);
    }
    expect(secretBox(K2).open((await stored(id))?.secret ?? "")).toBe(clear);
  });
});
