-- The period summary from a rollup whose size does not grow with the data. A recipient counts
-- in a period starting on day D when its latest successful send is on or after D, and as
-- having opened (clicked, replied) when its latest open is on or after D as well: when the
-- earlier of the two days is on or after D. So per org, signal and day, the rollup holds how
-- many recipients have that earlier day ('sent': the latest send's day), and a summary since D
-- sums the days on or after D: at most 4 rows per day of the period, whatever the number of
-- recipients or events. Periods start at a UTC midnight (domain/period.ts): days lose nothing.
CREATE TABLE analytics.recipient_days (
  org_id text NOT NULL,
  day date NOT NULL,
  signal text NOT NULL CHECK (signal IN ('sent', 'open', 'click', 'reply')),
  recipients bigint NOT NULL,
  PRIMARY KEY (org_id, day, signal)
);

-- A recipient row's cells: one per signal it has, on LEAST(latest send day, signal day).
CREATE FUNCTION analytics.recipient_cells(last_sent_at timestamptz, last_open_at timestamptz,
    last_click_at timestamptz, last_reply_at timestamptz)
  RETURNS TABLE (day date, signal text) LANGUAGE sql IMMUTABLE AS $$
  SELECT (LEAST(last_sent_at, s.at) AT TIME ZONE 'UTC')::date, s.signal
    FROM (VALUES ('sent', last_sent_at), ('open', last_open_at), ('click', last_click_at),
                 ('reply', last_reply_at)) AS s(signal, at)
   WHERE last_sent_at IS NOT NULL AND s.at IS NOT NULL
$$;

-- Kept by the database itself from every change of analytics.recipients (ingestion's upsert
-- and a bounce's retraction alike): once per statement, from its transition tables, each old
-- row's cells taken away and each new row's added. Unchanged rows cancel out.
CREATE FUNCTION analytics.recipient_days_apply() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO analytics.recipient_days AS t (org_id, day, signal, recipients)
    SELECT r.org_id, c.day, c.signal, count(*)
      FROM new_rows r
      CROSS JOIN LATERAL analytics.recipient_cells(r.last_sent_at, r.last_open_at, r.last_click_at, r.last_reply_at) c
     GROUP BY 1, 2, 3
    ON CONFLICT (org_id, day, signal) DO UPDATE SET recipients = t.recipients + excluded.recipients;
  ELSIF TG_OP = 'DELETE' THEN
    UPDATE analytics.recipient_days t SET recipients = t.recipients - d.n
      FROM (SELECT r.org_id, c.day, c.signal, count(*) AS n
              FROM old_rows r
              CROSS JOIN LATERAL analytics.recipient_cells(r.last_sent_at, r.last_open_at, r.last_click_at, r.last_reply_at) c
             GROUP BY 1, 2, 3) d
     WHERE t.org_id = d.org_id AND t.day = d.day AND t.signal = d.signal;
  ELSE
    INSERT INTO analytics.recipient_days AS t (org_id, day, signal, recipients)
    SELECT r.org_id, c.day, c.signal, sum(r.delta)
      FROM (SELECT org_id, last_sent_at, last_open_at, last_click_at, last_reply_at, 1 AS delta FROM new_rows
            UNION ALL
            SELECT org_id, last_sent_at, last_open_at, last_click_at, last_reply_at, -1 FROM old_rows) r
      CROSS JOIN LATERAL analytics.recipient_cells(r.last_sent_at, r.last_open_at, r.last_click_at, r.last_reply_at) c
     GROUP BY 1, 2, 3
    HAVING sum(r.delta) <> 0
    ON CONFLICT (org_id, day, signal) DO UPDATE SET recipients = t.recipients + excluded.recipients;
  END IF;
  RETURN NULL;
END
$$;

-- The recipients there are now.
INSERT INTO analytics.recipient_days (org_id, day, signal, recipients)
SELECT r.org_id, c.day, c.signal, count(*)
  FROM analytics.recipients r
  CROSS JOIN LATERAL analytics.recipient_cells(r.last_sent_at, r.last_open_at, r.last_click_at, r.last_reply_at) c
 GROUP BY 1, 2, 3;

CREATE TRIGGER recipient_days_insert AFTER INSERT ON analytics.recipients
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION analytics.recipient_days_apply();
CREATE TRIGGER recipient_days_update AFTER UPDATE ON analytics.recipients
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION analytics.recipient_days_apply();
CREATE TRIGGER recipient_days_delete AFTER DELETE ON analytics.recipients
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION analytics.recipient_days_apply();
