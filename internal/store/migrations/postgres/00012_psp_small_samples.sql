-- +goose Up
-- The columns version 11 added to transactions take the statistics target
-- of its other columns (version 9).
ALTER TABLE transactions ALTER COLUMN end_to_end_id SET STATISTICS 10;
ALTER TABLE transactions ALTER COLUMN send_state SET STATISTICS 10;
ALTER TABLE transactions ALTER COLUMN send_attempts SET STATISTICS 10;

-- +goose Down
ALTER TABLE transactions ALTER COLUMN end_to_end_id SET STATISTICS -1;
ALTER TABLE transactions ALTER COLUMN send_state SET STATISTICS -1;
ALTER TABLE transactions ALTER COLUMN send_attempts SET STATISTICS -1;
