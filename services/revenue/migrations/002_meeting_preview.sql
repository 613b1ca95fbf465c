-- Preview bookings (test runs of a schedule) are meetings all the same: Q&A occurrences, answer
-- sources and insight capturedFrom may name them, so the projection keeps them too. Only the
-- deal ↔ meeting links leave them out, as the spec leaves them out of CRM sync.
ALTER TABLE revenue.meetings ADD COLUMN preview boolean NOT NULL DEFAULT false;
