-- Request logs: one summary per API request the gateway answered for a valid key, written off
-- the request path from the gateway's batches on platform.requestlogs.v1. Kept 7 days.
--
-- Partitioned by day (declarative range partitioning): retention drops a whole day's
-- partition, never DELETEs rows, so the table stays small and vacuum has nothing to do. The
-- partitions are created ahead by the service (store/partitions.store.ts), not here.
CREATE TABLE request_logs.request_logs (
  org_id text NOT NULL,
  request_id text NOT NULL,
  created_at timestamptz NOT NULL,
  method text NOT NULL,
  route text NOT NULL,
  path_ids jsonb NOT NULL DEFAULT '{}',
  status int NOT NULL,
  problem_type text,
  duration_ms double precision NOT NULL,
  key_id text NOT NULL,
  acting_on text,
  idempotency_key text,
  -- The partition key is part of every unique index of a partitioned table. A redelivered
  -- batch carries the same (org, request, time), so its rows conflict and are skipped.
  PRIMARY KEY (org_id, request_id, created_at)
) PARTITION BY RANGE (created_at);

-- The list, newest first, and every filter narrows one org's recent rows.
CREATE INDEX request_logs_org_created ON request_logs.request_logs (org_id, created_at DESC, request_id DESC);
