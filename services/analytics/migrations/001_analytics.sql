-- Analytics: email events as the sending system reports them, and the rollups every read is
-- answered from. Ingestion writes the raw event and every rollup it touches in one
-- transaction; no request ever aggregates the raw events.

-- The raw events; the primary key makes ingestion idempotent across Kafka and the admin RPC.
CREATE TABLE analytics.email_events (
  event_id text PRIMARY KEY,
  org_id text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('send', 'open', 'click', 'reply', 'bounce', 'send_failed')),
  occurred_at timestamptz NOT NULL,
  message_id text NOT NULL,
  recipient_email text NOT NULL,
  auto_reply boolean NOT NULL DEFAULT false,
  recorded_at timestamptz NOT NULL DEFAULT now()
);

-- One email (semail_), keyed by the producer's message id, with its per-email counters.
CREATE TABLE analytics.sent_emails (
  id text PRIMARY KEY,
  org_id text NOT NULL,
  message_id text NOT NULL,
  subject text NOT NULL,
  sender_user_id text NOT NULL,
  sender_display_name text NOT NULL,
  blast_id text,
  -- The earliest event of the email: it went out no later than anything that happened to it.
  sent_at timestamptz NOT NULL,
  opens int NOT NULL DEFAULT 0 CHECK (opens >= 0),
  clicks int NOT NULL DEFAULT 0 CHECK (clicks >= 0),
  replies int NOT NULL DEFAULT 0 CHECK (replies >= 0),
  last_open_at timestamptz,
  last_click_at timestamptz,
  last_reply_at timestamptz,
  last_open_location text,
  UNIQUE (org_id, message_id)
);
CREATE INDEX sent_emails_sent_at ON analytics.sent_emails (org_id, sent_at DESC, id DESC);
CREATE INDEX sent_emails_last_open ON analytics.sent_emails (org_id, last_open_at DESC NULLS LAST, id DESC);
CREATE INDEX sent_emails_last_click ON analytics.sent_emails (org_id, last_click_at DESC NULLS LAST, id DESC);
CREATE INDEX sent_emails_last_reply ON analytics.sent_emails (org_id, last_reply_at DESC NULLS LAST, id DESC);
CREATE INDEX sent_emails_opens ON analytics.sent_emails (org_id, opens DESC, id DESC);
CREATE INDEX sent_emails_clicks ON analytics.sent_emails (org_id, clicks DESC, id DESC);
CREATE INDEX sent_emails_replies ON analytics.sent_emails (org_id, replies DESC, id DESC);
CREATE INDEX sent_emails_blast ON analytics.sent_emails (blast_id) WHERE blast_id IS NOT NULL;

-- One recipient of one email: its delivery state and counters (recipient signals and a
-- blast's recipient rows).
CREATE TABLE analytics.deliveries (
  sent_email_id text NOT NULL REFERENCES analytics.sent_emails (id),
  recipient_email text NOT NULL,
  org_id text NOT NULL,
  blast_id text,
  -- The first SEND; NULL while none was seen.
  sent_at timestamptz,
  bounced boolean NOT NULL DEFAULT false,
  send_failed boolean NOT NULL DEFAULT false,
  opens int NOT NULL DEFAULT 0 CHECK (opens >= 0),
  clicks int NOT NULL DEFAULT 0 CHECK (clicks >= 0),
  replies int NOT NULL DEFAULT 0 CHECK (replies >= 0),
  auto_replies int NOT NULL DEFAULT 0 CHECK (auto_replies >= 0),
  last_open_at timestamptz,
  last_click_at timestamptz,
  last_reply_at timestamptz,
  last_open_location text,
  PRIMARY KEY (sent_email_id, recipient_email)
);
CREATE INDEX deliveries_recipient ON analytics.deliveries (org_id, recipient_email);
CREATE INDEX deliveries_blast ON analytics.deliveries (blast_id, recipient_email) WHERE blast_id IS NOT NULL;

-- One recipient across the org's emails: the latest successful send, open, click and reply,
-- so the period summary counts unique recipients with one index range.
CREATE TABLE analytics.recipients (
  org_id text NOT NULL,
  recipient_email text NOT NULL,
  last_sent_at timestamptz,
  last_open_at timestamptz,
  last_click_at timestamptz,
  last_reply_at timestamptz,
  PRIMARY KEY (org_id, recipient_email)
);
-- Covering: the summary is an index-only range scan once vacuum has marked the pages visible.
CREATE INDEX recipients_last_sent ON analytics.recipients (org_id, last_sent_at)
  INCLUDE (last_open_at, last_click_at, last_reply_at);

-- Raw counts per org, UTC day and action.
CREATE TABLE analytics.daily_activity (
  org_id text NOT NULL,
  day date NOT NULL,
  action text NOT NULL CHECK (action IN ('sends', 'opens', 'clicks', 'replies')),
  count int NOT NULL CHECK (count >= 0),
  PRIMARY KEY (org_id, day, action)
);

-- The same per blast.
CREATE TABLE analytics.blast_daily_activity (
  blast_id text NOT NULL,
  day date NOT NULL,
  action text NOT NULL CHECK (action IN ('sends', 'opens', 'clicks', 'replies')),
  count int NOT NULL CHECK (count >= 0),
  PRIMARY KEY (blast_id, day, action)
);

-- Email blasts: the sending system's metadata (NULL columns until UpsertEmailBlasts names
-- the blast; only named blasts are listed) and the counters ingestion maintains.
CREATE TABLE analytics.blasts (
  id text PRIMARY KEY,
  org_id text NOT NULL,
  name text CHECK (char_length(name) BETWEEN 1 AND 200),
  template_name text,
  subject text,
  owner_user_id text,
  owner_display_name text,
  status text CHECK (status IN ('Draft', 'Assigned', 'Scheduled', 'SendNow', 'Rejected', 'Processing', 'Queued',
    'Sending', 'Success', 'PartialSuccess', 'Failure', 'Sent', 'PastDue')),
  sent_at timestamptz,
  recipient_count int NOT NULL DEFAULT 0 CHECK (recipient_count >= 0),
  described_at timestamptz,
  successful_sent int NOT NULL DEFAULT 0 CHECK (successful_sent >= 0),
  unique_opens int NOT NULL DEFAULT 0 CHECK (unique_opens >= 0),
  unique_clicks int NOT NULL DEFAULT 0 CHECK (unique_clicks >= 0),
  unique_replies int NOT NULL DEFAULT 0 CHECK (unique_replies >= 0),
  total_opens int NOT NULL DEFAULT 0 CHECK (total_opens >= 0),
  total_clicks int NOT NULL DEFAULT 0 CHECK (total_clicks >= 0),
  total_replies int NOT NULL DEFAULT 0 CHECK (total_replies >= 0),
  CHECK ((described_at IS NULL) = (name IS NULL)),
  CHECK (unique_opens <= successful_sent AND unique_clicks <= successful_sent AND unique_replies <= successful_sent)
);
CREATE INDEX blasts_org_sent ON analytics.blasts (org_id, sent_at DESC NULLS LAST, id DESC);
