-- +goose Up
-- The shares of a refund of a split charge (docs/marketplace.md): what
-- each receiver gives back, held from its available balance into its
-- pending until the refund settles. The charge's owner's share is the
-- refund's amount less these, and has no row.
CREATE TABLE refund_shares (
    refund_id  TEXT NOT NULL REFERENCES refunds (id),
    client_id  TEXT NOT NULL REFERENCES clients (id),
    amount     BIGINT NOT NULL CHECK (amount > 0),
    PRIMARY KEY (refund_id, client_id)
);

-- +goose Down
DROP TABLE refund_shares;
