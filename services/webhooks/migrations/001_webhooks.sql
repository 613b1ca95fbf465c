-- Webhooks: subscriptions, the events they receive and every delivery attempt.

CREATE TABLE webhooks.subscriptions (
  id text PRIMARY KEY,
  org_id text NOT NULL,
  endpoint_url text NOT NULL CHECK (char_length(endpoint_url) BETWEEN 1 AND 2048),
  events text[] NOT NULL CHECK (cardinality(events) > 0),
  description text CHECK (char_length(description) <= 500),
  enabled boolean NOT NULL DEFAULT true,
  -- v2: the canonical Meeting; legacy: the nested shape of subscriptions that predate v2, never migrated.
  payload_version text NOT NULL CHECK (payload_version IN ('v2', 'legacy')),
  -- whsec_ secrets are kept readable: every delivery signs with them.
  secret text NOT NULL,
  previous_secret text,
  previous_secret_expires_at timestamptz,
  disabled_reason text CHECK (disabled_reason IN ('disabled-by-user', 'endpoint-gone', 'failing')),
  disabled_at timestamptz,
  -- Start of the current run of failed attempts; NULL after a success.
  failing_since timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (org_id, id),
  CHECK ((previous_secret IS NULL) = (previous_secret_expires_at IS NULL)),
  CHECK (enabled = (disabled_reason IS NULL) AND (disabled_reason IS NULL) = (disabled_at IS NULL))
);
CREATE INDEX subscriptions_org_created ON webhooks.subscriptions (org_id, created_at, id);
CREATE INDEX subscriptions_org_updated ON webhooks.subscriptions (org_id, updated_at, id);

-- At most 10 subscriptions per org: a counter row the create increments and the CHECK caps,
-- so concurrent creates serialise on the row instead of racing a count.
CREATE TABLE webhooks.org_subscription_counts (
  org_id text PRIMARY KEY,
  subscriptions int NOT NULL CHECK (subscriptions BETWEEN 0 AND 10)
);

-- Events as consumed from the domain topics (and webhook.test pings), rendered per payload
-- version when sent, so every attempt of an event sends the same body.
CREATE TABLE webhooks.events (
  id text PRIMARY KEY,
  org_id text NOT NULL,
  type text NOT NULL,
  data jsonb NOT NULL,
  occurred_at timestamptz NOT NULL
);

-- Every attempt to deliver an event to a subscription (wd_). An attempt is inserted pending,
-- claimed by a delivery worker with a lease, then marked succeeded or failed.
CREATE TABLE webhooks.attempts (
  id text PRIMARY KEY,
  subscription_id text NOT NULL REFERENCES webhooks.subscriptions (id) ON DELETE CASCADE,
  event_id text NOT NULL REFERENCES webhooks.events (id),
  attempt int NOT NULL CHECK (attempt >= 1),
  trigger text NOT NULL CHECK (trigger IN ('event', 'retry', 'redeliver', 'test')),
  status text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
  scheduled_at timestamptz NOT NULL,
  -- A worker's claim: another worker may take the attempt over once it has passed.
  leased_until timestamptz,
  attempted_at timestamptz,
  response_status int,
  duration_ms int,
  error text,
  -- Position in the event's retry chain (1 = first try); NULL for single-shot attempts (redeliver, test).
  retry_step int CHECK (retry_step BETWEEN 1 AND 8),
  next_retry_at timestamptz,
  created_at timestamptz NOT NULL,
  -- One delivery per (event, subscription): a redelivered Kafka message never fans out twice.
  UNIQUE (subscription_id, event_id, attempt)
);
CREATE UNIQUE INDEX attempts_first_per_event ON webhooks.attempts (subscription_id, event_id) WHERE trigger = 'event';
CREATE INDEX attempts_due ON webhooks.attempts (scheduled_at) WHERE status = 'pending';
CREATE INDEX attempts_subscription_created ON webhooks.attempts (subscription_id, created_at, id);
