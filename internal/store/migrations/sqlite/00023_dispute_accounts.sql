-- +goose NO TRANSACTION
-- +goose Up
-- The accounts MED opens for a client at its first dispute: its blocked account (money held by its open disputes, never
-- negative) and debt account (what it owes after a MED return it could not
-- cover: a receivable, never positive). SQLite cannot change a CHECK
-- constraint in place, so the table is rebuilt as in version 16.
PRAGMA foreign_keys = OFF;
BEGIN IMMEDIATE;
CREATE TABLE accounts_new (
    id            TEXT PRIMARY KEY,
    client_id     TEXT REFERENCES clients (id),
    kind          TEXT NOT NULL CHECK (kind IN ('available', 'pending', 'settlement', 'fees', 'suspense', 'blocked', 'debt')),
    balance       BIGINT NOT NULL DEFAULT 0,
    seq           BIGINT NOT NULL DEFAULT 0,
    moved_at      BIGINT NOT NULL DEFAULT 0,
    moved_before  BIGINT NOT NULL DEFAULT 0,
    CHECK (kind NOT IN ('available', 'pending', 'suspense', 'blocked') OR balance >= 0),
    CHECK (kind <> 'debt' OR balance <= 0),
    CHECK (client_id IS NOT NULL OR id LIKE 'house:%')
);
INSERT INTO accounts_new (id, client_id, kind, balance, seq, moved_at, moved_before)
    SELECT id, client_id, kind, balance, seq, moved_at, moved_before FROM accounts;
DROP TABLE accounts;
ALTER TABLE accounts_new RENAME TO accounts;
CREATE UNIQUE INDEX accounts_client_kind ON accounts (client_id, kind);
COMMIT;
PRAGMA foreign_keys = ON;

-- +goose Down
-- The accounts may hold postings: they stay, and so do the kinds.
SELECT 1;
