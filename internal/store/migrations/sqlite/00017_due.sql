-- +goose Up
-- Charges with a due date (docs/due-dates.md). due holds the terms as the
-- JSON of the request's due object, NULL for an immediate charge;
-- expected_amount, once such a charge is paid, what its terms made due on
-- the day it was paid, which the payment received is compared with.
ALTER TABLE transactions ADD COLUMN due TEXT;
ALTER TABLE transactions ADD COLUMN expected_amount BIGINT;
-- What is being created at the PSP: a cob, or a cobv (a charge with a due
-- date), which is read and removed by its own paths.
ALTER TABLE cob_intents ADD COLUMN kind TEXT NOT NULL DEFAULT 'cob' CHECK (kind IN ('cob', 'cobv'));

-- +goose Down
ALTER TABLE cob_intents DROP COLUMN kind;
ALTER TABLE transactions DROP COLUMN expected_amount;
ALTER TABLE transactions DROP COLUMN due;
