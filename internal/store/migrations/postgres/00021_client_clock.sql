-- +goose Up
-- A sandbox client's clock (docs/api.md, "Sandbox clock"): how far, in
-- milliseconds, the client's time runs ahead of the real time. It only
-- grows; 0 for every production client. A constant default adds the
-- column without rewriting the table.
ALTER TABLE clients ADD COLUMN clock_offset_ms BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE clients DROP COLUMN clock_offset_ms;
