-- The event log (GET /events, the live stream): every catalog event of an org once, as its v2
-- deliveries carry it, whether or not a subscription receives it. Kept 30 days.

-- The last position handed out per org. Taking the next position updates this row, and the row
-- lock lasts until the event's transaction commits, so one org's events commit in position
-- order: a reader that sees position N sees every event up to N, and a stream that resumes
-- after N misses none (a plain sequence would let N+1 commit before N).
CREATE TABLE webhooks.event_log_heads (
  org_id text PRIMARY KEY,
  position bigint NOT NULL
);

CREATE TABLE webhooks.event_log (
  org_id text NOT NULL,
  position bigint NOT NULL,
  id text NOT NULL UNIQUE,
  type text NOT NULL,
  occurred_at timestamptz NOT NULL,
  -- The v2 envelope as sent: byte for byte the body of the event's v2 deliveries.
  payload text NOT NULL,
  PRIMARY KEY (org_id, position)
);
-- GET /events: newest first on (occurred_at, position), optionally one kind.
CREATE INDEX event_log_org_time ON webhooks.event_log (org_id, occurred_at, position);
CREATE INDEX event_log_org_type_time ON webhooks.event_log (org_id, type, occurred_at, position);
-- Retention.
CREATE INDEX event_log_occurred ON webhooks.event_log (occurred_at);
