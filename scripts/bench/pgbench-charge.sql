-- pgbench script: one charge's database transaction as pixgate runs it
-- (gateway.CreateCharge → store.DB.InsertTransaction): one autocommitted
-- INSERT of the transaction row with its BR Code text, txid (unique index),
-- payer details and callback URL, no BEGIN or COMMIT. (pixgate also groups
-- the charges that arrive together into one multi-row INSERT; this script
-- writes one row per statement.)
--
-- -D auth=1 prepends the one read pixgate makes outside the transaction for
-- every request (the client, to authenticate it); -D auth=0 leaves it out.
--
-- Needs: -D clients=N -D auth=0|1 and clients pgb_1 … pgb_N
-- (scripts/bench/run.sh seeds them). Run with -M prepared, as pgx does.
\set c random(1, :clients)
\set amount random(100, 50099)
\set r random(1, 9223372036854775807)
\if :auth
SELECT id, name, environment, secret_hash, webhook_secret, prev_webhook_secret, prev_webhook_until,
	cashin_fee_bp, cashin_fee_fixed, payout_fee_bp, payout_fee_fixed, status, created_at
	FROM clients WHERE id = 'pgb_' || :c::text;
\endif
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
