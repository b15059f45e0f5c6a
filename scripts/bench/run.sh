#!/usr/bin/env bash
# Usage: scripts/bench/run.sh [WORKDIR]
#
# The ceilings side by side (BENCHMARKS.md): what PostgreSQL alone sustains
# for pixgate's payout and charge transactions (pgbench with
# scripts/bench/pgbench-{payout,charge}.sql), next to what `pixgate serve`
# sustains on that same database through its HTTP API (pixgate-bench), and
# pixgate-bench against a SQLite server.
#
#  1. starts a private PostgreSQL (scripts/start-postgres.sh), runs
#     `pixgate migrate`, seeds CLIENTS clients pgb_1…pgb_N with funded accounts;
#  2. pgbench -M prepared -j 2 -c C -T T for both shapes, C in CONC, and
#     the payout shape pipelined as pixgate sends it;
#  3. empties the data tables, starts `pixgate serve` on that database with
#     --rate-limit RATE_LIMIT and runs `pixgate-bench --mix payout=1` and
#     `--mix charge=1` at each C, then each mix in open loop at half its best
#     throughput (the p99 target), after a CHECKPOINT (so that the cluster has
#     WAL segments to reuse) and, with no pause, 10 s of that load unrecorded
#     (--warmup: the full-page writes after a checkpoint, settlement and
#     webhooks getting going); every bench run creates CLIENTS new clients
#     (--create-clients) and waits, in its check, until all its payouts settled;
#  4. `pixgate serve` on SQLite: both mixes at each C in SQLITE_CONC and the
#     default mix at the first;
#  5. prints one table. Raw outputs (pgbench logs, bench JSON, server logs)
#     stay in WORKDIR (default: a new temp dir).
#
# Environment: T (seconds per measurement, default 20), CONC (default
# "16 32 64"), SQLITE_CONC (default "16 64"), CLIENTS (default 64),
# RATE_LIMIT (default 60000 per client per 60 s; the in-memory limiter keeps
# one 24-byte slot per allowed request per client, so do not use 10^9),
# PG_SETTINGS (PostgreSQL server settings, default those of
# docs/production.md: see scripts/bench/pg-settings.sh), PG_EXTRA (more
# settings on top, e.g. "-c autovacuum=off"), BENCH_PROCS (GOMAXPROCS of
# the load generator, default 1: see common.sh).
# Needs go, jq, pgbench and PostgreSQL's server binaries
# (scripts/install-deps.sh installs PostgreSQL).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
T=${T:-20}
CONC=${CONC:-16 32 64}
SQLITE_CONC=${SQLITE_CONC:-16 64}
CLIENTS=${CLIENTS:-64}
RATE_LIMIT=${RATE_LIMIT:-60000}
# shellcheck source=common.sh
. "$root/scripts/bench/common.sh"
work=$(work_dir "${1:-}" pixbench)

for tool in go jq pgbench psql; do
	if ! command -v "$tool" >/dev/null; then
		echo "run.sh: $tool not found" >&2
		exit 1
	fi
done

# log MESSAGE: to stderr, with the time and the 1-minute load average (the
# figures are only as good as the machine is quiet).
log() { echo "[$(date +%H:%M:%S) load $(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo ?)] $*" >&2; }

log "building pixgate and pixgate-bench into $work and starting PostgreSQL in $work/pg ($(kernel_writeback))"
setup_postgres

log "seeding $CLIENTS pgbench clients"
psql -q -v ON_ERROR_STOP=1 -v clients="$CLIENTS" -f "$root/scripts/bench/seed.sql" "$pg"

# percentiles FILE...: p50 p95 p99 in ms of the latency column (µs) of pgbench -l logs.
percentiles() {
	{ cat "$@" 2>/dev/null || true; } | awk '{print $3}' | sort -n | awk '{a[NR]=$1} END {
		if (NR == 0) { print "0 0 0"; exit }
		split("0.50 0.95 0.99", q, " ")
		for (i = 1; i <= 3; i++) { k = int(NR * q[i] + 0.999999); if (k < 1) k = 1; printf "%.2f ", a[k] / 1000 }
		print ""
	}'
}

declare -A PGB_TPS PGB_LAT PIX_OK PIX_LAT PIX_CHECK PIX_WAL
# The pipelined payout shape: the same statements sent as pixgate sends
# them, one batch with no BEGIN/COMMIT (one implicit transaction).
sed -e 's/^BEGIN;$/\\startpipeline/' -e 's/^COMMIT;$/\\endpipeline/' "$root/scripts/bench/pgbench-payout.sql" \
	>"$work/pgbench-payout-pipelined.sql"
for shape in payout payout-pipelined charge; do
	script=$root/scripts/bench/pgbench-$shape.sql
	[[ -f $script ]] || script=$work/pgbench-$shape.sql
	for c in $CONC; do
		log "pgbench $shape -c $c -T $T"
		rm -f "$work/pgb-$shape-$c".*
		pgbench -n -M prepared -j 2 -c "$c" -T "$T" -D clients="$CLIENTS" -D auth=0 -l --log-prefix="$work/pgb-$shape-$c" \
			-f "$script" "$pg" >"$work/pgbench-$shape-$c.txt" 2>&1
		PGB_TPS[$shape/$c]=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$work/pgbench-$shape-$c.txt")
		PGB_LAT[$shape/$c]=$(percentiles "$work/pgb-$shape-$c".*)
		rm -f "$work/pgb-$shape-$c".*
	done
