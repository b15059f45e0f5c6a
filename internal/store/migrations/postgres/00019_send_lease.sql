-- +goose Up
-- The hold a node takes on a transfer before it sends it (docs/decisions.md,
-- "A payout's claim is a HOT update"): until send_lease the transfer is not
-- due for anyone else. No index holds the column and the claim leaves
-- settle_at (which transactions_due_settle indexes) as it is, so with free
-- room on the page the claim is a HOT update: no new index entry.
ALTER TABLE transactions ADD COLUMN send_lease BIGINT;
ALTER TABLE refunds ADD COLUMN send_lease BIGINT;
ALTER TABLE unmatched_receipts ADD COLUMN send_lease BIGINT;
-- The new column takes the statistics target of the others (version 9).
ALTER TABLE transactions ALTER COLUMN send_lease SET STATISTICS 10;
-- Room in each new page of transactions for a payout's claimed version.
ALTER TABLE transactions SET (fillfactor = 70);

-- +goose Down
ALTER TABLE transactions RESET (fillfactor);
ALTER TABLE unmatched_receipts DROP COLUMN send_lease;
ALTER TABLE refunds DROP COLUMN send_lease;
ALTER TABLE transactions DROP COLUMN send_lease;
