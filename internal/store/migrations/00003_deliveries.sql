-- +goose Up
-- Every webhook delivery attempt, for the deliveries endpoint and operators.
CREATE TABLE delivery_attempts (
    id           TEXT PRIMARY KEY,
    event_id     TEXT NOT NULL REFERENCES events (id),
    at           BIGINT NOT NULL,
    status_code  INTEGER,
    latency_ms   BIGINT NOT NULL,
    error        TEXT,
    response     TEXT NOT NULL DEFAULT ''
);
CREATE INDEX delivery_attempts_event ON delivery_attempts (event_id, at);
CREATE INDEX events_client_status ON events (client_id, status, created_at);

-- +goose Down
DROP INDEX events_client_status;
DROP TABLE delivery_attempts;
