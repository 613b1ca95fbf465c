import type { Db } from "@platform/kit/db";
import type { SecretBox } from "@platform/kit/secret-box";

const BATCH = 200;

export interface Sealed {
  subscriptions: number;
  idempotencyRecords: number;
}

/**
 * Seals under the current key every stored signing secret that is not yet: rows written
 * before secrets were sealed (migration 004), the sandbox's seeded row, and rows sealed under
 * a retired key after WEBHOOK_SECRET_KEY rotated. The same for the secrets inside the stored
 * Idempotency-Key responses of create and rotate. Runs at start, in batches that skip rows
 * another replica is sealing; idempotent.
 */
export async function sealStoredSecrets(db: Db, box: SecretBox): Promise<Sealed> {
  const sealed: Sealed = { subscriptions: 0, idempotencyRecords: 0 };
  const current = `enc:v1:${box.keyId}:%`;
  const reseal = (stored: string) => box.seal(box.open(stored));
  for (;;) {
    const n = await db.tx(async (q) => {
      const rows = await q.query<{ id: string; secret: string; previous_secret: string | null }>(
        `SELECT id, secret, previous_secret FROM webhooks.subscriptions
         WHERE secret NOT LIKE $1 OR (previous_secret IS NOT NULL AND previous_secret NOT LIKE $1)
         LIMIT $2 FOR UPDATE SKIP LOCKED`,
        [current, BATCH],
      );
      for (const r of rows) {
        await q.query("UPDATE webhooks.subscriptions SET secret = $2, previous_secret = $3 WHERE id = $1", [
          r.id,
          box.isCurrent(r.secret) ? r.secret : reseal(r.secret),
          r.previous_secret === null || box.isCurrent(r.previous_secret)
            ? r.previous_secret
            : reseal(r.previous_secret),
        ]);
      }
      return rows.length;
    });
    sealed.subscriptions += n;
    if (n < BATCH) break;
  }
  for (;;) {
    const n = await db.tx(async (q) => {
      const rows = await q.query<{ token_id: string; acting_org_id: string; key: string; secret: string }>(
        `SELECT token_id, acting_org_id, key, response->>'secret' AS secret FROM webhooks.idempotency_keys
         WHERE jsonb_typeof(response) = 'object' AND response->>'secret' <> '' AND response->>'secret' NOT LIKE $1
         LIMIT $2 FOR UPDATE SKIP LOCKED`,
        [current, BATCH],
      );
      for (const r of rows) {
        await q.query(
          `UPDATE webhooks.idempotency_keys SET response = jsonb_set(response, '{secret}', to_jsonb($4::text))
           WHERE token_id = $1 AND acting_org_id = $2 AND key = $3`,
          [r.token_id, r.acting_org_id, r.key, reseal(r.secret)],
        );
      }
      return rows.length;
    });
    sealed.idempotencyRecords += n;
    if (n < BATCH) break;
  }
  return sealed;
}
