#!/usr/bin/env bash
# Usage: scripts/bench/profile.sh [WORKDIR]
#
# Where the CPU goes, per operation, at C=32 (BENCHMARKS.md, "What binds"):
# for the payout and the charge shapes, first pgbench alone, then `pixgate
# bench` through `pixgate serve`, each run for 25 s with a 10 s window in the
# middle measured by scripts/bench/cpu.sh (CPU seconds of the load
# generator, of pixgate serve and of PostgreSQL). With PERF=1 it also
# records `perf record -g` of pixgate serve in that window
# (WORKDIR/perf-SHAPE.data; read with `perf report -i … --no-children`).
# After each pgbench shape it runs it again for 10 s with -D auth=1 (the
# client read pixgate makes for every request prepended; tps only).
#
# Environment: C (default 32), CLIENTS (default 64), RATE_LIMIT (60000).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
C=${C:-32}
CLIENTS=${CLIENTS:-64}
RATE_LIMIT=${RATE_LIMIT:-60000}
# shellcheck source=common.sh
. "$root/scripts/bench/common.sh"
work=$(work_dir "${1:-}" pixprof)
cpu=$root/scripts/bench/cpu.sh

setup_postgres
psql -q -v ON_ERROR_STOP=1 -v clients="$CLIENTS" -f "$root/scripts/bench/seed.sql" "$pg"

for shape in payout charge; do
	pgbench -n -M prepared -j 2 -c "$C" -T 25 -D clients="$CLIENTS" -D auth=0 -f "$root/scripts/bench/pgbench-$shape.sql" "$pg" \
		>"$work/pgbench-$shape.txt" 2>&1 &
	load=$!
	sleep 8
	echo "pgbench $shape -c $C:" >&2
	bash "$cpu" "$work/pg" "$load" sleep 10
	wait "$load"
	grep '^tps' "$work/pgbench-$shape.txt" >&2
	echo "pgbench $shape with the client read pixgate adds (-D auth=1), -c $C -T 10:" >&2
	pgbench -n -M prepared -j 2 -c "$C" -T 10 -D clients="$CLIENTS" -D auth=1 -f "$root/scripts/bench/pgbench-$shape.sql" "$pg" 2>&1 |
		grep '^tps' >&2
done

psql -q -v ON_ERROR_STOP=1 -f "$root/scripts/bench/reset.sql" "$pg"
sync # as in run.sh: let the pgbench phase's WAL reach the disk first
sleep 20
start_serve "$pg" pg
for shape in payout charge; do
	GOMAXPROCS=$BENCH_PROCS "$pixgate_bench" --pixgate "$pixgate" --target "$url" --database-url "$pg" --create-clients "$CLIENTS" \
		--mix "$shape=1" --concurrency "$C" --duration 25s --payout-fail-percent 0 --payout-reverse-percent 0 \
		--settle-timeout 600s >"$work/bench-$shape.txt" 2>"$work/bench-$shape.err" &
	load=$!
	sleep 8 # creating clients and funding them come first
	echo "pixgate-bench $shape -c $C:" >&2
	if [[ ${PERF:-0} == 1 ]]; then
		bash "$cpu" "$work/pg" "$serve_pid,$load" perf record -q -g -p "$serve_pid" -o "$work/perf-$shape.data" -- sleep 10
	else
		bash "$cpu" "$work/pg" "$serve_pid,$load" sleep 10
	fi
	wait "$load" || true
	grep -E "^ *$shape " "$work/bench-$shape.txt" >&2
done
echo "results in $work" >&2
