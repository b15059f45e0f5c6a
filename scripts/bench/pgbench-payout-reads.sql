-- pgbench script: pgbench-payout.sql preceded by the two reads pixgate makes
-- for every payout outside its transaction — the client by id
-- (authentication, store.Q.Client) and the transaction by external_id
-- (idempotency, store.Q.TransactionByExternalID; it finds nothing) — to
-- measure what they cost the database. Same variables as pgbench-payout.sql.
\set c random(1, :clients)
\set amount random(1, 1000)
\set tax 50
\set total :amount + :tax
\set debit -(:amount + :tax)
\set r random(1, 9223372036854775807)
SELECT id, name, environment, secret_hash, webhook_secret, prev_webhook_secret, prev_webhook_until,
	cashin_fee_bp, cashin_fee_fixed, payout_fee_bp, payout_fee_fixed, status, created_at
	FROM clients WHERE id = 'pgb_' || :c::text;
SELECT id, client_id, type, external_id, idempotency_key, request_hash, status, amount, tax, refunded_amount,
	refund_pending, created_at, confirmed_at, expires_at, settle_at, txid, qrcode, callback_url, details
	FROM transactions WHERE client_id = 'pgb_' || :c::text AND external_id = 'pgb-p-' || :r::text;
BEGIN;
INSERT INTO transactions (id, client_id, type, external_id, idempotency_key, request_hash, status, amount, tax,
	refunded_amount, refund_pending, created_at, confirmed_at, expires_at, settle_at, txid, qrcode, callback_url, details)
VALUES (md5('t' || :r::text)::uuid::text, 'pgb_' || :c::text, 'cashout', 'pgb-p-' || :r, NULL, md5('h' || :r::text) || md5('i' || :r::text),
	'PENDING', :amount::bigint, :tax::bigint, 0, 0, (extract(epoch FROM clock_timestamp()) * 1000)::bigint, NULL, NULL,
	(extract(epoch FROM clock_timestamp()) * 1000)::bigint + 31536000000, NULL, '', 'http://127.0.0.1:9/webhook',
	'{"description":"bench payout pgb","creditParty":{"name":"Beneficiario Teste","keyType":"EMAIL","key":"bench@example.com"}}')
ON CONFLICT DO NOTHING;
UPDATE accounts SET balance = balance + :debit::bigint
	WHERE id = 'pgb_' || :c::text || E'\x3aavailable' AND (kind NOT IN ('available', 'pending') OR balance + :debit::bigint >= 0);
UPDATE accounts SET balance = balance + :total::bigint
	WHERE id = 'pgb_' || :c::text || E'\x3apending' AND (kind NOT IN ('available', 'pending') OR balance + :total::bigint >= 0);
INSERT INTO postings (id, client_id, transaction_id, kind, created_at)
	VALUES (md5('p' || :r::text)::uuid::text, 'pgb_' || :c::text, md5('t' || :r::text)::uuid::text, 'cashout.reserved',
	(extract(epoch FROM clock_timestamp()) * 1000)::bigint);
INSERT INTO entries (posting_id, seq, account_id, amount) VALUES
	(md5('p' || :r::text)::uuid::text, 0, 'pgb_' || :c::text || E'\x3aavailable', :debit::bigint),
	(md5('p' || :r::text)::uuid::text, 1, 'pgb_' || :c::text || E'\x3apending', :total::bigint);
INSERT INTO events (id, client_id, transaction_id, type, url, payload, created_at, next_attempt_at)
	VALUES ('evt_' || md5('e' || :r::text), 'pgb_' || :c::text, md5('t' || :r::text)::uuid::text, 'pix.cashout.paid', 'http://127.0.0.1:9/webhook',
	'{"id":"evt_0123456789abcdef0123456789abcdef","event":"pix.cashout.paid","statusTransaction":"PAID","value": 5.5,"payment_id":"00000000-0000-4000-8000-000000000000","external_id":"pgb","type":"cashout","tax": 0.5,"occurred_at":"2026-01-01T00\u003a00\u003a00.000Z","transaction_id":"00000000-0000-4000-8000-000000000000"}',
	(extract(epoch FROM clock_timestamp()) * 1000)::bigint, (extract(epoch FROM clock_timestamp()) * 1000)::bigint + 31536000000);
COMMIT;
