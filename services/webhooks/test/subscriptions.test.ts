import { toJsonString } from "@bufbuild/protobuf";
import { GetWebhookSubscriptionResponseSchema, WebhookSubscriptionService } from "@platform/contracts/webhooks";
import { ManualClock } from "@platform/kit/clock";
import type { Db } from "@platform/kit/db";
import { newId } from "@platform/kit/ids";
import { problemDetailOf, problemOf, withHeaders } from "@platform/kit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build } from "../src/server.js";
import { CURSOR_SECRET, callerOf, fakeResolver, openTestDb } from "./builders.js";

const clock = new ManualClock("2026-01-15T12:00:00Z");
let db: Db;
let close: () => Promise<void>;
let api: ReturnType<typeof callerOf>;

const resolved: string[] = [];
const table = fakeResolver({
  "hooks.example.com": ["93.184.216.34"],
  "loopback.example.com": ["127.0.0.1"],
  "mapped.example.com": ["::ffff:192.168.0.1"],
});
/** The fake DNS, recording which names were looked up. */
const resolve: typeof table = (host) => {
  resolved.push(host);
  return table(host);
};
const BOOKED = "scheduling.smartscheduler.booked";
const newOrg = () => newId("org_");

beforeAll(async () => {
  const t = await openTestDb();
  db = t.db;
  close = () => t.pglite.close();
  const { routes } = build({ db, clock, cursorSecret: CURSOR_SECRET, allowPrivateTargets: false, resolve });
  api = callerOf(routes, clock);
});
afterAll(() => close());

const client = (orgId: string, opts = {}) => api(WebhookSubscriptionService, orgId, opts);
const create = (orgId: string, body: Partial<{ endpointUrl: string; events: string[]; description: string }> = {}) =>
  client(orgId).createWebhookSubscription({ endpointUrl: "https://hooks.example.com/in", events: [BOOKED], ...body });

describe("creating", () => {
  it("returns the v2 subscription and its whsec_ secret once; reads never show it", async () => {
    const org = newOrg();
    const res = await create(org, { description: "CRM sync" });
    expect(res.secret).toMatch(/^whsec_/);
    expect(res.subscription).toMatchObject({
      endpointUrl: "https://hooks.example.com/in",
      events: [BOOKED],
      description: "CRM sync",
      enabled: true,
      payloadVersion: "v2",
    });
    expect(res.subscription?.id).toMatch(/^sub_/);
    const got = await client(org).getWebhookSubscription({ subscriptionId: res.subscription?.id ?? "" });
    expect(got.subscription).toEqual(res.subscription);
    expect(toJsonString(GetWebhookSubscriptionResponseSchema, got)).not.toContain(res.secret.slice(6));
  });

  it.each([
    "http://hooks.example.com/in",
    "https://localhost/in",
    "https://127.0.0.1/in",
    "https://10.1.1.1/in",
    "https://172.16.0.1/in",
    "https://192.168.1.1/in",
    "https://169.254.169.254/in",
    "https://[::1]/in",
    "https://[fc00::1]/in",
    "https://[fe80::1]/in",
    "https://[::ffff:127.0.0.1]/in",
    "https://[::127.0.0.1]/in",
    "https://loopback.example.com/in",
    "https://mapped.example.com/in",
  ])("refuses %s with 422 webhook-endpoint-invalid", async (endpointUrl) => {
    const p = await problemDetailOf(create(newOrg(), { endpointUrl }));
    expect(p.name).toBe("webhook-endpoint-invalid");
    expect(p.extensions).toEqual({ field: "endpointUrl" });
  });

  it.each([[[]], [["scheduling.smartscheduler.nope"]], [[BOOKED, "webhook.test"]]])(
    "refuses events %j with 422 webhook-events-invalid",
    async (events) => {
      expect(await problemOf(create(newOrg(), { events }))).toBe("webhook-events-invalid");
    },
  );

  it("allows 10 per org, the 11th is 422 webhook-limit-reached, and a delete frees a place", async () => {
    const org = newOrg();
    const made = await Promise.all(Array.from({ length: 10 }, () => create(org)));
    expect(await problemOf(create(org))).toBe("webhook-limit-reached");
    // Another org has its own ten.
    await create(newOrg());
    await client(org).deleteWebhookSubscription({ subscriptionId: made[0]?.subscription?.id ?? "" });
    await create(org);
    expect(await problemOf(create(org))).toBe("webhook-limit-reached");
  });

  it("concurrent creates never exceed the limit", async () => {
    const org = newOrg();
    const results = await Promise.allSettled(Array.from({ length: 14 }, () => create(org)));
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(10);
    const list = await client(org).listWebhookSubscriptions({ limit: 100 });
    expect(list.subscriptions).toHaveLength(10);
  });

  it("replays by Idempotency-Key (same secret, one subscription) and refuses another body under the key", async () => {
    const org = newOrg();
    const c = client(org, { idempotencyKey: "create-1" });
    const first = await c.createWebhookSubscription({ endpointUrl: "https://hooks.example.com/a", events: [BOOKED] });
    const lookups = resolved.length;
    const again = await withHeaders((o) =>
      c.createWebhookSubscription({ endpointUrl: "https://hooks.example.com/a", events: [BOOKED] }, o),
    );
    expect(again.response).toEqual(first);
    expect(again.headers.get("x-idempotent-replay")).toBe("true");
    // The replay answers from its record: the endpoint is not resolved again.
    expect(resolved.length).toBe(lookups);
    expect(
      await problemOf(c.createWebhookSubscription({ endpointUrl: "https://hooks.example.com/b", events: [BOOKED] })),
    ).toBe("idempotency-key-conflict");
    expect((await client(org).listWebhookSubscriptions({})).subscriptions).toHaveLength(1);
    expect(
      await problemOf(
        client(org, { noIdempotencyKey: true }).createWebhookSubscription({
          endpointUrl: "https://hooks.example.com/a",
          events: [BOOKED],
        }),
      ),
    ).toBe("idempotency-key-required");
  });
});

