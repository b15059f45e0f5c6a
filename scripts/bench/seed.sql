-- Seeds the pgbench clients pgb_1 … pgb_N (psql -v clients=N) with funded
-- accounts, for scripts/bench/pgbench-*.sql. Used by run.sh and profile.sh.
INSERT INTO clients (id, name, environment, secret_hash, webhook_secret, status, created_at)
	SELECT 'pgb_' || i, 'pgbench ' || i, 'sandbox', md5(i::text), 'whsec_pgbench', 'active', 0
	FROM generate_series(1, :clients) i;
INSERT INTO accounts (id, client_id, kind, balance)
	SELECT 'pgb_' || i || ':' || k, 'pgb_' || i, k,
		CASE k WHEN 'available' THEN 100000000000000 WHEN 'settlement' THEN -100000000000000 ELSE 0 END
	FROM generate_series(1, :clients) i, unnest(ARRAY['available', 'pending', 'settlement', 'fees']) k;
