-- Recovering what an endpoint missed, and each subscription's health.
--
-- A recovery (wrc_) queues one single-shot attempt of every event of a subscription since a
-- time that no attempt delivered; its attempts carry its id, so its progress is read from them
-- (running while any is pending) and a second recovery can tell one is still running.
CREATE TABLE webhooks.recoveries (
  id text PRIMARY KEY,
  org_id text NOT NULL,
  subscription_id text NOT NULL REFERENCES webhooks.subscriptions (id) ON DELETE CASCADE,
  since timestamptz NOT NULL,
  queued int NOT NULL CHECK (queued >= 0),
  created_at timestamptz NOT NULL
);
CREATE INDEX recoveries_subscription ON webhooks.recoveries (subscription_id, created_at);

ALTER TABLE webhooks.attempts ADD COLUMN recovery_id text REFERENCES webhooks.recoveries (id) ON DELETE CASCADE;
CREATE INDEX attempts_recovery ON webhooks.attempts (recovery_id, status) WHERE recovery_id IS NOT NULL;

-- Health (lastSuccessAt, lastFailureAt, recentSuccessRate): one index probe per status instead
-- of a scan of the subscription's history. Settled attempts only: pending ones have no time.
CREATE INDEX attempts_settled ON webhooks.attempts (subscription_id, status, attempted_at)
  WHERE status <> 'pending';
