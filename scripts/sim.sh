#!/usr/bin/env bash
# Usage: scripts/sim.sh [OPS [KILLS [SEEDS...]]]
#
# A long simulation campaign (docs/simulation.md): for each seed (default:
# one random seed), one run on SQLite and one on PostgreSQL of OPS
# operations (default 10000) with KILLS SIGKILLs (default 100). PostgreSQL
# is PIXGATE_TEST_POSTGRES_URL's server, or a throwaway one this script
# starts. Each run's report goes to stdout; the script exits non-zero if
# any run failed, and a failed run prints the command that replays it.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$(pwd -P)
ops=${1:-10000}
kills=${2:-100}
shift $(($# > 2 ? 2 : $#))
seeds=("$@")
if ((${#seeds[@]} == 0)); then
	seeds=($((RANDOM * 32768 + RANDOM)))
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pixgate-sim-campaign.XXXXXX")
started_pg=
cleanup() {
	if [[ -n $started_pg ]]; then
		bash "$root/scripts/stop-postgres.sh" "$tmp/pg" >/dev/null 2>&1 || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

if [[ -z ${PIXGATE_TEST_POSTGRES_URL:-} ]]; then
	PIXGATE_TEST_POSTGRES_URL=$(bash "$root/scripts/start-postgres.sh" "$tmp/pg")
	export PIXGATE_TEST_POSTGRES_URL
	started_pg=1
fi

go build -o "$tmp/pixgate-sim" ./cmd/pixgate-sim
go build -o "$tmp/pixgate" ./cmd/pixgate
failed=0
for seed in "${seeds[@]}"; do
	for db in sqlite postgres; do
		if ! "$tmp/pixgate-sim" -pixgate "$tmp/pixgate" -db "$db" -ops "$ops" -kills "$kills" -seed "$seed" \
			-dir "$tmp/run-$seed-$db" -quiesce 5m; then
			failed=$((failed + 1))
			cp -r "$tmp/run-$seed-$db" "${TMPDIR:-/tmp}/pixgate-sim-failed-$seed-$db" 2>/dev/null || true
			echo "(its files are kept in ${TMPDIR:-/tmp}/pixgate-sim-failed-$seed-$db)"
		fi
	done
done
exit "$failed"
