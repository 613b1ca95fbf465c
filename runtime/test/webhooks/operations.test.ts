import { WEBHOOK_EVENT_CATALOG } from "@platform/contracts/webhooks";
import { newId } from "@platform/kit/ids";
import { eventually } from "@platform/kit/testing";
import { describe, expect, it } from "vitest";
import { verifyWebhook } from "../support/webhook-receiver.js";
import {
  bodyOf,
  call,
  clock,
  createSubscription,
  documentedBody,
  key,
  otherOrgKey,
  problemType,
  readonlyKey,
  receiver,
  useWebhooksPlatform,
} from "./setup.js";

// Resend, recover, test events of a kind and endpoint health through the gateway on the
// embedded platform (setup.ts starts it).

useWebhooksPlatform();

const DAY = 24 * 3_600_000;
const ago = (ms: number) => new Date(clock.now().getTime() - ms).toISOString();

describe("delivery operations through the gateway", () => {
  it("test events of every catalog kind reach the endpoint marked test: true, as the document describes them", async () => {
    const sub = await createSubscription();
    for (const kind of WEBHOOK_EVENT_CATALOG) {
      const sent = await call("POST", `/webhook-subscriptions/${sub.id}/test`, { body: { eventType: kind } });
      expect(sent.statusCode, sent.body).toBe(202);
      expect(sent.json()).toMatchObject({ eventType: kind, trigger: "test", status: "pending" });
      const r = await eventually(`the test ${kind}`, () =>
        receiver.received.find((x) => x.headers["webhook-id"] === sent.json().eventId),
      );
      verifyWebhook(sub.secret, r, clock.now());
      const body = bodyOf(r);
      expect(body).toMatchObject({ type: kind, test: true });
      expect((await documentedBody(kind))(body)).toBe("valid");
    }
    // Without a body it is the ping, marked too.
    const ping = await call("POST", `/webhook-subscriptions/${sub.id}/test`);
    expect(ping.statusCode).toBe(202);
    const r = await eventually("the ping", () =>
      receiver.received.find((x) => x.headers["webhook-id"] === ping.json().eventId),
    );
    expect(bodyOf(r)).toMatchObject({ type: "webhook.test", test: true });
    expect((await documentedBody("webhook.test"))(bodyOf(r))).toBe("valid");
    // Health: sent and succeeded.
    const got = (await call("GET", `/webhook-subscriptions/${sub.id}`)).json();
    expect(got).toMatchObject({ status: "healthy", lastFailureAt: null, recentSuccessRate: 1 });
    expect(typeof got.lastSuccessAt).toBe("string");
  });

  it("answers bad input with its problem types", async () => {
    const sub = await createSubscription();
    const base = `/webhook-subscriptions/${sub.id}`;
    const expectProblem = async (
      res: { statusCode: number; json(): { type: string } },
      status: number,
      name: string,
    ) => {
      expect(res.statusCode).toBe(status);
      expect(res.json().type).toBe(problemType(name));
    };
    await expectProblem(
      await call("POST", `${base}/test`, { body: { eventType: "scheduling.smartscheduler.nope" } }),
      422,
      "webhook-events-invalid",
    );
    await expectProblem(await call("POST", `${base}/test`, { body: { kind: BOOKED_KIND } }), 400, "invalid-field");
    await expectProblem(await call("POST", `${base}/recover`, { body: {} }), 400, "invalid-field");
    await expectProblem(await call("POST", `${base}/recover`, { body: { since: "yesterday" } }), 400, "invalid-field");
    await expectProblem(
      await call("POST", `${base}/recover`, { body: { since: ago(15 * DAY) } }),
      400,
      "webhook-recovery-window-exceeded",
    );
    await expectProblem(
      await call("POST", `${base}/recover`, { body: { since: ago(-DAY) } }),
      400,
      "webhook-recovery-window-exceeded",
    );
    await expectProblem(
      await call("POST", `${base}/recover`, { body: { since: ago(DAY) }, apiKey: readonlyKey }),
      403,
      "insufficient-scope",
    );
    await expectProblem(
      await call("POST", `${base}/recover`, { body: { since: ago(DAY) }, headers: { "idempotency-key": "" } }),
      400,
      "idempotency-key-required",
    );
    const recovered = await call("POST", `${base}/recover`, { body: { since: ago(DAY) } });
    expect(recovered.statusCode, recovered.body).toBe(202);
    const recovery = recovered.json();
    expect(recovery).toMatchObject({ subscriptionId: sub.id, status: "completed", queued: 0, delivered: 0, failed: 0 });
    expect(Object.keys(recovery).sort()).toEqual(
      ["id", "subscriptionId", "since", "status", "queued", "delivered", "failed", "createdAt", "completedAt"].sort(),
    );
    const got = await call("GET", `${base}/recoveries/${recovery.id}`);
    expect(got.statusCode).toBe(200);
    expect(got.json()).toEqual(recovery);
    await expectProblem(await call("GET", `${base}/recoveries/${newId("wrc_")}`), 404, "webhook-recovery-not-found");
    await expectProblem(await call("GET", `${base}/recoveries/nope`), 400, "invalid-resource-id");
    await expectProblem(
      await call("POST", `${base}/deliveries/${newId("wd_")}/resend`),
      404,
      "webhook-delivery-not-found",
    );
    // Another org's subscription, recovery or delivery is as absent as an unknown one.
    await expectProblem(
      await call("GET", `${base}/recoveries/${recovery.id}`, { apiKey: otherOrgKey }),
      404,
      "webhook-subscription-not-found",
    );
    await expectProblem(
      await call("POST", `${base}/recover`, { body: { since: ago(DAY) }, apiKey: otherOrgKey }),
      404,
      "webhook-subscription-not-found",
    );
    const theirs = await createSubscription({}, otherOrgKey);
    await expectProblem(
      await call("GET", `/webhook-subscriptions/${theirs.id}/recoveries/${recovery.id}`, { apiKey: otherOrgKey }),
      404,
      "webhook-recovery-not-found",
    );
    await call("DELETE", `/webhook-subscriptions/${theirs.id}`, { apiKey: otherOrgKey });
  });

  it("resends a delivery's event with the same webhook-id", async () => {
    const sub = await createSubscription();
    const ping = (await call("POST", `/webhook-subscriptions/${sub.id}/test`)).json();
    await eventually("the ping", () => receiver.received.find((x) => x.headers["webhook-id"] === ping.eventId));
    const resent = await call("POST", `/webhook-subscriptions/${sub.id}/deliveries/${ping.id}/resend`, { apiKey: key });
    expect(resent.statusCode, resent.body).toBe(202);
    expect(resent.json()).toMatchObject({ eventId: ping.eventId, attempt: 2, status: "pending" });
    await eventually(
      "the resent ping",
      () => receiver.received.filter((x) => x.headers["webhook-id"] === ping.eventId).length === 2 || undefined,
    );
  });

  it("documents the new operations, and redeliver as deprecated", async () => {
    const doc = (await call("GET", "/openapi.json")).json();
    const path = (p: string) => doc.paths[`/api/v1alpha1/webhook-subscriptions/{subscriptionId}${p}`];
    expect(path("/deliveries/{deliveryId}/redeliver").post.deprecated).toBe(true);
    expect(path("/deliveries/{deliveryId}/resend").post.operationId).toBe("resendWebhookDelivery");
    expect(path("/deliveries/{deliveryId}/resend").post.deprecated).toBeUndefined();
    expect(path("/recover").post.operationId).toBe("recoverWebhookDeliveries");
    expect(Object.keys(path("/recover").post.responses)).toEqual(expect.arrayContaining(["202", "400", "404", "409"]));
    expect(path("/recoveries/{recoveryId}").get.operationId).toBe("getWebhookRecovery");
    expect(doc.webhooks["webhooks.subscription.disabled"]).toBeDefined();
  });
});

const BOOKED_KIND = "scheduling.smartscheduler.booked";