describe("reading, changing and deleting", () => {
  it("unknown and other orgs' ids are 404 webhook-subscription-not-found; a malformed one is 400", async () => {
    const org = newOrg();
    const { subscription } = await create(org);
    const id = subscription?.id ?? "";
    const other = client(newOrg());
    for (const call of [
      other.getWebhookSubscription({ subscriptionId: id }),
      other.updateWebhookSubscription({ subscriptionId: id, enabled: false }),
      other.deleteWebhookSubscription({ subscriptionId: id }),
      other.rotateWebhookSecret({ subscriptionId: id }),
      other.testWebhookSubscription({ subscriptionId: id }),
      other.listWebhookDeliveries({ subscriptionId: id }),
      other.redeliverWebhook({ subscriptionId: id, deliveryId: newId("wd_") }),
      client(org).getWebhookSubscription({ subscriptionId: newId("sub_") }),
      client(org).redeliverWebhook({ subscriptionId: newId("sub_"), deliveryId: newId("wd_") }),
      // The subscription is the caller's, the delivery is unknown: the spec has no delivery-specific 404.
      client(org).redeliverWebhook({ subscriptionId: id, deliveryId: newId("wd_") }),
    ]) {
      expect(await problemOf(call)).toBe("webhook-subscription-not-found");
    }
    expect(await problemOf(client(org).getWebhookSubscription({ subscriptionId: "sub_nope" }))).toBe(
      "invalid-resource-id",
    );
    expect(await problemOf(client(org).redeliverWebhook({ subscriptionId: id, deliveryId: "wd_nope" }))).toBe(
      "invalid-resource-id",
    );
  });

  it("PATCH changes only the fields present, validates them, and disables and re-enables", async () => {
    const org = newOrg();
    const { subscription } = await create(org, { description: "a" });
    const subscriptionId = subscription?.id ?? "";
    clock.advance(1000);
    const res = await client(org).updateWebhookSubscription({
      subscriptionId,
      events: { events: [BOOKED, "revenue.deal.created"] },
    });
    expect(res.subscription).toMatchObject({
      events: [BOOKED, "revenue.deal.created"],
      description: "a",
      endpointUrl: "https://hooks.example.com/in",
    });
    expect(res.subscription?.updateTime).not.toEqual(subscription?.updateTime);
    const moved = await client(org).updateWebhookSubscription({
      subscriptionId,
      endpointUrl: "https://HOOKS.example.com:8443/in",
    });
    expect(moved.subscription?.endpointUrl).toBe("https://HOOKS.example.com:8443/in");
    // The delivery's in-flight cap counts by endpoint: the stored origin follows the URL.
    const [row] = await db.query<{ endpoint_origin: string }>(
      "SELECT endpoint_origin FROM webhooks.subscriptions WHERE id = $1",
      [subscriptionId],
    );
    expect(row?.endpoint_origin).toBe("https://hooks.example.com:8443");
    await client(org).updateWebhookSubscription({ subscriptionId, endpointUrl: "https://hooks.example.com/in" });
    expect(
      await problemOf(client(org).updateWebhookSubscription({ subscriptionId, endpointUrl: "https://10.0.0.1/" })),
    ).toBe("webhook-endpoint-invalid");
    expect(await problemOf(client(org).updateWebhookSubscription({ subscriptionId, events: { events: [] } }))).toBe(
      "webhook-events-invalid",
    );
    const off = await client(org).updateWebhookSubscription({ subscriptionId, enabled: false });
    expect(off.subscription).toMatchObject({ enabled: false, disabledReason: "disabled-by-user" });
    expect(off.subscription?.disableTime).toBeDefined();
    const on = await client(org).updateWebhookSubscription({ subscriptionId, enabled: true, description: "" });
    expect(on.subscription?.enabled).toBe(true);
    expect(on.subscription?.disabledReason).toBeUndefined();
    expect(on.subscription?.description).toBeUndefined();
  });

  it("DELETE removes it; repeating is 404", async () => {
    const org = newOrg();
    const { subscription } = await create(org);
    const subscriptionId = subscription?.id ?? "";
    await client(org).deleteWebhookSubscription({ subscriptionId });
    expect(await problemOf(client(org).getWebhookSubscription({ subscriptionId }))).toBe(
      "webhook-subscription-not-found",
    );
    expect(await problemOf(client(org).deleteWebhookSubscription({ subscriptionId }))).toBe(
      "webhook-subscription-not-found",
    );
  });

  it("rotation returns a new secret and shows until when the old one still signs", async () => {
    const org = newOrg();
    const created = await create(org);
    const rotated = await client(org).rotateWebhookSecret({ subscriptionId: created.subscription?.id ?? "" });
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(created.secret);
    const expires = rotated.subscription?.previousSecretExpireTime;
    expect(Number(expires?.seconds) * 1000).toBe(clock.now().getTime() + 24 * 3_600_000);
  });

  it("lists newest first in pages with a cursor bound to the sort", async () => {
    const org = newOrg();
    for (let i = 0; i < 3; i++) {
      clock.advance(1000);
      await create(org, { description: `n${i}` });
    }
    const first = await client(org).listWebhookSubscriptions({ limit: 2 });
    expect(first.subscriptions.map((s) => s.description)).toEqual(["n2", "n1"]);
    const second = await client(org).listWebhookSubscriptions({ limit: 2, cursor: first.nextCursor });
    expect(second.subscriptions.map((s) => s.description)).toEqual(["n0"]);
    expect(second.nextCursor).toBe("");
    expect(await problemOf(client(org).listWebhookSubscriptions({ cursor: first.nextCursor, sort: "createdAt" }))).toBe(
      "invalid-cursor",
    );
    expect(await problemOf(client(org).listWebhookSubscriptions({ sort: "endpointUrl" }))).toBe("invalid-sort-field");
  });
});