done

log "emptying the data tables for pixgate serve"
psql -q -v ON_ERROR_STOP=1 -f "$root/scripts/bench/reset.sql" "$pg"

# bench DBURL NAME ARGS...: runs pixgate-bench with CLIENTS new clients,
# keeps its JSON as WORK/NAME.json. The check waits for every payout to
# settle (up to 10 min), so the next run starts on an idle server.
bench() {
	local db=$1 name=$2
	shift 2
	local rc=0 segs
	segs=$(wal_segments)
	log "pixgate-bench $name ($segs WAL segments)"
	GOMAXPROCS=$BENCH_PROCS "$pixgate_bench" --pixgate "$pixgate" --target "$url" --database-url "$db" --create-clients "$CLIENTS" --duration "${T}s" \
		--settle-timeout 600s --json "$@" \
		>"$work/$name.json" 2>"$work/$name.err" || rc=$?
	if ((rc != 0)); then
		log "pixgate-bench $name: exit $rc (see $work/$name.err)"
	fi
	PIX_WAL[$name]="$segs → $(wal_segments)"
	PIX_CHECK[$name]=$(jq -r 'if .check.ok then "ok" else "FAILED(\(.check.mismatch_count))" end' "$work/$name.json" 2>/dev/null || echo "no report")
}

# warm_up ARGS...: 10 s of pixgate-bench on PostgreSQL with plain payouts,
# not recorded.
warm_up() {
	GOMAXPROCS=$BENCH_PROCS "$pixgate_bench" --pixgate "$pixgate" --target "$url" --database-url "$pg" --create-clients "$CLIENTS" --duration 10s \
		"${plain[@]}" --settle-timeout 600s "$@" >/dev/null 2>&1 || true
}

# op NAME OP FIELD: a figure of one operation of a bench report.
op() {
	local v
	v=$(jq -r --arg op "$2" ".operations[] | select(.op == \$op) | .$3" "$work/$1.json" 2>/dev/null || true)
	echo "${v:-0}"
}

# The ceiling runs send plain payouts (no sandbox keys that fail or are
# returned), the shape pgbench-payout.sql models.
plain=(--payout-fail-percent 0 --payout-reverse-percent 0)
start_serve "$pg" pg
# The pgbench phase leaves gigabytes of WAL and data pages for the kernel to
# write back; until it has, commits wait longer, and the first pixgate runs
# (payouts at C=16, latency-bound) measured at a quarter of a rerun. Flush,
# let the disk settle, then a short unrecorded run.
log "sync and settle after pgbench"
sync
sleep 20
log "pixgate-bench warm-up (not recorded)"
warm_up --concurrency 16 --mix payout=1,charge=1
for shape in payout charge; do
	best=0
	for c in $CONC; do
		bench "$pg" "pg-$shape-$c" --mix "$shape=1" --concurrency "$c" "${plain[@]}"
		ok=$(op "pg-$shape-$c" "$shape" ok_rps)
		PIX_OK[$shape/$c]=$ok
		PIX_LAT[$shape/$c]="$(op "pg-$shape-$c" "$shape" p50_ms) $(op "pg-$shape-$c" "$shape" p95_ms) $(op "pg-$shape-$c" "$shape" p99_ms)"
		best=$(jq -n --argjson a "$best" --argjson b "$ok" '[$a, $b] | max')
	done
	half=$(jq -n --argjson b "$best" '($b / 2) | floor')
	# A checkpoint first, as a running cluster has every few minutes: it
	# turns the WAL segments the closed-loop rows filled into segments to
	# reuse (up to min_wal_size). Without it, the half-peak row ran out of
	# them and created new ones, each stalling every commit for 50–100 ms
	# (run 18: 110 → 124 segments, charge p99 43.2 ms). Then 10 s of the
	# same load, not recorded (--warmup), and the measured 15 s straight
	# after it: after a checkpoint the first change to each page writes the
	# whole page to the WAL, and measured right after it that wave alone
	# took the charge p99 from 12 to 19 ms (halfpeak.sh) and to 35 ms in
	# run 19. (Until run 39 the warm-up was a run of its own, and the
	# measured one began after its clients were created and funded on an
	# idle server: its first seconds, when settlement and webhooks start,
	# were its worst.)
	log "checkpoint, then the half-peak row after 10 s of warm-up"
	psql -X -q -c CHECKPOINT "$pg"
	bench "$pg" "pg-$shape-half" --mix "$shape=1" --rate "$half" --warmup 10s "${plain[@]}"
	PIX_OK[$shape/half]=$half
	PIX_LAT[$shape/half]="$(op "pg-$shape-half" "$shape" p50_ms) $(op "pg-$shape-half" "$shape" p95_ms) $(op "pg-$shape-half" "$shape" p99_ms)"
	PIX_OK[$shape/half-got]=$(op "pg-$shape-half" "$shape" ok_rps)
