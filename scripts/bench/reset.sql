-- Empties the data tables after the pgbench phase (scripts/bench/run.sh,
-- profile.sh): pgbench's rows must not stay behind for pixgate serve — its
-- events, for one, point at a closed port and the webhook dispatcher would
-- spend the measured runs retrying them. The pgb_ clients' balances go back
-- to their seeded values; then the tables are compacted and a checkpoint
-- taken so that pixgate starts on a clean cluster.
TRUNCATE delivery_attempts, events, entries, postings, refunds, transactions;
UPDATE accounts SET balance = CASE kind WHEN 'available' THEN 100000000000000 WHEN 'settlement' THEN -100000000000000 ELSE 0 END
	WHERE client_id LIKE 'pgb\_%';
VACUUM FULL ANALYZE;
CHECKPOINT;
