-- +goose NO TRANSACTION
-- +goose Up
-- Sub-accounts and the transfers between a parent and its sub-accounts
-- (docs/marketplace.md). Every client gets an account_id, the UUID v4 that
-- splits and transfers name; a sub-account names its parent. SQLite has no
-- UUID function, so a v4 is made of random bytes, and a trigger gives one
-- to a client inserted without one (every client has one). SQLite cannot
-- change a CHECK constraint in place, so transactions (whose type now also
-- takes split and transfer) and accounts (a clearing kind) are rebuilt as
-- in version 23, every column and index kept. parent_id has no foreign key
-- here (the use cases set it from the authenticated parent): SQLite cannot
-- drop a column a foreign key uses, and the migration tests step back.
PRAGMA foreign_keys = OFF;
BEGIN IMMEDIATE;
ALTER TABLE clients ADD COLUMN account_id TEXT;
ALTER TABLE clients ADD COLUMN parent_id TEXT;
ALTER TABLE clients ADD COLUMN document TEXT NOT NULL DEFAULT '';
ALTER TABLE clients ADD COLUMN external_id TEXT;
ALTER TABLE clients ADD COLUMN postback_url TEXT NOT NULL DEFAULT '';
ALTER TABLE clients ADD COLUMN request_hash TEXT NOT NULL DEFAULT '';
UPDATE clients SET account_id = lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2)
    || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))
    WHERE account_id IS NULL;
CREATE UNIQUE INDEX clients_account ON clients (account_id);
CREATE UNIQUE INDEX clients_parent_external ON clients (parent_id, external_id) WHERE external_id IS NOT NULL;
CREATE INDEX clients_children ON clients (parent_id, created_at, id) WHERE parent_id IS NOT NULL;
-- +goose StatementBegin
CREATE TRIGGER clients_account_id AFTER INSERT ON clients WHEN NEW.account_id IS NULL
BEGIN
    UPDATE clients SET account_id = lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2)
        || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))
        WHERE id = NEW.id;
END;
-- +goose StatementEnd

CREATE TABLE transactions_new (
    id               TEXT PRIMARY KEY,
    client_id        TEXT NOT NULL REFERENCES clients (id),
    type             TEXT NOT NULL CHECK (type IN ('cashin', 'cashout', 'split', 'transfer')),
    external_id      TEXT,
    idempotency_key  TEXT,
    request_hash     TEXT NOT NULL,
    status           TEXT NOT NULL CHECK (status IN ('PENDING', 'PAID', 'CANCELLED', 'REFUNDED', 'REVERSED')),
    amount           BIGINT NOT NULL CHECK (amount > 0),
    tax              BIGINT NOT NULL DEFAULT 0 CHECK (tax >= 0),
    refunded_amount  BIGINT NOT NULL DEFAULT 0 CHECK (refunded_amount >= 0),
    refund_pending   BIGINT NOT NULL DEFAULT 0 CHECK (refund_pending >= 0),
    created_at       BIGINT NOT NULL,
    confirmed_at     BIGINT,
    expires_at       BIGINT,
    settle_at        BIGINT,
    txid             TEXT,
    qrcode           TEXT NOT NULL DEFAULT '',
    callback_url     TEXT NOT NULL DEFAULT '',
    details          TEXT NOT NULL DEFAULT '{}',
    end_to_end_id    TEXT,
    send_state       TEXT NOT NULL DEFAULT '',
    send_attempts    INTEGER NOT NULL DEFAULT 0,
    paid_amount      BIGINT,
    due              TEXT,
    expected_amount  BIGINT,
    recurrence_id    TEXT,
    send_lease       BIGINT,
    payer_name       TEXT,
    payer_document   TEXT,
    med_returned     BIGINT NOT NULL DEFAULT 0 CHECK (med_returned >= 0),
    source_payment_id       TEXT,
    counterparty_account_id TEXT,
    CHECK (refunded_amount + refund_pending <= amount)
);
INSERT INTO transactions_new (id, client_id, type, external_id, idempotency_key, request_hash, status, amount, tax,
        refunded_amount, refund_pending, created_at, confirmed_at, expires_at, settle_at, txid, qrcode, callback_url, details,
        end_to_end_id, send_state, send_attempts, paid_amount, due, expected_amount, recurrence_id, send_lease, payer_name,
        payer_document, med_returned)
    SELECT id, client_id, type, external_id, idempotency_key, request_hash, status, amount, tax,
        refunded_amount, refund_pending, created_at, confirmed_at, expires_at, settle_at, txid, qrcode, callback_url, details,
        end_to_end_id, send_state, send_attempts, paid_amount, due, expected_amount, recurrence_id, send_lease, payer_name,
        payer_document, med_returned FROM transactions;
