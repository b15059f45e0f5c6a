#!/usr/bin/env bash
# Usage: scripts/sim-bugs.sh [DB [OPS [KILLS [SEED [PATTERN]]]]]
#
# Shows that the simulation catches realistic bugs: for each patch in
# internal/sim/testdata/bugs/ (a bug planted in pixgate), builds pixgate
# with that patch alone in a scratch worktree and runs the simulation
# against it; every run must FAIL. Prints, per bug, whether it was caught,
# how long the run took and what the auditor reported. DB is sqlite
# (default) or postgres (PIXGATE_TEST_POSTGRES_URL must name a server);
# PATTERN, when given, runs only the patches whose name contains it.
# Exits non-zero if a bug went unnoticed.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$(pwd -P)
db=${1:-sqlite}
ops=${2:-300}
kills=${3:-3}
seed=${4:-1}
pattern=${5:-}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pixgate-sim-bugs.XXXXXX")
cleanup() {
	git -C "$root" worktree remove --force "$tmp/tree" >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT

go build -o "$tmp/pixgate-sim" ./cmd/pixgate-sim
git -C "$root" worktree add --detach -q "$tmp/tree" HEAD
missed=0
for patch in "$root"/internal/sim/testdata/bugs/*.patch; do
	name=$(basename "$patch" .patch)
	[[ -z $pattern || $name == *"$pattern"* ]] || continue
	git -C "$tmp/tree" checkout -q -- .
	git -C "$tmp/tree" apply "$patch"
	(cd "$tmp/tree" && go build -o "$tmp/pixgate" ./cmd/pixgate)
	start=$SECONDS
	if "$tmp/pixgate-sim" -pixgate "$tmp/pixgate" -db "$db" -ops "$ops" -kills "$kills" -seed "$seed" -quiesce 90s \
		>"$tmp/$name.out" 2>"$tmp/$name.err"; then
		echo "MISSED  $name (seed $seed, $db, $ops ops, $((SECONDS - start)) s)"
		missed=$((missed + 1))
	else
		echo "caught  $name (seed $seed, $db, $ops ops, $((SECONDS - start)) s):"
		grep -E '^(FAIL|NOT QUIESCED)' "$tmp/$name.out" | sed 's/^/          /'
	fi
done
exit "$missed"
