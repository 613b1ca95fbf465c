-- The NOTIFY of 003 is gone. A transaction that notifies takes a lock that is one for the whole
-- cluster and holds it until its commit is on disk, so that notifications queue in commit
-- order: every write with an outbox row waited for the commits before it, one flush each,
-- instead of sharing a flush (group commit). On this machine the same insert ran at 1,500–1,600
-- commits a second with the trigger and 3,000–3,400 without it (pgbench, 10 clients).
-- The relay is woken by the commits of its own process instead (kit's onOutboxCommit), and
-- polls for the rest.
DROP TRIGGER IF EXISTS outbox_notify ON {{schema}}.outbox;
DROP FUNCTION IF EXISTS {{schema}}.outbox_notify();
