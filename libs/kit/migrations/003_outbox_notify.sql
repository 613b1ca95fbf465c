-- A committed outbox row wakes the relays at once: NOTIFY is delivered when the writing
-- transaction commits (never for a rollback), to every process listening on the schema's
-- channel, whichever process wrote the row. The relays then poll only as a safety net.
-- One notification per statement (and Postgres folds repeats within a transaction).
CREATE FUNCTION {{schema}}.outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('outbox_' || TG_TABLE_SCHEMA, '');
  RETURN NULL;
END
$$;
CREATE TRIGGER outbox_notify AFTER INSERT ON {{schema}}.outbox
  FOR EACH STATEMENT EXECUTE FUNCTION {{schema}}.outbox_notify();
