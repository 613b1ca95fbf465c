import { ManualClock } from "@platform/kit/clock";
import { openPglite, pgliteDb } from "@platform/kit/db";
import { InProcessBus } from "@platform/kit/in-process-bus";
import { capturingLogger } from "@platform/kit/testing";
import { sandboxOrgId, sandboxSubscriptionId } from "@platform/sandbox";
import { describe, expect, it } from "vitest";
import { developmentSecretBox, loadDeliveryConfig, loadWebhooksConfig } from "../src/config.js";
import { sandboxLegacySecret, seedWebhooksSandbox, startDelivery, WEBHOOKS_SCHEMA } from "../src/server.js";
import { start } from "../src/start.js";
import { txStore } from "../src/store/index.js";
import { openTestDb } from "./builders.js";

describe("starting the delivery", () => {
  it.each([
    [{}, 0],
    [{ WEBHOOKS_ALLOW_PRIVATE_TARGETS: "false" }, 0],
    [{ WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true" }, 1],
  ])("with %j logs %i warning about private targets", async (env, warnings) => {
    const { pglite, db } = await openTestDb();
    const bus = new InProcessBus();
    const lines: Record<string, unknown>[] = [];
    const logger = capturingLogger("webhooks-test", "warn", lines);
    const { subscriptions } = await startDelivery({
      db,
      bus,
      clock: new ManualClock(),
      logger,
      config: loadDeliveryConfig(env),
    });
    for (const s of subscriptions) await s.close();
    await bus.close();
    await pglite.close();
    const warned = lines.filter((l) => String(l.msg).includes("WEBHOOKS_ALLOW_PRIVATE_TARGETS"));
    expect(warned).toHaveLength(warnings);
    if (warnings) expect(warned[0]?.level).toBe(40);
  });

  it.each([
    [{}, 0],
    [{ WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true" }, 1],
  ])("the API process (start.ts) with %j logs %i warning about private targets", async (env, warnings) => {
    const pglite = await openPglite();
    const lines: Record<string, unknown>[] = [];
    const running = await start(loadWebhooksConfig({ PORT: "0", SANDBOX_ENABLED: "false", ...env }), {
      db: pgliteDb(pglite, WEBHOOKS_SCHEMA),
      logger: capturingLogger("webhooks-test", "warn", lines),
    });
    await running?.stop();
    await pglite.close();
    const warned = lines.filter((l) => String(l.msg).includes("WEBHOOKS_ALLOW_PRIVATE_TARGETS"));
    expect(warned).toHaveLength(warnings);
    if (warnings) expect(warned[0]?.level).toBe(40);
  });

  it("private targets are off unless set", () => {
    expect(loadDeliveryConfig({}).WEBHOOKS_ALLOW_PRIVATE_TARGETS).toBe(false);
    expect(() => loadDeliveryConfig({ WEBHOOKS_ALLOW_PRIVATE_TARGETS: "maybe" })).toThrow(
      /WEBHOOKS_ALLOW_PRIVATE_TARGETS/,
    );
  });
});

describe("sandbox", () => {
  it("seeds acme's legacy subscription once, with a secret standard verifiers accept", async () => {
    const { pglite, db } = await openTestDb();
    const clock = new ManualClock();
    const box = developmentSecretBox();
    expect(await seedWebhooksSandbox(db, clock, "seed-a", box)).toBe(true);
    expect(await seedWebhooksSandbox(db, clock, "seed-a", box)).toBe(false);
    const found = await txStore(db).findSubscription(
      sandboxOrgId("seed-a", "acme"),
      sandboxSubscriptionId("seed-a", "acme-legacy"),
    );
    expect(found).toMatchObject({ payloadVersion: "legacy", enabled: false });
    // Stored sealed from the first write (a clear secret would linger in the WAL), opening to the documented one.
    expect(found?.secret).toMatch(/^enc:v1:/);
    expect(box.open(found?.secret ?? "")).toBe(sandboxLegacySecret("seed-a"));
    expect(Buffer.from(sandboxLegacySecret("seed-a").slice(6), "base64").length).toBeGreaterThan(16);
    await pglite.close();
  });
});
