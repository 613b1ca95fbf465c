-- Delivery at line rate: the claim of due attempts probes, per endpoint and subscription, the
-- oldest due attempts and the ones in flight, instead of ranking the whole backlog; these
-- indexes make each probe a short index range whatever the backlog's size.
CREATE INDEX attempts_pending_due ON webhooks.attempts (subscription_id, scheduled_at, id) WHERE status = 'pending';
CREATE INDEX attempts_pending_leased ON webhooks.attempts (subscription_id, leased_until)
  WHERE status = 'pending' AND leased_until IS NOT NULL;
CREATE INDEX subscriptions_endpoint_origin ON webhooks.subscriptions (endpoint_origin);
