-- +goose Up
-- Split payments (docs/marketplace.md): the entries of a
-- charge's splits, or of a recurrence's, which its cycle charges copy.
-- owner_id is the charge's or the recurrence's id (both UUID v4, never
-- equal); idx the entry's place in the request, the order shares are
-- computed in. Exactly one of percent (hundredths of a percent: 10.00 % is
-- 1000) and amount (centavos) is set. credited is what the receiver got
-- when the charge was paid (NULL until then) and split_id the receiver's
-- split transaction (NULL for a share of 0).
CREATE TABLE splits (
    owner_id     TEXT NOT NULL,
    idx          INTEGER NOT NULL CHECK (idx >= 0 AND idx < 10),
    receiver_id  TEXT NOT NULL REFERENCES clients (id),
    percent      BIGINT CHECK (percent IS NULL OR (percent > 0 AND percent <= 10000)),
    amount       BIGINT CHECK (amount IS NULL OR amount > 0),
    credited     BIGINT CHECK (credited IS NULL OR credited >= 0),
    split_id     TEXT,
    PRIMARY KEY (owner_id, idx),
    CHECK ((percent IS NULL) <> (amount IS NULL))
);

-- +goose Down
DROP TABLE splits;
