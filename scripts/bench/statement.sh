#!/usr/bin/env bash
# Usage: scripts/bench/statement.sh [sqlite|postgres ...]
#
# The statement's memory does not grow with its length (BENCHMARKS.md,
# "Statement: 10^6 movements"). On each database (default: both), a fresh
# database holds one client per size in SIZES (10^4, 10^5 and 10^6
# movements) of the available balance in October 2026 (three paid charges
# of R$ 10.00 with a R$ 0.25 fee, then a payout reservation of R$ 5.00 + R$
# 0.10 tax, over and over: two statement lines each), written with SQL as
# store.Tx.PostAll writes them: postings with their available_* columns,
# their entries, the accounts' balance, seq, moved_at and moved_before (the
# ledger checks hold; the postings' transaction ids have no transaction
# rows, which the statement does not read). Then `pixgate serve` on it,
# and each client's statement of the month fetched with curl to a file,
# JSON then CSV, smallest first, a new server for each client: one line
# per fetch with curl's time to first byte and total time, the bytes, the
# server's VmHWM (peak RSS since start) after the fetch, the highest VmRSS
# and go_memstats_heap_inuse_bytes sampled (every SAMPLE s) during it, and
# the server's CPU time for it. Each body is then checked: 2 lines per
# movement, the last one's balance the expected closing balance. Last,
# with SLOW set (default 4M), the largest CSV once more on a new server at
# that many bytes per second (curl --limit-rate): longer than the server's
# 30 s WriteTimeout, which the statement's stream pushes ahead as it
# writes.
#
# PostgreSQL: a private cluster (common.sh), or, with PG_URL set to a
# server's URL (postgres://…?host=…), a new database on that server,
# dropped at the end. SQLite: a file in WORK.
#
# Environment: SIZES ("10000 100000 1000000"), SLOW (4M; empty: no slow
# run), SAMPLE (0.1), PG_URL, PIXGATE (a pixgate binary; default: built
# from this tree), PG_EXTRA, WORK (the working directory; default a new
# temp dir, deleted at the end unless KEEP=1).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
dbs=("$@")
((${#dbs[@]})) || dbs=(sqlite postgres)
read -r -a sizes <<<"${SIZES:-10000 100000 1000000}"
SLOW=${SLOW-4M}
SAMPLE=${SAMPLE:-0.1}
RATE_LIMIT=1000000
# shellcheck source=common.sh
. "$root/scripts/bench/common.sh"
work=$(work_dir "${WORK:-}" pixstmt)
chmod 755 "$work"
pg_db=
stmt_cleanup() {
	cleanup
	if [[ -n $pg_db ]]; then
		psql -q "$PG_URL" -c "DROP DATABASE IF EXISTS $pg_db" >/dev/null 2>&1 || true
	fi
	if [[ -z ${WORK:-} && ${KEEP:-0} != 1 ]]; then
		rm -rf "$work"
	fi
}
trap stmt_cleanup EXIT
if [[ -n ${PIXGATE:-} ]]; then
	pixgate=$(realpath "$PIXGATE")
else
	(cd "$root" && go build -o "$work/pixgate" ./cmd/pixgate)
	pixgate=$work/pixgate
fi

# October 2026 (UTC), in Unix milliseconds.
from=2026-10-01T00:00:00Z
to=2026-11-01T00:00:00Z
base=1790812800000
month_ms=$((31 * 24 * 3600 * 1000))

# seed_sql DIALECT CLIENT N IDTAG: the SQL that gives CLIENT N movements
# spread over the month, movement i at base + i*step. Movement i is a
# payout reservation when i % 4 = 0, else a paid charge; its balance after
# is 975 × charges − 510 × payouts so far. Ids are UUID-shaped (36
# characters, as the real ones), IDTAG telling the clients apart.
seed_sql() {
	local dialect=$1 c=$2 n=$3 tag=$4 pad
	local step=$((month_ms / (n + 1)))
	if [[ $dialect == postgres ]]; then
		pad="lpad(i::text, 12, '0')"
	else
		pad="printf('%012d', i)"
	fi
	local pid="'00000000-0000-7000-a${tag}-' || $pad" tid="'00000000-0000-4000-8${tag}-' || $pad"
	local charges=$((n - n / 4)) payouts=$((n / 4))
	cat <<-SQL
		BEGIN;
		CREATE TEMP TABLE n (i BIGINT PRIMARY KEY);
		WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < $n) INSERT INTO n SELECT i FROM s;
		INSERT INTO postings (id, client_id, transaction_id, kind, created_at,
			available_delta, available_fee, available_balance, available_seq)
		SELECT $pid, '$c', $tid,
			CASE WHEN i % 4 = 0 THEN 'cashout.reserved' ELSE 'cashin.paid' END,
			$base + i * $step,
			CASE WHEN i % 4 = 0 THEN -510 ELSE 975 END,
			CASE WHEN i % 4 = 0 THEN -10 ELSE -25 END,
			(i - i / 4) * 975 - (i / 4) * 510,
			i
		FROM n;
		INSERT INTO entries (posting_id, seq, account_id, amount)
		SELECT $pid, 0, CASE WHEN i % 4 = 0 THEN '$c:available' ELSE '$c:settlement' END,
			CASE WHEN i % 4 = 0 THEN -510 ELSE -1000 END FROM n
		UNION ALL
		SELECT $pid, 1, CASE WHEN i % 4 = 0 THEN '$c:pending' ELSE '$c:available' END,
			CASE WHEN i % 4 = 0 THEN 510 ELSE 975 END FROM n
		UNION ALL
		SELECT $pid, 2, '$c:fees', 25 FROM n WHERE i % 4 <> 0;
		UPDATE accounts SET balance = $((975 * charges - 510 * payouts)), seq = $n,
			moved_at = $((base + n * step)), moved_before = $((base + (n - 1) * step)) WHERE id = '$c:available';
		UPDATE accounts SET balance = $((510 * payouts)) WHERE id = '$c:pending';
		UPDATE accounts SET balance = $((-1000 * charges)) WHERE id = '$c:settlement';
		UPDATE accounts SET balance = $((25 * charges)) WHERE id = '$c:fees';
		DROP TABLE n;
		COMMIT;
	SQL
}

# check_sql: CheckLedger's invariants, one row of three counts that must
# all be 0 (accounts' sum, unbalanced postings, accounts that disagree
# with their entries or are negative).
check_sql="SELECT (SELECT SUM(balance) FROM accounts),
	(SELECT COUNT(*) FROM (SELECT posting_id FROM entries GROUP BY posting_id HAVING SUM(amount) <> 0) u),
	(SELECT COUNT(*) FROM accounts a LEFT JOIN (SELECT account_id, SUM(amount) AS s FROM entries GROUP BY account_id) e
		ON e.account_id = a.id WHERE a.balance <> COALESCE(e.s, 0) OR (a.kind IN ('available', 'pending') AND a.balance < 0));"

# run_sql DIALECT DB: runs stdin's SQL on DB.
run_sql() {
	if [[ $1 == postgres ]]; then
		psql -q -X -v ON_ERROR_STOP=1 -At "$2"
	else
		sqlite3 -bail "$2"
	fi
}

# measure NAME CLIENT SECRET FORMAT [RATE]: fetches the month's statement
# (at most RATE bytes/s) and prints its line (see the header).
measure() {
	local name=$1 id=$2 secret=$3 format=$4 rate=()
	[[ -n ${5:-} ]] && rate=(--limit-rate "$5")
	local status=/proc/$serve_pid/status samples=$work/samples
	: >"$samples"
	sample() {
		local rss heap
		rss=$(awk '/^VmRSS/ {print $2}' "$status")
		heap=$(curl -s "$url/metrics" | awk '/^go_memstats_heap_inuse_bytes / {printf "%d", $2}')
		echo "$rss ${heap:-0}" >>"$samples"
	}
	(while :; do
		sample
		sleep "$SAMPLE"
	done) &
	local sampler=$!
	until [[ -s $samples ]]; do sleep 0.01; done
	local cpu0 cpu1 out code ttfb total bytes hwm
	cpu0=$(awk '{print $14 + $15}' "/proc/$serve_pid/stat")
	out=$(curl -sS "${rate[@]}" -o "$work/body" -H "stpi: $id" -H "stps: $secret" \
		-w '%{http_code} %{time_starttransfer} %{time_total} %{size_download}' \
		"$url/api/v1/wallet/statement?from=$from&to=$to&format=$format")
	cpu1=$(awk '{print $14 + $15}' "/proc/$serve_pid/stat")
	kill "$sampler"
	wait "$sampler" 2>/dev/null || true
	sample
	hwm=$(awk '/^VmHWM/ {print $2}' "$status")
	read -r code ttfb total bytes <<<"$out"
	if [[ $code != 200 ]]; then
		echo "$(basename "$0"): $name $format: HTTP $code" >&2
		exit 1
	fi
	awk -v n="$name" -v f="$format" -v ttfb="$ttfb" -v total="$total" -v bytes="$bytes" -v hwm="$hwm" \
		-v cpu=$(((cpu1 - cpu0) * 1000 / $(getconf CLK_TCK))) '
		{ if ($1 > rss) rss = $1; if ($2 > heap) heap = $2 }
		END { printf "%-7s %-4s  ttfb %7.3f s  total %7.2f s  %6.1f MB  VmHWM %4.0f MiB  max VmRSS %4.0f MiB  max heap_inuse %5.1f MiB  server CPU %6.2f s\n",
			n, f, ttfb, total, bytes / 1e6, hwm / 1024, rss / 1024, heap / 1048576, cpu / 1000 }' "$samples"
}

# check_body N FORMAT: the body just fetched holds 2N lines, the last with
# the balance after N movements (else the script stops). The JSON body has
# one movement per line (the first on the line of the head), so both are
# read as a stream.
check_body() {
	local n=$1 want=$((975 * ($1 - $1 / 4) - 510 * ($1 / 4))) got lines
	if [[ $2 == csv ]]; then
		lines=$(($(wc -l <"$work/body") - 1))
		got=$(tail -n 1 "$work/body" | tr -d '\r' | awk -F, '{print $NF}')
	else
		lines=$(grep -c '"transaction_id"' "$work/body")
		got=$(head -c 1000 "$work/body" | grep -o '"closing_balance_cents":-*[0-9]*' | cut -d: -f2)
		local last
		last=$(tail -n 2 "$work/body" | grep -o '"balance_cents":-*[0-9]*' | tail -n 1 | cut -d: -f2)
		[[ $last == "$got" ]] || got="$got (last line's balance: $last)"
	fi
	rm -f "$work/body"
	if [[ $lines != $((2 * n)) || $got != "$want" ]]; then
		echo "$(basename "$0"): statement of $n movements ($2): $lines lines ending at $got, want $((2 * n)) ending at $want" >&2
		exit 1
	fi
}

for dialect in "${dbs[@]}"; do
	case $dialect in
	postgres)
		if [[ -n ${PG_URL:-} ]]; then
			pg_db=pixstmt_$$
			psql -q "$PG_URL" -c "CREATE DATABASE $pg_db" >/dev/null
			dburl=$(sed -E "s#^(postgres(ql)?://[^/]*/)[^?]*#\1$pg_db#" <<<"$PG_URL")
			"$pixgate" migrate --database-url "$dburl" 2>"$work/migrate.log"
		else
			start_postgres
			dburl=$pg
		fi
		sqldb=$dburl
		;;
	sqlite)
		dburl=$work/statement.db
		rm -f "$dburl"*
		"$pixgate" migrate --database-url "$dburl" 2>"$work/migrate.log"
		sqldb=$dburl
		;;
	*)
		echo "usage: $0 [sqlite|postgres ...]" >&2
		exit 2
		;;
	esac
	creds=()
	start=$(date +%s.%N)
	for i in "${!sizes[@]}"; do
		cred=$("$pixgate" clients create --database-url "$dburl" --name "statement-${sizes[i]}" 2>>"$work/migrate.log")
		creds+=("$cred")
		seed_sql "$dialect" "$(jq -r .client_id <<<"$cred")" "${sizes[i]}" "$(printf %03d "$i")" | run_sql "$dialect" "$sqldb"
	done
	if [[ $dialect == postgres ]]; then run_sql "$dialect" "$sqldb" <<<"ANALYZE;"; fi
	echo "$dialect: seeded ${sizes[*]} movements in $(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.0f", e - s }') s;" \
		"ledger check (sum, unbalanced, bad accounts): $(run_sql "$dialect" "$sqldb" <<<"$check_sql" | tr '|\n' '  ')"
	# A fresh server per size: each VmHWM is that size's own peak.
	for i in "${!sizes[@]}"; do
		start_serve "$dburl" "$dialect-${sizes[i]}"
		echo "$dialect, ${sizes[i]} movements: pixgate serve idle: VmRSS $(awk '/^VmRSS/ {printf "%.0f", $2 / 1024}' "/proc/$serve_pid/status") MiB," \
			"VmHWM $(awk '/^VmHWM/ {printf "%.0f", $2 / 1024}' "/proc/$serve_pid/status") MiB"
		for format in json csv; do
			measure "${sizes[i]}" "$(jq -r .client_id <<<"${creds[i]}")" "$(jq -r .client_secret <<<"${creds[i]}")" "$format"
			check_body "${sizes[i]}" "$format"
		done
		stop_serve
	done
	if [[ -n $SLOW ]]; then
		last=$((${#sizes[@]} - 1))
		start_serve "$dburl" "$dialect-slow"
		echo "$dialect, ${sizes[last]} movements at $SLOW/s:"
		measure "${sizes[last]}" "$(jq -r .client_id <<<"${creds[last]}")" "$(jq -r .client_secret <<<"${creds[last]}")" csv "$SLOW"
		check_body "${sizes[last]}" csv
		stop_serve
	fi
	if [[ $dialect == postgres ]]; then
		if [[ -n $pg_db ]]; then
			psql -q "$PG_URL" -c "DROP DATABASE $pg_db" >/dev/null
			pg_db=
		else
			stop_postgres
		fi
	fi
done
