-- pgbench: the charge ceiling of scripts/bench/outside.sh — a charge
-- writes one transaction row (no money moves until it is paid).
\set aid random(1, 1000)
\set amt random(100, 100000)
BEGIN;
INSERT INTO transactions (id, account_id, kind, amount, status)
    VALUES (md5(random()::text || clock_timestamp()::text), :aid, 'charge', :amt, 'PENDING') RETURNING id AS txid \gset
COMMIT;
