-- +goose Up
-- The house's accounts, which belong to no client: settlement mirrors the
-- PIX network for money no client received, and suspense holds it until it
-- goes back to the payer (unmatched_receipts). Suspense never goes below
-- zero, like a client's available and pending.
ALTER TABLE accounts ALTER COLUMN client_id DROP NOT NULL;
ALTER TABLE accounts DROP CONSTRAINT IF EXISTS accounts_kind_check;
ALTER TABLE accounts ADD CONSTRAINT accounts_kind_check CHECK (kind IN ('available', 'pending', 'settlement', 'fees', 'suspense'));
ALTER TABLE accounts DROP CONSTRAINT IF EXISTS accounts_suspense_check;
ALTER TABLE accounts ADD CONSTRAINT accounts_suspense_check CHECK (kind <> 'suspense' OR balance >= 0);
ALTER TABLE accounts DROP CONSTRAINT IF EXISTS accounts_owner_check;
ALTER TABLE accounts ADD CONSTRAINT accounts_owner_check CHECK (client_id IS NOT NULL OR id LIKE 'house:%');
INSERT INTO accounts (id, client_id, kind, balance) VALUES ('house:settlement', NULL, 'settlement', 0), ('house:suspense', NULL, 'suspense', 0)
    ON CONFLICT DO NOTHING;
-- The new column of transactions takes the statistics target of its others
-- (version 9).
ALTER TABLE transactions ALTER COLUMN paid_amount SET STATISTICS 10;

-- +goose Down
-- The house's accounts may hold postings: they stay, and so does the kind.
SELECT 1;
