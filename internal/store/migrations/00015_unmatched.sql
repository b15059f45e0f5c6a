-- +goose Up
-- What a payer actually paid. amount stays what the charge asked for; a PSP
-- may confirm another amount (a payer typed a different value, or a PSP
-- computed one), and the fee and the credit follow the amount received.
-- Charges credited before this version: the amount their posting took from
-- the PIX network.
ALTER TABLE transactions ADD COLUMN paid_amount BIGINT;
UPDATE transactions SET paid_amount = (
    SELECT -e.amount FROM postings p JOIN entries e ON e.posting_id = p.id
    WHERE p.transaction_id = transactions.id AND p.kind = 'cashin.paid' AND e.account_id = transactions.client_id || ':settlement')
WHERE type = 'cashin' AND confirmed_at IS NOT NULL;

-- Money the PSP confirmed that no open charge takes: a Pix for a txid no
-- charge holds, or a second Pix for a paid charge. It is posted to the
-- house's suspense account and returned to the payer (devolução of
-- payment_end_to_end_id, id return_id), or held for an operator.
-- end_to_end_id, send_state, send_attempts and settle_at are the return's,
-- named as on refunds so that one send state machine steps both.
CREATE TABLE unmatched_receipts (
    id                      TEXT PRIMARY KEY,
    payment_end_to_end_id   TEXT NOT NULL,
    txid                    TEXT NOT NULL DEFAULT '',
    amount                  BIGINT NOT NULL CHECK (amount > 0),
    received_at             BIGINT NOT NULL,
    recorded_at             BIGINT NOT NULL,
    reason                  TEXT NOT NULL CHECK (reason IN ('no_charge', 'already_paid')),
    client_id               TEXT,
    transaction_id          TEXT,
    status                  TEXT NOT NULL CHECK (status IN ('HELD', 'RETURNING', 'RETURNED')),
    return_id               TEXT,
    return_error            TEXT NOT NULL DEFAULT '',
    returned_at             BIGINT,
    end_to_end_id           TEXT,
    send_state              TEXT NOT NULL DEFAULT '',
    send_attempts           INTEGER NOT NULL DEFAULT 0,
    settle_at               BIGINT
);
CREATE UNIQUE INDEX unmatched_receipts_payment ON unmatched_receipts (payment_end_to_end_id);
CREATE INDEX unmatched_receipts_recorded ON unmatched_receipts (recorded_at, id);
CREATE INDEX unmatched_receipts_due ON unmatched_receipts (settle_at) WHERE settle_at IS NOT NULL;

-- A cob being created at the PSP: written (committed) before the PSP call
-- and deleted once the charge that holds it is stored. One left behind by
-- a process that died in between is withdrawn at the PSP by a sweep, so no
-- payable cob stays held by no charge.
CREATE TABLE cob_intents (
    txid        TEXT PRIMARY KEY,
    client_id   TEXT NOT NULL,
    created_at  BIGINT NOT NULL
);
CREATE INDEX cob_intents_created ON cob_intents (created_at);

-- +goose Down
DROP TABLE cob_intents;
DROP TABLE unmatched_receipts;
ALTER TABLE transactions DROP COLUMN paid_amount;
