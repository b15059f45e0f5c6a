#!/usr/bin/env bash
# Usage: scripts/bench/halfpeak.sh [WORKDIR]
#
# The half-peak p99 on its own, in a few minutes instead of run.sh's ten: a
# private PostgreSQL (the settings of scripts/bench/pg-settings.sh, plus
# PG_EXTRA), one `pixgate serve`, then with `pixgate bench` (64 new clients
# each): payouts at C=64 and charges at C=64 (closed loop, to load the
# database as run.sh does before its half-peak rows), then charges at
# CHARGE_RATE/s and payouts at PAYOUT_RATE/s (open loop, latency from each
# request's scheduled time). Prints each run's p50/p99 and how many WAL
# segments the cluster had before it.
#
# PREWAL=1 first writes ~1 GB of WAL and checkpoints twice, so the cluster
# starts with segments to reuse, as a cluster that has been running has;
# without it every segment the load needs is created while it runs.
#
# Environment: T (seconds per run, default 15), CHARGE_RATE (default 3200),
# PAYOUT_RATE (default 1200), PREWAL, PG_EXTRA (more server settings, e.g.
# "-c autovacuum=off"). Needs go, jq, psql and PostgreSQL's server binaries.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
T=${T:-15}
CHARGE_RATE=${CHARGE_RATE:-3200}
PAYOUT_RATE=${PAYOUT_RATE:-1200}
work=${1:-$(mktemp -d "${TMPDIR:-/tmp}/pixhalf.XXXXXX")}
mkdir -p "$work"
work=$(cd "$work" && pwd -P)

serve_pid=
cleanup() {
	if [[ -n $serve_pid ]]; then
		kill "$serve_pid" 2>/dev/null || true
		wait "$serve_pid" 2>/dev/null || true
	fi
	bash "$root/scripts/stop-postgres.sh" "$work/pg" 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

(cd "$root" && go build -o "$work/pixgate" ./cmd/pixgate)
pixgate=$work/pixgate
# shellcheck source=pg-settings.sh
. "$root/scripts/bench/pg-settings.sh"
PIXGATE_PG_SETTINGS="$PIXGATE_PG_SETTINGS ${PG_EXTRA:-}"
pg=$(bash "$root/scripts/start-postgres.sh" "$work/pg")
"$pixgate" migrate --database-url "$pg" 2>"$work/migrate.log"
segments() { find "$work/pg/data/pg_wal" -maxdepth 1 -type f -name '0*' | wc -l; }
if [[ -n ${PREWAL:-} ]]; then
	psql -X -q -v ON_ERROR_STOP=1 \
		-c "CREATE TABLE walfill AS SELECT g, repeat('x', 500) AS s FROM generate_series(1, 2000000) g" \
		-c "DROP TABLE walfill" -c CHECKPOINT -c CHECKPOINT "$pg"
fi

"$pixgate" serve --addr 127.0.0.1:0 --database-url "$pg" --rate-limit 1000000 >"$work/serve.out" 2>"$work/serve.log" &
serve_pid=$!
addr=
for _ in $(seq 200); do
	addr=$(jq -r 'select(.msg == "listening") | .addr' "$work/serve.log" 2>/dev/null | head -n 1)
	[[ -n $addr ]] && break
	sleep 0.1
done
[[ -n $addr ]] || { echo "halfpeak.sh: pixgate serve did not start" >&2; exit 1; }

run() {
	local name=$1 op=$2
	shift 2
	local wal
	wal=$(segments)
	"$pixgate" bench --target "http://$addr" --database-url "$pg" --create-clients 64 --duration "${T}s" \
		--payout-fail-percent 0 --payout-reverse-percent 0 --settle-timeout 300s --json "$@" \
		>"$work/$name.json" 2>"$work/$name.err" || true
	jq -r --arg op "$op" --arg name "$name" --arg wal "$wal" '.operations[] | select(.op == $op) |
		"\($name): \(.ok_rps | floor) ok/s, p50 \(.p50_ms) ms, p99 \(.p99_ms) ms (WAL segments before: \($wal))"' "$work/$name.json"
}
run payout-c64 payout --mix payout=1 --concurrency 64
run charge-c64 charge --mix charge=1 --concurrency 64
run charge-half charge --mix charge=1 --rate "$CHARGE_RATE"
run payout-half payout --mix payout=1 --rate "$PAYOUT_RATE"
