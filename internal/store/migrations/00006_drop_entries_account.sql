-- +goose Up
-- No query reads entries by account: balances live on the account rows, the
-- ledger view reads a transaction's postings (postings_transaction) and
-- their entries by primary key, and the consistency check (CheckLedger)
-- aggregates the whole table. The index only cost four insertions per
-- payout, its reservation and settlement entries (docs/decisions.md).
-- Accounts are never deleted, so their foreign key needs no index either.
DROP INDEX entries_account;

-- +goose Down
CREATE INDEX entries_account ON entries (account_id);
