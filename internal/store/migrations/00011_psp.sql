-- +goose Up
-- Real PSPs (docs/psp.md). end_to_end_id is the PIX network's id of the
-- operation: a charge's credited payment (unique: one payment credits
-- once), a payout's send, a refund's return. send_state tracks an outgoing
-- transfer at a PSP: 'to_send' (committed, never sent), 'unknown' (a send
-- may have reached the PSP: read its status before any resend), 'sent'
-- (accepted, polling), 'done'; '' for the sandbox simulator, which settles
-- at settle_at without sending anything.
ALTER TABLE transactions ADD COLUMN end_to_end_id TEXT;
ALTER TABLE transactions ADD COLUMN send_state TEXT NOT NULL DEFAULT '';
ALTER TABLE transactions ADD COLUMN send_attempts INTEGER NOT NULL DEFAULT 0;
CREATE UNIQUE INDEX transactions_end_to_end ON transactions (end_to_end_id) WHERE end_to_end_id IS NOT NULL;
ALTER TABLE refunds ADD COLUMN end_to_end_id TEXT;
ALTER TABLE refunds ADD COLUMN send_state TEXT NOT NULL DEFAULT '';
ALTER TABLE refunds ADD COLUMN send_attempts INTEGER NOT NULL DEFAULT 0;

-- Readings of a PSP's list of received payments: read_until is where the
-- last complete reading ended; next_at both spaces the readings and leases
-- the next one to a single node.
CREATE TABLE psp_readings (
    name        TEXT PRIMARY KEY,
    read_until  BIGINT NOT NULL,
    next_at     BIGINT NOT NULL
);

-- +goose Down
DROP TABLE psp_readings;
DROP INDEX transactions_end_to_end;
ALTER TABLE refunds DROP COLUMN send_attempts;
ALTER TABLE refunds DROP COLUMN send_state;
ALTER TABLE refunds DROP COLUMN end_to_end_id;
ALTER TABLE transactions DROP COLUMN send_attempts;
ALTER TABLE transactions DROP COLUMN send_state;
ALTER TABLE transactions DROP COLUMN end_to_end_id;
