-- +goose Up
-- The columns version 13 added to postings take the statistics target of
-- its other columns (version 9).
ALTER TABLE postings ALTER COLUMN available_delta SET STATISTICS 10;
ALTER TABLE postings ALTER COLUMN available_fee SET STATISTICS 10;
ALTER TABLE postings ALTER COLUMN available_balance SET STATISTICS 10;
ALTER TABLE postings ALTER COLUMN available_seq SET STATISTICS 10;

-- +goose Down
ALTER TABLE postings ALTER COLUMN available_delta SET STATISTICS -1;
ALTER TABLE postings ALTER COLUMN available_fee SET STATISTICS -1;
ALTER TABLE postings ALTER COLUMN available_balance SET STATISTICS -1;
ALTER TABLE postings ALTER COLUMN available_seq SET STATISTICS -1;
