-- +goose Up
-- One schema text serves SQLite and PostgreSQL: TEXT ids, BIGINT times in
-- Unix milliseconds (UTC), BIGINT money in centavos.

CREATE TABLE clients (
    id                    TEXT PRIMARY KEY,
    name                  TEXT NOT NULL,
    environment           TEXT NOT NULL CHECK (environment IN ('sandbox', 'production')),
    secret_hash           TEXT NOT NULL,
    webhook_secret        TEXT NOT NULL,
    prev_webhook_secret   TEXT NOT NULL DEFAULT '',
    prev_webhook_until    BIGINT NOT NULL DEFAULT 0,
    cashin_fee_bp         BIGINT NOT NULL DEFAULT 0 CHECK (cashin_fee_bp BETWEEN 0 AND 10000),
    cashin_fee_fixed      BIGINT NOT NULL DEFAULT 0 CHECK (cashin_fee_fixed >= 0),
    payout_fee_bp         BIGINT NOT NULL DEFAULT 0 CHECK (payout_fee_bp BETWEEN 0 AND 10000),
    payout_fee_fixed      BIGINT NOT NULL DEFAULT 0 CHECK (payout_fee_fixed >= 0),
    status                TEXT NOT NULL CHECK (status IN ('active', 'disabled')),
    created_at            BIGINT NOT NULL
);

-- A row claimed once; guards one-time bootstrap work across nodes.
CREATE TABLE bootstrap (
    name        TEXT PRIMARY KEY,
    created_at  BIGINT NOT NULL
);

-- Ledger accounts. Client accounts of kind available and pending can never
-- go below zero: the CHECK holds under any concurrency on both databases.
CREATE TABLE accounts (
    id          TEXT PRIMARY KEY,
    client_id   TEXT NOT NULL REFERENCES clients (id),
    kind        TEXT NOT NULL CHECK (kind IN ('available', 'pending', 'settlement', 'fees')),
    balance     BIGINT NOT NULL DEFAULT 0,
    CHECK (kind NOT IN ('available', 'pending') OR balance >= 0)
);
CREATE UNIQUE INDEX accounts_client_kind ON accounts (client_id, kind);

-- Charges (cashin) and payouts (cashout). status holds the lookup status.
CREATE TABLE transactions (
    id               TEXT PRIMARY KEY,
    client_id        TEXT NOT NULL REFERENCES clients (id),
    type             TEXT NOT NULL CHECK (type IN ('cashin', 'cashout')),
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
    CHECK (refunded_amount + refund_pending <= amount)
);
CREATE UNIQUE INDEX transactions_client_external ON transactions (client_id, external_id) WHERE external_id IS NOT NULL;
CREATE UNIQUE INDEX transactions_client_idem ON transactions (client_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE UNIQUE INDEX transactions_txid ON transactions (txid) WHERE txid IS NOT NULL;
CREATE INDEX transactions_history ON transactions (client_id, created_at, id);
CREATE INDEX transactions_history_status ON transactions (client_id, status, created_at, id);
CREATE INDEX transactions_history_type ON transactions (client_id, type, created_at, id);
CREATE INDEX transactions_due_expiry ON transactions (expires_at) WHERE status = 'PENDING' AND type = 'cashin';
CREATE INDEX transactions_due_settle ON transactions (settle_at) WHERE settle_at IS NOT NULL;

-- Balanced postings: the entries of one posting sum to zero.
CREATE TABLE postings (
    id              TEXT PRIMARY KEY,
    client_id       TEXT NOT NULL,
    transaction_id  TEXT NOT NULL,
    kind            TEXT NOT NULL,
    created_at      BIGINT NOT NULL
);
CREATE INDEX postings_transaction ON postings (transaction_id, created_at);

CREATE TABLE entries (
    posting_id  TEXT NOT NULL REFERENCES postings (id),
    seq         INTEGER NOT NULL,
    account_id  TEXT NOT NULL REFERENCES accounts (id),
    amount      BIGINT NOT NULL,
    PRIMARY KEY (posting_id, seq)
);
CREATE INDEX entries_account ON entries (account_id);

-- The outbox: every event is written in the transaction of the change it reports.
CREATE TABLE events (
    id              TEXT PRIMARY KEY,
    client_id       TEXT NOT NULL,
    transaction_id  TEXT NOT NULL,
    type            TEXT NOT NULL,
    url             TEXT NOT NULL,
    payload         TEXT NOT NULL,
    created_at      BIGINT NOT NULL,
    status          TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at BIGINT NOT NULL,
    lease_owner     TEXT NOT NULL DEFAULT '',
    lease_until     BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX events_transaction ON events (transaction_id, created_at);
CREATE INDEX events_due ON events (next_attempt_at) WHERE status = 'pending';

-- +goose Down
DROP TABLE events;
DROP TABLE entries;
DROP TABLE postings;
DROP TABLE transactions;
DROP TABLE accounts;
DROP TABLE bootstrap;
DROP TABLE clients;
