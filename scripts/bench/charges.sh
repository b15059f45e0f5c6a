#!/usr/bin/env bash
# Usage: scripts/bench/charges.sh BIN_A BIN_B [ROUNDS]
#
# Charges at 16 clients against pgbench's charge transaction, for two
# pixgate builds (e.g. before and after a change to the charge path), in
# ROUNDS (default 3) rounds. Each round: a fresh PostgreSQL cluster
# (common.sh), pgbench-charge.sql at -c C for T seconds, then for A and for
# B on the emptied database: `BIN serve`, 5 s of charges unrecorded, then
# `pixgate-bench --mix charge=1 --concurrency C` for T seconds. Prints one
# line per round and build: pgbench tx/s, pixgate charges/s and their
# ratio; report the median ratio of the rounds (docs/decisions.md).
#
# Environment: C (16), T (15), CLIENTS (64), BENCH_PROCS (see common.sh).
set -euo pipefail

if (($# < 2)); then
	echo "usage: $0 BIN_A BIN_B [ROUNDS]" >&2
	exit 2
fi
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
a=$(realpath "$1")
b=$(realpath "$2")
rounds=${3:-3}
C=${C:-16}
T=${T:-15}
CLIENTS=${CLIENTS:-64}
RATE_LIMIT=1000000
# shellcheck source=common.sh
. "$root/scripts/bench/common.sh"
work=$(work_dir "" pixcharges)
chmod 755 "$work"
build_bench

for round in $(seq "$rounds"); do
	pixgate=$a
	start_postgres
	psql -q -v ON_ERROR_STOP=1 -v clients="$CLIENTS" -f "$root/scripts/bench/seed.sql" "$pg"
	pgbench -n -M prepared -j 2 -c "$C" -T "$T" -D clients="$CLIENTS" -D auth=0 \
		-f "$root/scripts/bench/pgbench-charge.sql" "$pg" >"$work/pgbench-$round.txt" 2>&1
	tps=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$work/pgbench-$round.txt")
	for name in A B; do
		pixgate=$a
		[[ $name == B ]] && pixgate=$b
		psql -q -v ON_ERROR_STOP=1 -f "$root/scripts/bench/reset.sql" "$pg"
		sync
		start_serve "$pg" "$name-$round"
		GOMAXPROCS=$BENCH_PROCS "$pixgate_bench" --pixgate "$pixgate" --target "$url" --database-url "$pg" \
			--create-clients "$CLIENTS" --mix charge=1 --concurrency "$C" --duration 5s >/dev/null 2>&1 || true
		GOMAXPROCS=$BENCH_PROCS "$pixgate_bench" --pixgate "$pixgate" --target "$url" --database-url "$pg" \
			--create-clients "$CLIENTS" --mix charge=1 --concurrency "$C" --duration "${T}s" --json \
			>"$work/bench-$name-$round.json" 2>"$work/bench-$name-$round.err" || true
		stop_serve
		rate=$(jq -r '.operations[] | select(.op == "charge") | .ok_rps' "$work/bench-$name-$round.json")
		ok=$(jq -r '.check.ok' "$work/bench-$name-$round.json")
		echo "round $round $name: pgbench $tps tx/s, pixgate $rate charges/s, ratio $(jq -n "$rate / $tps * 100 | round / 100"), check $ok"
	done
	stop_postgres
done
