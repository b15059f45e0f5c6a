#!/usr/bin/env bash
# Usage: scripts/bench/outside-half.sh RATE [OP] [WORKDIR]
#
# Latency at half of the peak that scripts/bench/outside.sh measured: one
# private PostgreSQL (the settings of pg-settings.sh), `pixgate serve` as
# outside.sh runs it (sandbox, 2 s payout delay), then RUNS (default 3)
# open-loop runs of pixgate-bench at RATE OP/s (payout by default, or
# charge), each with a 5 s warm-up and T (default 15) measured seconds,
# its 16 new clients funded by one paid charge, webhooks to the receiver
# outside.sh uses (scripts/bench/receiver: the load generator, on one
# processor, only sends); latency counts from each request's scheduled
# time. Prints each
# run's rate, p50 and p99 and the median p99.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
if (($# < 1)); then
	echo "usage: $0 RATE [payout|charge] [WORKDIR]" >&2
	exit 2
fi
rate=$1
op=${2:-payout}
T=${T:-15}
RUNS=${RUNS:-3}
RATE_LIMIT=100000000
# shellcheck source=common.sh
. "$root/scripts/bench/common.sh"
work=$(work_dir "${3:-}" pixhalf)
if [[ -n ${PIXGATE:-} ]]; then
	pixgate=$(realpath "$PIXGATE")
else
	(cd "$root" && go build -o "$work/pixgate" ./cmd/pixgate)
	pixgate=$work/pixgate
fi
build_bench
start_postgres
start_receiver
SERVE_ENV="PIXGATE_ENV=sandbox PIXGATE_SANDBOX_PAYOUT_DELAY=${PAYOUT_DELAY:-2s} PIXGATE_WEBHOOK_ALLOW_PRIVATE=true" start_serve "$pg" half
: >"$work/p99.txt"
for run in $(seq "$RUNS"); do
	GOMAXPROCS=$BENCH_PROCS "$pixgate_bench" --pixgate "$pixgate" --target "$url" --database-url "$pg" --create-clients 16 \
		--mix "$op=1" --rate "$rate" --warmup 5s --duration "${T}s" --payout-fail-percent 0 --payout-reverse-percent 0 \
		--webhook-url "$hook" --settle-timeout 300s --json >"$work/run-$run.json" 2>"$work/run-$run.err" || true
	jq -r --arg op "$op" --arg run "$run" '.operations[] | select(.op == $op) |
		"run \($run): \(.ok_rps | floor) \($op)s/s, p50 \(.p50_ms) ms, p99 \(.p99_ms) ms"' "$work/run-$run.json"
	jq -r --arg op "$op" '.operations[] | select(.op == $op) | .p99_ms' "$work/run-$run.json" >>"$work/p99.txt"
done
echo "median p99: $(sort -n "$work/p99.txt" | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}') ms (work directory $work)"
