-- +goose Up
-- The hold a node takes on a transfer before it sends it: until send_lease
-- the transfer is not due for anyone else (see ../postgres/ under the same
-- version, which also leaves room on each page for the claim; SQLite has no
-- fillfactor).
ALTER TABLE transactions ADD COLUMN send_lease BIGINT;
ALTER TABLE refunds ADD COLUMN send_lease BIGINT;
ALTER TABLE unmatched_receipts ADD COLUMN send_lease BIGINT;

-- +goose Down
ALTER TABLE unmatched_receipts DROP COLUMN send_lease;
ALTER TABLE refunds DROP COLUMN send_lease;
ALTER TABLE transactions DROP COLUMN send_lease;
