-- +goose Up
-- The accounts MED opens for a client at its first dispute: its blocked account (money held by its open disputes, never
-- negative) and debt account (what it owes after a MED return it could not
-- cover: a receivable, never positive).
ALTER TABLE accounts DROP CONSTRAINT IF EXISTS accounts_kind_check;
ALTER TABLE accounts ADD CONSTRAINT accounts_kind_check CHECK (kind IN ('available', 'pending', 'settlement', 'fees', 'suspense', 'blocked', 'debt'));
ALTER TABLE accounts DROP CONSTRAINT IF EXISTS accounts_blocked_check;
ALTER TABLE accounts ADD CONSTRAINT accounts_blocked_check CHECK (kind <> 'blocked' OR balance >= 0);
ALTER TABLE accounts DROP CONSTRAINT IF EXISTS accounts_debt_check;
ALTER TABLE accounts ADD CONSTRAINT accounts_debt_check CHECK (kind <> 'debt' OR balance <= 0);

-- +goose Down
SELECT 1;
