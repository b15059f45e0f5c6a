-- +goose Up
-- Who actually paid a charge, as the PSP reported it: the payer's name and
-- document, the document kept only in its masked form (***.456.789-**,
-- **.345.678/0001-**) since the API never shows more (see ../postgres/
-- under the same version). NULL until paid, or when the PSP does not say.
ALTER TABLE transactions ADD COLUMN payer_name TEXT;
ALTER TABLE transactions ADD COLUMN payer_document TEXT;

-- +goose Down
ALTER TABLE transactions DROP COLUMN payer_document;
ALTER TABLE transactions DROP COLUMN payer_name;
