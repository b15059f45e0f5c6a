-- +goose Up
-- A PostgreSQL storage parameter (see ../postgres/ under the same version):
-- SQLite has no equivalent, so the version is recorded and nothing changes.
SELECT 1;

-- +goose Down
SELECT 1;
