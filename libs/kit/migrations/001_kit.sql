-- The kit's tables, created in every service's schema.

-- Transactional outbox: written in the same transaction as the state change, published by
-- the relay. `seq` orders rows written in one transaction, where created_at (now()) is equal.
CREATE TABLE {{schema}}.outbox (
  id uuid PRIMARY KEY,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  topic text NOT NULL,
  key text NOT NULL,
  type text NOT NULL,
  source text NOT NULL,
  subject text,
  time timestamptz NOT NULL,
  traceparent text,
  data jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  published_at timestamptz,
  attempts int NOT NULL DEFAULT 0,
  last_error text,
  next_attempt_at timestamptz NOT NULL DEFAULT now()
);
-- The relay only ever scans unpublished rows; published ones are kept a while for audit.
CREATE INDEX outbox_unpublished ON {{schema}}.outbox (topic, seq) WHERE published_at IS NULL;
CREATE INDEX outbox_published_at ON {{schema}}.outbox (published_at) WHERE published_at IS NOT NULL;

-- Idempotency-Key records, scoped per token and acting-on org ('' when not delegating, so
-- the primary key can include it).
CREATE TABLE {{schema}}.idempotency_keys (
  token_id text NOT NULL,
  acting_org_id text NOT NULL DEFAULT '',
  key text NOT NULL,
  request_hash text NOT NULL,
  status_code int,
  response jsonb,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (token_id, acting_org_id, key)
);
CREATE INDEX idempotency_keys_created_at ON {{schema}}.idempotency_keys (created_at);

-- Events a consumer has handled, so redelivered events are skipped.
CREATE TABLE {{schema}}.processed_events (
  consumer text NOT NULL,
  event_id text NOT NULL,
  processed_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (consumer, event_id)
);
