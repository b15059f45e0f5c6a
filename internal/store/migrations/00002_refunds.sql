-- +goose Up
-- Refunds (devoluções) of paid charges. Each holds its amount from the
-- merchant's available balance until it settles.
CREATE TABLE refunds (
    id               TEXT PRIMARY KEY,
    client_id        TEXT NOT NULL REFERENCES clients (id),
    transaction_id   TEXT NOT NULL REFERENCES transactions (id),
    idempotency_key  TEXT,
    request_hash     TEXT NOT NULL,
    status           TEXT NOT NULL CHECK (status IN ('PENDING', 'COMPLETED', 'FAILED')),
    amount           BIGINT NOT NULL CHECK (amount > 0),
    reason           TEXT NOT NULL DEFAULT '',
    created_at       BIGINT NOT NULL,
    settled_at       BIGINT,
    settle_at        BIGINT
);
CREATE UNIQUE INDEX refunds_client_idem ON refunds (client_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX refunds_transaction ON refunds (transaction_id, created_at);
CREATE INDEX refunds_due_settle ON refunds (settle_at) WHERE settle_at IS NOT NULL;

-- +goose Down
DROP TABLE refunds;
