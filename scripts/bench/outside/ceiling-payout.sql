-- pgbench: the payout ceiling of scripts/bench/outside.sh — reserve the
-- amount on a random account, insert the transaction, its two ledger
-- entries and an outbox row, in one transaction.
\set aid random(1, 1000)
\set amt random(1, 100000)
\set neg -:amt
BEGIN;
UPDATE accounts SET balance = balance - :amt, reserved = reserved + :amt, updated_at = now() WHERE id = :aid AND balance >= :amt;
INSERT INTO transactions (id, account_id, kind, amount, status)
    VALUES (md5(random()::text || clock_timestamp()::text), :aid, 'payout', :amt, 'PENDING') RETURNING id AS txid \gset
INSERT INTO entries (tx_id, account_id, amount) VALUES (:txid, :aid, :neg);
INSERT INTO entries (tx_id, account_id, amount) VALUES (:txid, :aid, :amt);
INSERT INTO outbox (tx_id, payload) VALUES (:txid, jsonb_build_object('event', 'payout.created', 'tx', :txid::text, 'amount', :amt::bigint));
COMMIT;
