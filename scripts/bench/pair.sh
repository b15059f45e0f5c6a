#!/usr/bin/env bash
# Usage: scripts/bench/pair.sh BIN_A BIN_B [PAIRS]
#
# Compares two pixgate builds on payouts (or OP) at 16 clients, in PAIRS (default 3)
# pairs run back to back so that the host's drift hits both alike. Each run:
# a fresh PostgreSQL cluster (common.sh's start_postgres, migrated by BIN),
# `BIN serve`, and the pixgate-bench of this tree (--pixgate BIN) with
# --mix "$OP=1" --concurrency C --duration DUR and 64 new clients;
# scripts/bench/cpu.sh measures MEAS seconds from WARM seconds in. Prints
# per run the payouts/s, the CPU per payout (µs) of the server, the load
# generator and PostgreSQL, and the events claimed rather than handed over
# (updates beyond one per event). Build the two with e.g. `git stash; go
# build -o /tmp/a ./cmd/pixgate; git stash pop; go build -o /tmp/b
# ./cmd/pixgate`.
#
# Environment: OP (payout; or charge), C (16), DUR (30s), WARM (9), MEAS (18), SERVE_ENV (extra
# environment of serve, e.g. PIXGATE_SANDBOX_PAYOUT_DELAY=60s), PG_EXTRA.
set -euo pipefail

if (($# < 2)); then
	echo "usage: $0 BIN_A BIN_B [PAIRS]" >&2
	exit 2
fi
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
a=$(realpath "$1")
b=$(realpath "$2")
pairs=${3:-3}
C=${C:-16}
DUR=${DUR:-30s}
WARM=${WARM:-9}
MEAS=${MEAS:-18}
OP=${OP:-payout}
RATE_LIMIT=1000000
# shellcheck source=common.sh
. "$root/scripts/bench/common.sh"
work=$(work_dir "" pixpair)
chmod 755 "$work"
build_bench

# one BIN NAME: one run, one line.
one() {
	local name=$2 lp claimed rate
	pixgate=$1
	start_postgres
	start_serve "$pg" "$name"
	GOMAXPROCS=$BENCH_PROCS "$pixgate_bench" --pixgate "$pixgate" --target "$url" --database-url "$pg" --create-clients 64 --mix "$OP=1" \
		--concurrency "$C" --duration "$DUR" --payout-fail-percent 0 --payout-reverse-percent 0 \
		--json >"$work/bench-$name.json" 2>"$work/bench-$name.err" &
	lp=$!
	sleep "$WARM"
	bash "$root/scripts/bench/cpu.sh" "$work/pg" "$serve_pid,$lp" sleep "$MEAS" 2>"$work/cpu-$name.txt"
	wait "$lp" || true
	claimed=$(psql -X -A -t -c "SELECT n_tup_upd - n_tup_ins FROM pg_stat_user_tables WHERE relname = 'events'" "$pg")
	stop_serve
	stop_postgres
	rate=$(jq -r --arg op "$OP" '.operations[] | select(.op == $op) | .ok_rps' "$work/bench-$name.json")
	python3 - "$name" "$rate" "$claimed" "$work/cpu-$name.txt" "$OP" <<'PY'
import re, sys
name, rate, claimed, path, op = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
t = open(path).read()
procs = [float(x) for x in re.findall(r'\] ([0-9.]+) s', t)]
pg = float(re.search(r'postgres ([0-9.]+) s', t).group(1))
n = rate * float(re.search(r'wall ([0-9.]+) s', t).group(1))
us = lambda s: s / n * 1e6
print(f"{name}: {rate:,.0f} {op}s/s | CPU per {op}: server {us(procs[0]):.0f} µs, "
      f"load generator {us(procs[1]):.0f}, PostgreSQL {us(pg):.0f}, total {us(sum(procs) + pg):.0f} | "
      f"events claimed {claimed}")
PY
}

for i in $(seq "$pairs"); do
	one "$a" "A$i"
	one "$b" "B$i"
done
