-- +goose Up
-- Scheduled payouts (docs/payouts.md): the transaction is stored PENDING
-- with send_state 'scheduled' and no settle_at, so the sender never sees
-- it; this row says when its day starts (due_at, the first instant of
-- scheduled_date in São Paulo on the client's clock) and whether it is
-- still waiting. state leaves 'scheduled' in the same transaction as the
-- payout's reservation, cancel or failure, each guarded by it: a payout
-- starts at most once whatever the nodes and crashes.
CREATE TABLE scheduled_payouts (
    transaction_id  TEXT PRIMARY KEY REFERENCES transactions (id),
    client_id       TEXT NOT NULL REFERENCES clients (id),
    scheduled_date  TEXT NOT NULL,
    due_at          BIGINT NOT NULL,
    state           TEXT NOT NULL CHECK (state IN ('scheduled', 'started', 'cancelled', 'failed'))
);
CREATE INDEX scheduled_payouts_due ON scheduled_payouts (due_at) WHERE state = 'scheduled';
CREATE INDEX scheduled_payouts_client_due ON scheduled_payouts (client_id, due_at) WHERE state = 'scheduled';
-- The panel's lists, latest day first.
CREATE INDEX scheduled_payouts_pages ON scheduled_payouts (due_at, transaction_id);
CREATE INDEX scheduled_payouts_client_pages ON scheduled_payouts (client_id, due_at, transaction_id);

-- Batches of payouts: each item is an ordinary payout (its own
-- transaction); the batch keeps the answer it gave per item, and is
-- completed (pix.batch.completed written) once no accepted item is PENDING.
CREATE TABLE payout_batches (
    id            TEXT PRIMARY KEY,
    client_id     TEXT NOT NULL REFERENCES clients (id),
    external_id   TEXT NOT NULL,
    request_hash  TEXT NOT NULL,
    callback_url  TEXT NOT NULL DEFAULT '',
    state         TEXT NOT NULL CHECK (state IN ('accepting', 'accepted', 'completed')),
    total         INTEGER NOT NULL CHECK (total > 0),
    accepted      INTEGER NOT NULL DEFAULT 0,
    rejected      INTEGER NOT NULL DEFAULT 0,
    lease_until   BIGINT NOT NULL DEFAULT 0,
    created_at    BIGINT NOT NULL,
    completed_at  BIGINT
);
CREATE UNIQUE INDEX payout_batches_client_external ON payout_batches (client_id, external_id);
CREATE INDEX payout_batches_client_created ON payout_batches (client_id, created_at, id);
CREATE INDEX payout_batches_created ON payout_batches (created_at, id);
CREATE INDEX payout_batches_open ON payout_batches (created_at) WHERE state = 'accepted';

CREATE TABLE payout_batch_items (
    batch_id        TEXT NOT NULL REFERENCES payout_batches (id),
    idx             INTEGER NOT NULL,
    external_id     TEXT,
    transaction_id  TEXT,
    accepted        TEXT NOT NULL CHECK (accepted IN ('PENDING', 'SCHEDULED', 'REJECTED')),
    error_code      TEXT,
    error_message   TEXT,
    PRIMARY KEY (batch_id, idx)
);

-- +goose Down
DROP TABLE payout_batch_items;
DROP TABLE payout_batches;
DROP TABLE scheduled_payouts;
