-- pgbench script: pgbench-charge.sql preceded by the two reads pixgate makes
-- for every charge outside its transaction — the client by id
-- (authentication, store.Q.Client) and the transaction by external_id
-- (idempotency, store.Q.TransactionByExternalID; it finds nothing) — to
-- measure what they cost the database. Same variables as pgbench-charge.sql.
\set c random(1, :clients)
\set amount random(100, 50099)
\set r random(1, 9223372036854775807)
SELECT id, name, environment, secret_hash, webhook_secret, prev_webhook_secret, prev_webhook_until,
	cashin_fee_bp, cashin_fee_fixed, payout_fee_bp, payout_fee_fixed, status, created_at
	FROM clients WHERE id = 'pgb_' || :c::text;
SELECT id, client_id, type, external_id, idempotency_key, request_hash, status, amount, tax, refunded_amount,
	refund_pending, created_at, confirmed_at, expires_at, settle_at, txid, qrcode, callback_url, details
	FROM transactions WHERE client_id = 'pgb_' || :c::text AND external_id = 'pgb-c-' || :r::text;
BEGIN;
INSERT INTO transactions (id, client_id, type, external_id, idempotency_key, request_hash, status, amount, tax,
	refunded_amount, refund_pending, created_at, confirmed_at, expires_at, settle_at, txid, qrcode, callback_url, details)
VALUES (md5('t' || :r::text)::uuid::text, 'pgb_' || :c::text, 'cashin', 'pgb-c-' || :r, NULL, md5('h' || :r::text) || md5('i' || :r::text),
	'PENDING', :amount::bigint, 99, 0, 0, (extract(epoch FROM clock_timestamp()) * 1000)::bigint, NULL,
	(extract(epoch FROM clock_timestamp()) * 1000)::bigint + 86400000, NULL, upper(substr(md5('x' || :r::text), 1, 25)),
	'00020101021226370014br.gov.bcb.pix0115pix@pixgate.dev520400005303986540610000.005802BR5915PIXGATE SANDBOX6009SAO PAULO62290525'
		|| upper(substr(md5('x' || :r::text), 1, 25)) || '6304A1B2',
	'http://127.0.0.1:9/webhook',
	'{"payer":{"name":"Maria Souza","document":"52998224725","phoneNumber":"11987654321","email":"maria@example.com","address":{"street":"Rua das Flores","number":"100","neighborhood":"Centro","city":"São Paulo","state":"SP","zipCode":"01001000"}},"payerQuestion":"Pedido pgb","products":[{"name":"Produto de teste","quantity":"1","price": 100.00}]}')
ON CONFLICT DO NOTHING;
COMMIT;
