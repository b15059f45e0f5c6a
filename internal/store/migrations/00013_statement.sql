-- +goose Up
-- The statement (GET /api/v1/wallet/statement) reads the movements of a
-- client's available balance in the order they were applied. Each posting
-- that moves the available account records that movement: its amount, the
-- part of it that is a fee, the balance after it and its sequence number
-- on the account. The account row counts its movements (seq) and holds
-- the time of the latest (moved_at; moved_before is its value before the
-- last update, which the postings of that update read), so a posting's
-- created_at never goes back in the account's order and a window on time
-- is a contiguous run of sequence numbers: consecutive statements chain
-- exactly.
ALTER TABLE accounts ADD COLUMN seq BIGINT NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN moved_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN moved_before BIGINT NOT NULL DEFAULT 0;
ALTER TABLE postings ADD COLUMN available_delta BIGINT;
ALTER TABLE postings ADD COLUMN available_fee BIGINT;
ALTER TABLE postings ADD COLUMN available_balance BIGINT;
ALTER TABLE postings ADD COLUMN available_seq BIGINT;

-- Postings written before this version: their movements in (created_at,
-- id) order, the fee parts taken from the fee entries and the payouts' tax.
UPDATE postings SET available_delta = m.delta, available_fee = m.fee, available_balance = m.balance, available_seq = m.seq
FROM (
    SELECT p.id, e.amount AS delta,
        CASE p.kind
            WHEN 'cashin.paid' THEN -COALESCE((SELECT f.amount FROM entries f WHERE f.posting_id = p.id AND f.account_id = p.client_id || ':fees'), 0)
            WHEN 'cashout.reserved' THEN -COALESCE((SELECT t.tax FROM transactions t WHERE t.id = p.transaction_id), 0)
            WHEN 'cashout.failed' THEN COALESCE((SELECT t.tax FROM transactions t WHERE t.id = p.transaction_id), 0)
            ELSE 0
        END AS fee,
        SUM(e.amount) OVER (PARTITION BY p.client_id ORDER BY p.created_at, p.id) AS balance,
        ROW_NUMBER() OVER (PARTITION BY p.client_id ORDER BY p.created_at, p.id) AS seq
    FROM postings p JOIN entries e ON e.posting_id = p.id AND e.account_id = p.client_id || ':available'
) m
WHERE postings.id = m.id;

UPDATE accounts SET seq = m.n, moved_at = m.at
FROM (SELECT client_id, COUNT(*) AS n, MAX(created_at) AS at FROM postings WHERE available_seq IS NOT NULL GROUP BY client_id) m
WHERE accounts.client_id = m.client_id AND accounts.kind = 'available';

-- Only postings that moved an available balance: one index entry per
-- payout (its reservation), none for its settlement.
CREATE INDEX postings_statement ON postings (client_id, created_at, available_seq) WHERE available_seq IS NOT NULL;

-- +goose Down
DROP INDEX postings_statement;
ALTER TABLE postings DROP COLUMN available_seq;
ALTER TABLE postings DROP COLUMN available_balance;
ALTER TABLE postings DROP COLUMN available_fee;
ALTER TABLE postings DROP COLUMN available_delta;
ALTER TABLE accounts DROP COLUMN moved_before;
ALTER TABLE accounts DROP COLUMN moved_at;
ALTER TABLE accounts DROP COLUMN seq;
