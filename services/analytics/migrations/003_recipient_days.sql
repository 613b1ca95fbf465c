-- The period summary from a rollup whose size does not grow with the data: per org, how many
-- recipients have their latest successful send on each UTC day (signal 'sent', signal_day =
-- sent_day), and of those how many have their latest open, click or reply on each day. A
-- summary since a day D sums the cells with sent_day >= D (and signal_day >= D): at most
-- (period days × days with signals) × 4 cells, whatever the number of recipients or events.
-- Periods start at a UTC midnight (domain/period.ts), so days lose nothing.
CREATE TABLE analytics.recipient_days (
  org_id text NOT NULL,
  sent_day date NOT NULL,
  signal text NOT NULL CHECK (signal IN ('sent', 'open', 'click', 'reply')),
  signal_day date NOT NULL,
  recipients bigint NOT NULL,
  PRIMARY KEY (org_id, sent_day, signal, signal_day)
);

-- Kept by the database itself from every change of analytics.recipients (ingestion's upsert
-- and a bounce's retraction alike): once per statement, from its transition tables, each old
-- row's cells taken away and each new row's added. Unchanged rows cancel out.
CREATE FUNCTION analytics.recipient_days_apply() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO analytics.recipient_days AS t (org_id, sent_day, signal, signal_day, recipients)
    SELECT r.org_id, (r.last_sent_at AT TIME ZONE 'UTC')::date, s.signal, (s.at AT TIME ZONE 'UTC')::date, count(*)
      FROM new_rows r
      CROSS JOIN LATERAL (VALUES ('sent', r.last_sent_at), ('open', r.last_open_at), ('click', r.last_click_at),
                                 ('reply', r.last_reply_at)) AS s(signal, at)
     WHERE r.last_sent_at IS NOT NULL AND s.at IS NOT NULL
     GROUP BY 1, 2, 3, 4
    ON CONFLICT (org_id, sent_day, signal, signal_day) DO UPDATE SET recipients = t.recipients + excluded.recipients;
  ELSIF TG_OP = 'DELETE' THEN
    UPDATE analytics.recipient_days t SET recipients = t.recipients - c.n
      FROM (SELECT r.org_id, (r.last_sent_at AT TIME ZONE 'UTC')::date AS sent_day, s.signal,
                   (s.at AT TIME ZONE 'UTC')::date AS signal_day, count(*) AS n
              FROM old_rows r
              CROSS JOIN LATERAL (VALUES ('sent', r.last_sent_at), ('open', r.last_open_at),
                                         ('click', r.last_click_at), ('reply', r.last_reply_at)) AS s(signal, at)
             WHERE r.last_sent_at IS NOT NULL AND s.at IS NOT NULL
             GROUP BY 1, 2, 3, 4) c
     WHERE t.org_id = c.org_id AND t.sent_day = c.sent_day AND t.signal = c.signal AND t.signal_day = c.signal_day;
  ELSE
    INSERT INTO analytics.recipient_days AS t (org_id, sent_day, signal, signal_day, recipients)
    SELECT c.org_id, (c.last_sent_at AT TIME ZONE 'UTC')::date, s.signal, (s.at AT TIME ZONE 'UTC')::date, sum(c.delta)
      FROM (SELECT org_id, last_sent_at, last_open_at, last_click_at, last_reply_at, 1 AS delta FROM new_rows
            UNION ALL
            SELECT org_id, last_sent_at, last_open_at, last_click_at, last_reply_at, -1 FROM old_rows) c
      CROSS JOIN LATERAL (VALUES ('sent', c.last_sent_at), ('open', c.last_open_at), ('click', c.last_click_at),
                                 ('reply', c.last_reply_at)) AS s(signal, at)
     WHERE c.last_sent_at IS NOT NULL AND s.at IS NOT NULL
     GROUP BY 1, 2, 3, 4
    HAVING sum(c.delta) <> 0
    ON CONFLICT (org_id, sent_day, signal, signal_day) DO UPDATE SET recipients = t.recipients + excluded.recipients;
  END IF;
  RETURN NULL;
END
$$;

-- The recipients there are now.
INSERT INTO analytics.recipient_days (org_id, sent_day, signal, signal_day, recipients)
SELECT r.org_id, (r.last_sent_at AT TIME ZONE 'UTC')::date, s.signal, (s.at AT TIME ZONE 'UTC')::date, count(*)
  FROM analytics.recipients r
  CROSS JOIN LATERAL (VALUES ('sent', r.last_sent_at), ('open', r.last_open_at), ('click', r.last_click_at),
                             ('reply', r.last_reply_at)) AS s(signal, at)
 WHERE r.last_sent_at IS NOT NULL AND s.at IS NOT NULL
 GROUP BY 1, 2, 3, 4;

CREATE TRIGGER recipient_days_insert AFTER INSERT ON analytics.recipients
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION analytics.recipient_days_apply();
CREATE TRIGGER recipient_days_update AFTER UPDATE ON analytics.recipients
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION analytics.recipient_days_apply();
CREATE TRIGGER recipient_days_delete AFTER DELETE ON analytics.recipients
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION analytics.recipient_days_apply();
