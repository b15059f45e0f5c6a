#!/usr/bin/env bash
# Usage: scripts/stop-postgres.sh DIR
# Stops a cluster started by scripts/start-postgres.sh DIR (fast shutdown).
# Succeeds quietly when there is nothing to stop.
set -euo pipefail

if [[ $# -ne 1 ]]; then
	echo "usage: $0 DIR" >&2
	exit 2
fi
dir=$1
[[ -f $dir/data/postmaster.pid ]] || exit 0

bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
as_pg=()
if [[ $(id -u) -eq 0 ]]; then
	as_pg=(runuser -u postgres --)
fi
"${as_pg[@]}" "$bindir/pg_ctl" -D "$dir/data" -m fast -w -t 60 stop >&2