DROP TABLE transactions;
ALTER TABLE transactions_new RENAME TO transactions;
CREATE UNIQUE INDEX transactions_client_external ON transactions (client_id, external_id) WHERE external_id IS NOT NULL;
CREATE UNIQUE INDEX transactions_client_idem ON transactions (client_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE UNIQUE INDEX transactions_txid ON transactions (txid) WHERE txid IS NOT NULL;
CREATE INDEX transactions_history ON transactions (client_id, created_at, id);
CREATE INDEX transactions_history_status ON transactions (client_id, status, created_at, id);
CREATE INDEX transactions_history_type ON transactions (client_id, type, created_at, id);
CREATE INDEX transactions_due_expiry ON transactions (expires_at) WHERE status = 'PENDING' AND type = 'cashin';
CREATE INDEX transactions_due_settle ON transactions (settle_at) WHERE settle_at IS NOT NULL;
CREATE INDEX transactions_created ON transactions (created_at);
CREATE INDEX transactions_confirmed ON transactions (confirmed_at) WHERE confirmed_at IS NOT NULL;
CREATE UNIQUE INDEX transactions_end_to_end ON transactions (end_to_end_id) WHERE end_to_end_id IS NOT NULL;

CREATE TABLE accounts_new (
    id            TEXT PRIMARY KEY,
    client_id     TEXT REFERENCES clients (id),
    kind          TEXT NOT NULL CHECK (kind IN ('available', 'pending', 'settlement', 'fees', 'suspense', 'blocked', 'debt', 'clearing')),
    balance       BIGINT NOT NULL DEFAULT 0,
    seq           BIGINT NOT NULL DEFAULT 0,
    moved_at      BIGINT NOT NULL DEFAULT 0,
    moved_before  BIGINT NOT NULL DEFAULT 0,
    CHECK (kind NOT IN ('available', 'pending', 'suspense', 'blocked') OR balance >= 0),
    CHECK (kind <> 'debt' OR balance <= 0),
    CHECK (client_id IS NOT NULL OR id LIKE 'house:%')
);
INSERT INTO accounts_new (id, client_id, kind, balance, seq, moved_at, moved_before)
    SELECT id, client_id, kind, balance, seq, moved_at, moved_before FROM accounts;
DROP TABLE accounts;
ALTER TABLE accounts_new RENAME TO accounts;
CREATE UNIQUE INDEX accounts_client_kind ON accounts (client_id, kind);
COMMIT;
PRAGMA foreign_keys = ON;

-- +goose Down
-- The wider CHECKs of transactions and accounts stay (a rebuild back could
-- meet transfer rows); the columns, indexes and trigger go.
DROP TRIGGER IF EXISTS clients_account_id;
DROP INDEX IF EXISTS clients_children;
DROP INDEX IF EXISTS clients_parent_external;
DROP INDEX IF EXISTS clients_account;
ALTER TABLE clients DROP COLUMN request_hash;
ALTER TABLE clients DROP COLUMN postback_url;
ALTER TABLE clients DROP COLUMN external_id;
ALTER TABLE clients DROP COLUMN document;
ALTER TABLE clients DROP COLUMN parent_id;
ALTER TABLE clients DROP COLUMN account_id;
ALTER TABLE transactions DROP COLUMN counterparty_account_id;
ALTER TABLE transactions DROP COLUMN source_payment_id;
