import type { Queryable } from "@platform/kit/db";
import { type Keyed, keysetRows, type PageQuery, params, type SortKey } from "@platform/kit/keyset";
import { problem } from "@platform/kit/problems";
import type { SubscriptionRecord } from "../domain/model.js";
import { CHANGEABLE, subscriptionChanges, toSubscription } from "./rows.js";

/** The sort keys of GET /webhook-subscriptions. */
export const SUBSCRIPTION_SORT_KEYS: Record<string, SortKey> = {
  createdAt: { expr: "s.created_at", type: "timestamptz", nullable: false },
  updatedAt: { expr: "s.updated_at", type: "timestamptz", nullable: false },
};

/** Webhook subscriptions of an org (at most 10 each). */
export interface SubscriptionStore {
  /** Inserts a subscription and counts it against the org's limit of 10 in the same statement's transaction. */
  insertSubscription(s: SubscriptionRecord): Promise<void>;
  /** Another org's subscription is as absent as an unknown one; `lock` holds it until the transaction ends. */
  findSubscription(orgId: string, id: string, lock?: boolean): Promise<SubscriptionRecord | undefined>;
  updateSubscription(s: SubscriptionRecord): Promise<void>;
  /** Deletes it with its attempts and frees its place under the limit; false when there was none. */
  deleteSubscription(orgId: string, id: string): Promise<boolean>;
  listSubscriptions(orgId: string, page: PageQuery): Promise<Keyed<SubscriptionRecord>[]>;
  /** The enabled subscriptions of an org that receive `type`. */
  receivers(orgId: string, type: string): Promise<SubscriptionRecord[]>;
}

const CHECK_VIOLATION = "23514";

export function subscriptionStore(q: Queryable): SubscriptionStore {
  return {
    async insertSubscription(s: SubscriptionRecord): Promise<void> {
      try {
        await q.query(
          `INSERT INTO webhooks.org_subscription_counts (org_id, subscriptions) VALUES ($1, 1)
           ON CONFLICT (org_id) DO UPDATE SET subscriptions = webhooks.org_subscription_counts.subscriptions + 1`,
          [s.orgId],
        );
      } catch (err) {
        if ((err as { code?: string }).code === CHECK_VIOLATION) {
          throw problem("webhook-limit-reached", "An organization can have at most 10 webhook subscriptions.", {
            limit: 10,
          });
        }
        throw err;
      }
      // The org's, the id, then what an update may change, in the order updateSubscription binds it.
      await q.query(
        `INSERT INTO webhooks.subscriptions (org_id, id, payload_version, created_at, ${CHANGEABLE.join(", ")})
         VALUES (${[...Array(4 + CHANGEABLE.length).keys()].map((n) => `$${n + 1}`).join(", ")})`,
        [s.orgId, s.id, s.payloadVersion, s.createdAt, ...subscriptionChanges(s)],
      );
    },

    async findSubscription(orgId: string, id: string, lock = false): Promise<SubscriptionRecord | undefined> {
      const [row] = await q.query(
        `SELECT * FROM webhooks.subscriptions WHERE org_id = $1 AND id = $2${lock ? " FOR UPDATE" : ""}`,
        [orgId, id],
      );
      return row && toSubscription(row);
    },

    async updateSubscription(s: SubscriptionRecord): Promise<void> {
      await q.query(
        `UPDATE webhooks.subscriptions SET ${CHANGEABLE.map((c, n) => `${c} = $${n + 3}`).join(", ")}
         WHERE org_id = $1 AND id = $2`,
        [s.orgId, s.id, ...subscriptionChanges(s)],
      );
    },

    async deleteSubscription(orgId: string, id: string): Promise<boolean> {
      const gone = await q.query("DELETE FROM webhooks.subscriptions WHERE org_id = $1 AND id = $2 RETURNING id", [
        orgId,
        id,
      ]);
      if (gone.length === 0) return false;
      await q.query("UPDATE webhooks.org_subscription_counts SET subscriptions = subscriptions - 1 WHERE org_id = $1", [
        orgId,
      ]);
      return true;
    },

    async listSubscriptions(orgId: string, page: PageQuery): Promise<Keyed<SubscriptionRecord>[]> {
      const p = params();
      const where = [`s.org_id = ${p.add(orgId)}`];
      return keysetRows(
        q,
        { columns: "s.*", from: "webhooks.subscriptions s", where, idExpr: "s.id" },
        page,
        p,
        toSubscription,
      );
    },

    async receivers(orgId: string, type: string): Promise<SubscriptionRecord[]> {
      const rows = await q.query(
        "SELECT * FROM webhooks.subscriptions WHERE org_id = $1 AND enabled AND $2 = ANY(events) ORDER BY id",
        [orgId, type],
      );
      return rows.map(toSubscription);
    },
  };
}
