-- The hourly purge deletes handled-event records by age (kit housekeeping.ts).
CREATE INDEX processed_events_processed_at ON {{schema}}.processed_events (processed_at);
