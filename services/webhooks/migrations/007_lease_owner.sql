-- Which worker holds an attempt's lease (its static identity, KAFKA_GROUP_INSTANCE_ID), so the
-- same worker restarted after a crash takes its own claims back at once instead of waiting for
-- them to expire: a busy endpoint's slots are otherwise held by the dead worker's leases.
ALTER TABLE webhooks.attempts ADD COLUMN leased_by text;
-- Only attempts in flight carry an owner (an outcome clears it), so this index stays small.
CREATE INDEX attempts_leased_by ON webhooks.attempts (leased_by) WHERE leased_by IS NOT NULL;
