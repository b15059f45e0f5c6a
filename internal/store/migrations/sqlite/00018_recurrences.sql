-- +goose Up
-- Pix Automático (docs/recurrences.md). A recurrence is what the payer
-- authorizes once; psp_id is the PSP's idRec. next_cycle is the number of
-- the next cycle whose charge is not created yet and next_due its due date
-- ('' when no cycle is left): the cycle job looks for next_due alone, and
-- moves both with a guarded UPDATE so that no cycle is created twice.
CREATE TABLE recurrences (
    id               TEXT PRIMARY KEY,
    client_id        TEXT NOT NULL,
    external_id      TEXT NOT NULL,
    idempotency_key  TEXT,
    request_hash     TEXT NOT NULL,
    psp_id           TEXT NOT NULL,
    status           TEXT NOT NULL CHECK (status IN ('CREATED', 'APPROVED', 'REJECTED', 'EXPIRED', 'CANCELLED', 'FINISHED')),
    cancelled_by     TEXT NOT NULL DEFAULT '',
    payer_name       TEXT NOT NULL,
    payer_document   TEXT NOT NULL,
    contract         TEXT NOT NULL,
    description      TEXT NOT NULL,
    frequency        TEXT NOT NULL,
    start_date       TEXT NOT NULL,
    end_date         TEXT NOT NULL DEFAULT '',
    amount           BIGINT NOT NULL CHECK (amount > 0),
    retry            TEXT NOT NULL,
    first_payment    BIGINT NOT NULL DEFAULT 0,
    first_payment_id TEXT,
    qrcode           TEXT NOT NULL,
    callback_url     TEXT NOT NULL,
    next_cycle       INTEGER NOT NULL DEFAULT 0,
    next_due         TEXT NOT NULL DEFAULT '',
    created_at       BIGINT NOT NULL,
    updated_at       BIGINT NOT NULL
);
CREATE UNIQUE INDEX recurrences_external ON recurrences (client_id, external_id);
CREATE UNIQUE INDEX recurrences_idempotency ON recurrences (client_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE UNIQUE INDEX recurrences_psp ON recurrences (psp_id);
CREATE INDEX recurrences_next ON recurrences (next_due) WHERE status = 'APPROVED' AND next_due <> '';
CREATE INDEX recurrences_waiting ON recurrences (created_at) WHERE status = 'CREATED';
CREATE INDEX recurrences_created ON recurrences (created_at, id);

-- One cycle's charge: payment_id is its cash-in transaction. attempts
-- counts the debits tried (paid or failed); retry_on is a retry the PSP
-- is still to be asked for ('' when none).
CREATE TABLE recurrence_cycles (
    payment_id     TEXT PRIMARY KEY,
    recurrence_id  TEXT NOT NULL REFERENCES recurrences (id),
    cycle          INTEGER NOT NULL,
    due_date       TEXT NOT NULL,
    attempts       INTEGER NOT NULL DEFAULT 0,
    retry_on       TEXT NOT NULL DEFAULT '',
    updated_at     BIGINT NOT NULL
);
CREATE UNIQUE INDEX recurrence_cycles_cycle ON recurrence_cycles (recurrence_id, cycle);
CREATE INDEX recurrence_cycles_retry ON recurrence_cycles (retry_on) WHERE retry_on <> '';

-- A cycle's charge, and the first payment of a journey-3 recurrence, name
-- their recurrence.
ALTER TABLE transactions ADD COLUMN recurrence_id TEXT;

-- +goose Down
ALTER TABLE transactions DROP COLUMN recurrence_id;
DROP TABLE recurrence_cycles;
DROP TABLE recurrences;
