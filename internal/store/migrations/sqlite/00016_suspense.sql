-- +goose NO TRANSACTION
-- +goose Up
-- The house's accounts, which belong to no client: settlement mirrors the
-- PIX network for money no client received, and suspense holds it until it
-- goes back to the payer (unmatched_receipts). Suspense never goes below
-- zero, like a client's available and pending. SQLite cannot change a
-- CHECK constraint in place, so the table is rebuilt as SQLite's manual
-- says: foreign keys off (entries reference the table), the rebuild in one
-- transaction, foreign keys on again. The writer is a single connection,
-- so every statement here runs on the same one.
PRAGMA foreign_keys = OFF;
BEGIN IMMEDIATE;
CREATE TABLE accounts_new (
    id            TEXT PRIMARY KEY,
    client_id     TEXT REFERENCES clients (id),
    kind          TEXT NOT NULL CHECK (kind IN ('available', 'pending', 'settlement', 'fees', 'suspense')),
    balance       BIGINT NOT NULL DEFAULT 0,
    seq           BIGINT NOT NULL DEFAULT 0,
    moved_at      BIGINT NOT NULL DEFAULT 0,
    moved_before  BIGINT NOT NULL DEFAULT 0,
    CHECK (kind NOT IN ('available', 'pending', 'suspense') OR balance >= 0),
    CHECK (client_id IS NOT NULL OR id LIKE 'house:%')
);
INSERT INTO accounts_new (id, client_id, kind, balance, seq, moved_at, moved_before)
    SELECT id, client_id, kind, balance, seq, moved_at, moved_before FROM accounts;
DROP TABLE accounts;
ALTER TABLE accounts_new RENAME TO accounts;
CREATE UNIQUE INDEX accounts_client_kind ON accounts (client_id, kind);
INSERT INTO accounts (id, client_id, kind, balance) VALUES ('house:settlement', NULL, 'settlement', 0), ('house:suspense', NULL, 'suspense', 0)
    ON CONFLICT DO NOTHING;
COMMIT;
PRAGMA foreign_keys = ON;

-- +goose Down
-- The house's accounts may hold postings: they stay, and so does the kind.
SELECT 1;
