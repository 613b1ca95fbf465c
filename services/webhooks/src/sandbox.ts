import type { Clock } from "@platform/kit/clock";
import type { Db } from "@platform/kit/db";
import { seededId } from "@platform/kit/ids";
import type { SecretBox } from "@platform/kit/secret-box";
import { sandboxOrgId, sandboxSubscriptionId } from "@platform/sandbox";
import { EVENT_CATALOG } from "./domain/catalog.js";
import { subscriptionStore } from "./store/subscription.store.js";

/*
 * The sandbox: one subscription of the acme org that predates payload v2, so integrators can
 * see the legacy shape (it stays legacy forever). It is disabled (its endpoint is a
 * placeholder), and its secret derives from the seed so the documentation can show it.
 * Like every stored secret it is written sealed: a clear one, even overwritten at once,
 * would survive in the database's write-ahead log and data files.
 */

const CREATED_AT = new Date("2025-06-01T09:00:00.000Z");

/** The legacy subscription's secret: whsec_ + base64 of a seed-derived key. */
export function sandboxLegacySecret(seed: string): string {
  const key = seededId("whk_", seed, "legacy-secret").slice(4);
  return `whsec_${Buffer.from(key).toString("base64")}`;
}

/** Seeds the sandbox when missing, its secret sealed by `box`; true when it wrote. */
export async function seedWebhooksSandbox(db: Db, _clock: Clock, seed: string, box: SecretBox): Promise<boolean> {
  const orgId = sandboxOrgId(seed, "acme");
  const id = sandboxSubscriptionId(seed, "acme-legacy");
  return db.tx(async (q) => {
    if (db.kind === "pg") await q.query("SELECT pg_advisory_xact_lock(hashtext('webhooks:sandbox'))");
    const store = subscriptionStore(q);
    if (await store.findSubscription(orgId, id)) return false;
    await store.insertSubscription({
      id,
      orgId,
      endpointUrl: "https://hooks.example.com/platform/legacy",
      events: EVENT_CATALOG.filter((e) => e.startsWith("scheduling.")),
      description: "Created before payload v2: keeps the legacy shape",
      enabled: false,
      payloadVersion: "legacy",
      secret: box.seal(sandboxLegacySecret(seed)),
      previousSecret: null,
      previousSecretExpiresAt: null,
      disabledReason: "disabled-by-user",
      disabledAt: CREATED_AT,
      failingSince: null,
      lastFailureAt: null,
      createdAt: CREATED_AT,
      updatedAt: CREATED_AT,
    });
    return true;
  });
}
