-- +goose Up
-- MED disputes (docs/med.md): one per contest of a received Pix. blocked is
-- what of amount is held from the owner's available balance now; psp_id is
-- the PSP's infraction id and return_id the PSP's id of the devolução that
-- returned it, each recorded once whichever reading sees it first.
CREATE TABLE disputes (
    id                     TEXT PRIMARY KEY,
    client_id              TEXT NOT NULL REFERENCES clients (id),
    transaction_id         TEXT NOT NULL REFERENCES transactions (id),
    amount                 BIGINT NOT NULL CHECK (amount > 0),
    blocked                BIGINT NOT NULL DEFAULT 0 CHECK (blocked >= 0 AND blocked <= amount),
    reason                 TEXT NOT NULL CHECK (reason IN ('FRAUD', 'OPERATIONAL_FAILURE', 'PIX_AUTOMATICO')),
    status                 TEXT NOT NULL CHECK (status IN ('OPEN', 'CLOSED')),
    respond_by             BIGINT NOT NULL,
    defense_accept         BOOLEAN,
    defense_justification  TEXT,
    defense_at             BIGINT,
    outcome                TEXT CHECK (outcome IS NULL OR outcome IN ('released', 'returned')),
    returned_amount        BIGINT NOT NULL DEFAULT 0 CHECK (returned_amount >= 0),
    opened_at              BIGINT NOT NULL,
    closed_at              BIGINT,
    psp_id                 TEXT NOT NULL DEFAULT '',
    return_id              TEXT NOT NULL DEFAULT ''
);
CREATE INDEX disputes_client_opened ON disputes (client_id, opened_at, id);
CREATE INDEX disputes_transaction ON disputes (transaction_id);
CREATE INDEX disputes_open ON disputes (client_id, opened_at) WHERE status = 'OPEN';
CREATE UNIQUE INDEX disputes_psp ON disputes (transaction_id, psp_id) WHERE psp_id <> '';
CREATE UNIQUE INDEX disputes_return ON disputes (return_id) WHERE return_id <> '';

-- +goose Down
DROP TABLE disputes;
