-- Two corrections, each with the repair of the rollups 001 got wrong. Every figure is rebuilt
-- from the deliveries and the raw events, which were always recorded per org and correctly.

-- 1. A blast is scoped by its org. Blasts were keyed by their id alone, so one org's events
--    naming another org's blast id changed that blast's counters and activity, and the org whose
--    events came first owned the row (the real owner's metadata was then refused). Now each org
--    counts its own (org, blast id); only described blasts (with metadata) claim an id for good.
ALTER TABLE analytics.blasts DROP CONSTRAINT blasts_pkey;
ALTER TABLE analytics.blasts ADD PRIMARY KEY (org_id, id);
-- Blast ids are global: metadata names a blast of one org only. Also settles two orgs
-- describing the same new id at the same time, which their separate org turns let race.
CREATE UNIQUE INDEX blasts_described_id ON analytics.blasts (id) WHERE described_at IS NOT NULL;

-- The row of every (org, blast) that has deliveries; the described rows keep their org (the
-- metadata was only ever accepted from the org that owned the row).
INSERT INTO analytics.blasts (org_id, id)
SELECT DISTINCT org_id, blast_id FROM analytics.deliveries WHERE blast_id IS NOT NULL
ON CONFLICT DO NOTHING;

UPDATE analytics.blasts SET successful_sent = 0, unique_opens = 0, unique_clicks = 0, unique_replies = 0,
  total_opens = 0, total_clicks = 0, total_replies = 0;
-- As domain/delivery.ts counts: unique counts over successfully sent deliveries, raw counts over all.
UPDATE analytics.blasts b SET
    successful_sent = c.successful_sent, unique_opens = c.unique_opens, unique_clicks = c.unique_clicks,
    unique_replies = c.unique_replies, total_opens = c.total_opens, total_clicks = c.total_clicks,
    total_replies = c.total_replies
  FROM (
    SELECT org_id, blast_id,
           count(*) FILTER (WHERE ok) AS successful_sent,
           count(*) FILTER (WHERE ok AND opens > 0) AS unique_opens,
           count(*) FILTER (WHERE ok AND clicks > 0) AS unique_clicks,
           count(*) FILTER (WHERE ok AND replies > 0) AS unique_replies,
           sum(opens) AS total_opens, sum(clicks) AS total_clicks, sum(replies) AS total_replies
      FROM (SELECT *, sent_at IS NOT NULL AND NOT bounced AND NOT send_failed AS ok
              FROM analytics.deliveries WHERE blast_id IS NOT NULL) d
     GROUP BY org_id, blast_id
  ) c
 WHERE b.org_id = c.org_id AND b.id = c.blast_id;

-- A blast's activity per org, rebuilt: sends on the day of each successful delivery's send;
-- opens, clicks and human replies on the day of their event, for the delivery's blast.
DROP TABLE analytics.blast_daily_activity;
CREATE TABLE analytics.blast_daily_activity (
  org_id text NOT NULL,
  blast_id text NOT NULL,
  day date NOT NULL,
  action text NOT NULL CHECK (action IN ('sends', 'opens', 'clicks', 'replies')),
  count int NOT NULL CHECK (count >= 0),
  PRIMARY KEY (org_id, blast_id, day, action)
);
INSERT INTO analytics.blast_daily_activity (org_id, blast_id, day, action, count)
SELECT org_id, blast_id, (sent_at AT TIME ZONE 'UTC')::date, 'sends', count(*)
  FROM analytics.deliveries
 WHERE blast_id IS NOT NULL AND sent_at IS NOT NULL AND NOT bounced AND NOT send_failed
 GROUP BY 1, 2, 3
UNION ALL
SELECT d.org_id, d.blast_id, (ev.occurred_at AT TIME ZONE 'UTC')::date,
       CASE ev.kind WHEN 'open' THEN 'opens' WHEN 'click' THEN 'clicks' ELSE 'replies' END, count(*)
  FROM analytics.email_events ev
  JOIN analytics.sent_emails s ON s.org_id = ev.org_id AND s.message_id = ev.message_id
  JOIN analytics.deliveries d ON d.sent_email_id = s.id AND d.recipient_email = ev.recipient_email
 WHERE d.blast_id IS NOT NULL
   AND (ev.kind IN ('open', 'click') OR (ev.kind = 'reply' AND NOT ev.auto_reply))
 GROUP BY 1, 2, 3, 4;

-- A blast's recipient rows are read by org and blast.
DROP INDEX analytics.deliveries_blast;
CREATE INDEX deliveries_blast ON analytics.deliveries (org_id, blast_id, recipient_email) WHERE blast_id IS NOT NULL;

-- 2. A sent email's sent_at is the first SEND of a delivery that went out (NULL while there is
--    none), not its earliest event of any kind: an email that only failed before sending, or
--    whose open was stamped before its send, no longer gets a made-up time.
ALTER TABLE analytics.sent_emails ALTER COLUMN sent_at DROP NOT NULL;
UPDATE analytics.sent_emails e SET sent_at = (
  SELECT min(d.sent_at) FROM analytics.deliveries d WHERE d.sent_email_id = e.id AND NOT d.send_failed);
