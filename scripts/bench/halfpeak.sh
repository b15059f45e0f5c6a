#!/usr/bin/env bash
# Usage: scripts/bench/halfpeak.sh [WORKDIR]
#
# The half-peak p99 on its own, in a few minutes instead of run.sh's ten: a
# private PostgreSQL (the settings of scripts/bench/pg-settings.sh, plus
# PG_EXTRA), one `pixgate serve`, then with pixgate-bench (64 new clients
# each): payouts at C=64 and charges at C=64 (closed loop, to load the
# database as run.sh does before its half-peak rows), then charges at
# CHARGE_RATE/s and payouts at PAYOUT_RATE/s (open loop, latency from each
# request's scheduled time). Prints each run's p50/p99 and how many WAL
# segments the cluster had before it, and the kernel's dirty page cache
# limits (see kernel_writeback in common.sh: with Linux's defaults a
# write-back burst every ~30 s stalls every commit; set
# vm.dirty_background_bytes=8388608 as root before measuring).
#
# PREWAL=1 first writes ~1 GB of WAL and checkpoints twice, so the cluster
# starts with segments to reuse, as a cluster that has been running has;
# without it every segment the load needs is created while it runs.
#
# Environment: T (seconds per run, default 15), CHARGE_RATE (default 4000)
# and PAYOUT_RATE (default 2200: about half of run.sh's C=64 peaks in
# BENCHMARKS.md), RATE_LIMIT (default 60000, as run.sh), PREWAL, PG_EXTRA
# (more server settings, e.g. "-c autovacuum=off"). Needs go, jq, psql and
# PostgreSQL's server binaries.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
T=${T:-15}
CHARGE_RATE=${CHARGE_RATE:-4000}
PAYOUT_RATE=${PAYOUT_RATE:-2200}
RATE_LIMIT=${RATE_LIMIT:-60000}
# shellcheck source=common.sh
. "$root/scripts/bench/common.sh"
work=$(work_dir "${1:-}" pixhalf)

echo "halfpeak.sh: $(kernel_writeback)" >&2
setup_postgres
if [[ -n ${PREWAL:-} ]]; then
	psql -X -q -v ON_ERROR_STOP=1 \
		-c "CREATE TABLE walfill AS SELECT g, repeat('x', 500) AS s FROM generate_series(1, 2000000) g" \
		-c "DROP TABLE walfill" -c CHECKPOINT -c CHECKPOINT "$pg"
fi
start_serve "$pg" pg

run() {
	local name=$1 op=$2
	shift 2
	local wal
	wal=$(wal_segments)
	GOMAXPROCS=$BENCH_PROCS "$pixgate_bench" --pixgate "$pixgate" --target "$url" --database-url "$pg" --create-clients 64 --duration "${T}s" \
		--payout-fail-percent 0 --payout-reverse-percent 0 --settle-timeout 300s --json "$@" \
		>"$work/$name.json" 2>"$work/$name.err" || true
	jq -r --arg op "$op" --arg name "$name" --arg wal "$wal" '.operations[] | select(.op == $op) |
		"\($name): \(.ok_rps | floor) ok/s, p50 \(.p50_ms) ms, p99 \(.p99_ms) ms (WAL segments before: \($wal))"' "$work/$name.json"
}
run payout-c64 payout --mix payout=1 --concurrency 64
run charge-c64 charge --mix charge=1 --concurrency 64
run charge-half charge --mix charge=1 --rate "$CHARGE_RATE"
run payout-half payout --mix payout=1 --rate "$PAYOUT_RATE"