done
stop_serve

lite=sqlite://$work/sqlite/pixgate.db
start_serve "$lite" sqlite
for shape in payout charge; do
	for c in $SQLITE_CONC; do
		bench "$lite" "sqlite-$shape-$c" --mix "$shape=1" --concurrency "$c" "${plain[@]}"
	done
done
first=${SQLITE_CONC%% *}
# The default mix, with 5 % failing and 5 % returned payouts.
bench "$lite" "sqlite-mix-$first" --concurrency "$first"
stop_serve

# ---- the table ----
# drain NAME: seconds after the load until no payout of the run was PENDING,
# then (after "/") until the server's outbox was empty, every webhook
# delivered to the run's own receiver (pixgate-bench waits for both, so the
# next run starts with nothing left over).
drain() { jq -r '.check | "\(.pending_drained_s // 0 | . * 10 | round / 10)/\(.webhooks_drained_s // 0 | . * 10 | round / 10)"' "$work/$1.json" 2>/dev/null || echo 0; }
ratio() { jq -n --argjson a "${1:-0}" --argjson b "${2:-0}" 'if $b > 0 then ($a / $b * 100 | round / 100) else 0 end'; }
echo
echo "PostgreSQL (pgbench = the transaction alone; pixgate = HTTP API through pixgate serve), $CLIENTS clients, ${T}s each"
printf '%-7s %5s | %9s %-22s | %9s %-22s | %5s | %7s %s\n' shape conc "pgb tps" "pgb p50/p95/p99 ms" "pix ok/s" "pix p50/p95/p99 ms" ratio "drain-s pay/hook" check
for shape in payout charge; do
	for c in $CONC; do
		read -r a b d <<<"${PGB_LAT[$shape/$c]}"
		read -r e f g <<<"${PIX_LAT[$shape/$c]}"
		printf '%-7s %5s | %9.0f %-22s | %9.0f %-22s | %5s | %7s %s\n' "$shape" "$c" "${PGB_TPS[$shape/$c]:-0}" "$a/$b/$d" \
			"${PIX_OK[$shape/$c]:-0}" "$e/$f/$g" "$(ratio "${PIX_OK[$shape/$c]}" "${PGB_TPS[$shape/$c]}")" \
			"$(drain "pg-$shape-$c")" "${PIX_CHECK[pg-$shape-$c]}"
	done
	read -r e f g <<<"${PIX_LAT[$shape/half]}"
	printf '%-7s %5s | %9s %-22s | %9.0f %-22s | %5s | %7s %s\n' "$shape" "half" "" "open loop at ${PIX_OK[$shape/half]}/s" \
		"${PIX_OK[$shape/half-got]:-0}" "$e/$f/$g" "" "$(drain "pg-$shape-half")" "${PIX_CHECK[pg-$shape-half]}"
done
echo "WAL segments before → after each half-peak row (more after = segments created while it ran):" \
	"payout ${PIX_WAL[pg-payout-half]}, charge ${PIX_WAL[pg-charge-half]}; $(kernel_writeback)"
echo
echo "pgbench, the payout statements pipelined as pixgate sends them (no BEGIN/COMMIT, one round trip); ratio = pixgate / this"
for c in $CONC; do
	read -r a b d <<<"${PGB_LAT[payout-pipelined/$c]}"
	printf '%-7s %5s | %9.0f %-22s | %5s\n' pipelined "$c" "${PGB_TPS[payout-pipelined/$c]:-0}" "$a/$b/$d" \
		"$(ratio "${PIX_OK[payout/$c]}" "${PGB_TPS[payout-pipelined/$c]}")"
done
echo
echo "SQLite (pixgate serve on one file), $CLIENTS clients, ${T}s each"
printf '%-7s %5s | %9s %-22s | %7s %s\n' mix conc "ok/s" "p50/p95/p99 ms" "drain-s pay/hook" check
for shape in payout charge; do
	for c in $SQLITE_CONC; do
		n=sqlite-$shape-$c
		printf '%-7s %5s | %9.0f %-22s | %7s %s\n' "$shape" "$c" "$(op "$n" "$shape" ok_rps)" \
			"$(op "$n" "$shape" p50_ms)/$(op "$n" "$shape" p95_ms)/$(op "$n" "$shape" p99_ms)" "$(drain "$n")" "${PIX_CHECK[$n]}"
	done
done
n=sqlite-mix-$first
printf '%-7s %5s | %9.0f %-22s | %7s %s\n' default "$first" "$(jq -r '.total.ok_rps // 0' "$work/$n.json" 2>/dev/null || echo 0)" \
	"$(jq -r '"\(.total.p50_ms)/\(.total.p95_ms)/\(.total.p99_ms)"' "$work/$n.json" 2>/dev/null || true)" "$(drain "$n")" "${PIX_CHECK[$n]}"
echo
echo "raw results: $work"
