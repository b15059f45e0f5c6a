-- +goose Up
-- Who actually paid a charge, as the PSP reported it: the payer's name and
-- document, the document kept only in its masked form (***.456.789-**,
-- **.345.678/0001-**) since the API never shows more. NULL until paid, or
-- when the PSP does not say. No index holds them, so writing them with the
-- credit stays a HOT update.
ALTER TABLE transactions ADD COLUMN payer_name TEXT;
ALTER TABLE transactions ADD COLUMN payer_document TEXT;
-- The new columns take the statistics target of the others (version 9).
ALTER TABLE transactions ALTER COLUMN payer_name SET STATISTICS 10;
ALTER TABLE transactions ALTER COLUMN payer_document SET STATISTICS 10;

-- A client's refunds, newest first (GET /api/v1/gateway/refunds), paged by
-- (created_at, id) as the history is.
CREATE INDEX refunds_client_created ON refunds (client_id, created_at, id);

-- +goose Down
DROP INDEX refunds_client_created;
ALTER TABLE transactions DROP COLUMN payer_document;
ALTER TABLE transactions DROP COLUMN payer_name;
