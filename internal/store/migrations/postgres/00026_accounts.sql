-- +goose Up
-- Sub-accounts and the transfers between a parent and its sub-accounts
-- (docs/marketplace.md). Every client gets an account_id, the UUID v4 that
-- splits and transfers name (gen_random_uuid, built in since PostgreSQL 13,
-- fills the existing rows one by one and is the default of new ones); a
-- sub-account names its parent. Transactions' type also takes split and
-- transfer, and accounts a clearing kind.
ALTER TABLE clients ADD COLUMN account_id TEXT NOT NULL DEFAULT gen_random_uuid()::text;
ALTER TABLE clients ADD COLUMN parent_id TEXT REFERENCES clients (id);
ALTER TABLE clients ADD COLUMN document TEXT NOT NULL DEFAULT '';
ALTER TABLE clients ADD COLUMN external_id TEXT;
ALTER TABLE clients ADD COLUMN postback_url TEXT NOT NULL DEFAULT '';
ALTER TABLE clients ADD COLUMN request_hash TEXT NOT NULL DEFAULT '';
CREATE UNIQUE INDEX clients_account ON clients (account_id);
CREATE UNIQUE INDEX clients_parent_external ON clients (parent_id, external_id) WHERE external_id IS NOT NULL;
CREATE INDEX clients_children ON clients (parent_id, created_at, id) WHERE parent_id IS NOT NULL;

ALTER TABLE transactions DROP CONSTRAINT IF EXISTS transactions_type_check;
ALTER TABLE transactions ADD CONSTRAINT transactions_type_check CHECK (type IN ('cashin', 'cashout', 'split', 'transfer'));
ALTER TABLE transactions ADD COLUMN source_payment_id TEXT;
ALTER TABLE transactions ADD COLUMN counterparty_account_id TEXT;
ALTER TABLE transactions ALTER COLUMN source_payment_id SET STATISTICS 10;
ALTER TABLE transactions ALTER COLUMN counterparty_account_id SET STATISTICS 10;

ALTER TABLE accounts DROP CONSTRAINT IF EXISTS accounts_kind_check;
ALTER TABLE accounts ADD CONSTRAINT accounts_kind_check CHECK (kind IN ('available', 'pending', 'settlement', 'fees', 'suspense', 'blocked', 'debt', 'clearing'));

-- +goose Down
ALTER TABLE accounts DROP CONSTRAINT IF EXISTS accounts_kind_check;
ALTER TABLE accounts ADD CONSTRAINT accounts_kind_check CHECK (kind IN ('available', 'pending', 'settlement', 'fees', 'suspense', 'blocked', 'debt'));
ALTER TABLE transactions DROP COLUMN counterparty_account_id;
ALTER TABLE transactions DROP COLUMN source_payment_id;
ALTER TABLE transactions DROP CONSTRAINT IF EXISTS transactions_type_check;
ALTER TABLE transactions ADD CONSTRAINT transactions_type_check CHECK (type IN ('cashin', 'cashout'));
DROP INDEX IF EXISTS clients_children;
DROP INDEX IF EXISTS clients_parent_external;
DROP INDEX IF EXISTS clients_account;
ALTER TABLE clients DROP COLUMN request_hash;
ALTER TABLE clients DROP COLUMN postback_url;
ALTER TABLE clients DROP COLUMN external_id;
ALTER TABLE clients DROP COLUMN document;
ALTER TABLE clients DROP COLUMN parent_id;
ALTER TABLE clients DROP COLUMN account_id;
