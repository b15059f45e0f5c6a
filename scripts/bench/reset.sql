-- Empties the data tables after the pgbench phase (scripts/bench/run.sh,
-- profile.sh): pgbench's rows must not stay behind for pixgate serve — its
-- events, for one, point at a closed port and the webhook dispatcher would
-- spend the measured runs retrying them. The pgb_ clients' balances go back
-- to their seeded values, then a checkpoint is taken.
--
-- No VACUUM FULL or ANALYZE of the emptied tables: either records them as
-- empty (reltuples 0; TRUNCATE leaves -1, "unknown"), and the plans
-- PostgreSQL then caches per connection — the foreign-key checks of every
-- entries insert among them — scan those tables sequentially for as long as
-- the connection lives, while the run fills them: payouts at C=32 fell to
-- 1,500/s with 2.5 ms per entries insert when an earlier reset did that.
TRUNCATE delivery_attempts, events, entries, postings, refunds, transactions;
UPDATE accounts SET balance = CASE kind WHEN 'available' THEN 100000000000000 WHEN 'settlement' THEN -100000000000000 ELSE 0 END
	WHERE client_id LIKE 'pgb\_%';
VACUUM accounts;
CHECKPOINT;
