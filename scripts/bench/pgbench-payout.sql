-- pgbench script: one payout's database transaction, statement for statement
-- as pixgate runs it (gateway.CreatePayout → store.Tx.CreateTransaction, then
-- store.Tx.Post of ledger.PayoutReserved: the two account updates in
-- account-id order — the accounts' CHECK refuses an overdraft — then the
-- posting and its two entries in one multi-row insert), plus one outbox
-- (events) insert so that the shape is the issue's "balance update,
-- transaction insert, two ledger entries, outbox insert". pixgate itself
-- writes a payout's event at settlement, not at creation.
--
-- As written, each statement is a round trip between BEGIN and COMMIT: the
-- plain ceiling. pixgate sends the same statements as one pipelined batch
-- with no BEGIN/COMMIT (one implicit transaction, one round trip), and the
-- payouts that arrive together share it (store.DB.CreatePayout: one
-- multi-row insert of their rows, each client's accounts moved once, one
-- commit); scripts/bench/run.sh derives the pipelined variant, one payout
-- per transaction, from this file by replacing BEGIN/COMMIT with
-- \startpipeline/\endpipeline.
--
-- -D auth=1 prepends the one read pixgate makes outside the transaction for
-- every request (the client, to authenticate it); -D auth=0 leaves it out.
--
-- Needs: -D clients=N -D auth=0|1, and clients pgb_1 … pgb_N with funded
-- accounts (scripts/bench/run.sh seeds them). Run with -M prepared: pgx,
-- pixgate's driver, caches prepared statements the same way.
\set c random(1, :clients)
\set amount random(1, 1000)
\set tax 50
\set total :amount + :tax
\set debit -(:amount + :tax)
\set r random(1, 9223372036854775807)
\if :auth
SELECT id, name, environment, secret_hash, webhook_secret, prev_webhook_secret, prev_webhook_until,
	cashin_fee_bp, cashin_fee_fixed, payout_fee_bp, payout_fee_fixed, status, created_at
	FROM clients WHERE id = 'pgb_' || :c::text;
\endif
BEGIN;
INSERT INTO transactions (id, client_id, type, external_id, idempotency_key, request_hash, status, amount, tax,
	refunded_amount, refund_pending, created_at, confirmed_at, expires_at, settle_at, txid, qrcode, callback_url, details)
VALUES (md5('t' || :r::text)::uuid::text, 'pgb_' || :c::text, 'cashout', 'pgb-p-' || :r, NULL, md5('h' || :r::text) || md5('i' || :r::text),
	'PENDING', :amount::bigint, :tax::bigint, 0, 0, (extract(epoch FROM clock_timestamp()) * 1000)::bigint, NULL, NULL,
	(extract(epoch FROM clock_timestamp()) * 1000)::bigint + 31536000000, NULL, '', 'http://127.0.0.1:9/webhook',
	'{"description":"bench payout pgb","creditParty":{"name":"Beneficiario Teste","keyType":"EMAIL","key":"bench@example.com"}}');
UPDATE accounts SET balance = balance + :debit::bigint WHERE id = 'pgb_' || :c::text || E'\x3aavailable';
UPDATE accounts SET balance = balance + :total::bigint WHERE id = 'pgb_' || :c::text || E'\x3apending';
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
