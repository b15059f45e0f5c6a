-- +goose Up
-- What MED returns took of a charge (docs/med.md), apart from
-- refunded_amount: a MED return may take the whole Pix, more than the
-- charge asked when it was paid with more, which refunds never may.
ALTER TABLE transactions ADD COLUMN med_returned BIGINT NOT NULL DEFAULT 0 CHECK (med_returned >= 0);

-- +goose Down
ALTER TABLE transactions DROP COLUMN med_returned;
