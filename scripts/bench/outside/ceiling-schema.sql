-- The ceiling database of scripts/bench/outside.sh: the minimal payout
-- schema of the throughput method — 1,000 funded accounts; transactions
-- with a text id and an (account, created_at) index; ledger entries with a
-- tx_id index; an outbox with a partial index on undelivered rows.
CREATE TABLE accounts (
    id         BIGINT PRIMARY KEY,
    balance    BIGINT NOT NULL,
    reserved   BIGINT NOT NULL DEFAULT 0,
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE TABLE transactions (
    id         TEXT PRIMARY KEY,
    account_id BIGINT NOT NULL,
    kind       TEXT NOT NULL,
    amount     BIGINT NOT NULL,
    status     TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX transactions_account ON transactions (account_id, created_at);
CREATE TABLE entries (
    id         BIGSERIAL PRIMARY KEY,
    tx_id      TEXT NOT NULL,
    account_id BIGINT NOT NULL,
    amount     BIGINT NOT NULL
);
CREATE INDEX entries_tx ON entries (tx_id);
CREATE TABLE outbox (
    id           BIGSERIAL PRIMARY KEY,
    tx_id        TEXT NOT NULL,
    payload      JSONB NOT NULL,
    delivered_at TIMESTAMPTZ
);
CREATE INDEX outbox_undelivered ON outbox (id) WHERE delivered_at IS NULL;
INSERT INTO accounts (id, balance) SELECT i, 1000000000000 FROM generate_series(1, 1000) i;
