#!/usr/bin/env bash
# Usage: scripts/start-postgres.sh DIR
#
# Creates a throwaway PostgreSQL cluster in DIR/data and starts it listening
# only on a Unix socket in DIR (no TCP). Prints the connection URL on stdout:
#   postgres://postgres@/postgres?host=DIR&sslmode=disable
# Everything else goes to stderr; the server log is DIR/pg.log.
# Stop it with scripts/stop-postgres.sh DIR.
#
# PIXGATE_PG_SETTINGS, when set, adds server settings ("-c name=value ...",
# appended to pg_ctl's -o): the benchmark scripts run PostgreSQL with the
# settings docs/production.md recommends; tests and CI use the defaults.
set -euo pipefail

if [[ $# -ne 1 ]]; then
	echo "usage: $0 DIR" >&2
	exit 2
fi
mkdir -p "$1"
dir=$(cd "$1" && pwd -P) # absolute: a relative socket dir would be resolved against the data dir
if ((${#dir} > 80)); then
	echo "start-postgres: $dir is too long for a Unix socket path" >&2
	exit 1
fi

bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
if [[ -z $bindir || ! -x $bindir/initdb ]]; then
	echo "start-postgres: no PostgreSQL under /usr/lib/postgresql/*/bin (run scripts/install-deps.sh)" >&2
	exit 1
fi
if [[ -e $dir/data ]]; then
	echo "start-postgres: $dir/data already exists; use a fresh directory" >&2
	exit 1
fi

# As root, the server runs as the postgres user (PostgreSQL refuses root),
# which must own DIR and be able to reach it.
as_pg=()
if [[ $(id -u) -eq 0 ]]; then
	as_pg=(runuser -u postgres --)
	chown postgres: "$dir"
	chmod 755 "$dir"
	if ! runuser -u postgres -- test -w "$dir"; then
		echo "start-postgres: user postgres cannot reach $dir (a parent directory is not world-traversable)" >&2
		exit 1
	fi
fi

if ! "${as_pg[@]}" "$bindir/initdb" -D "$dir/data" --auth=trust -U postgres \
	--encoding=UTF8 --locale=C >"$dir/initdb.log" 2>&1; then
	echo "start-postgres: initdb failed:" >&2
	cat "$dir/initdb.log" >&2
	exit 1
fi

if ! "${as_pg[@]}" "$bindir/pg_ctl" -D "$dir/data" -l "$dir/pg.log" -w -t 60 \
	-o "-c listen_addresses='' -k $dir -c fsync=on -c synchronous_commit=on -c max_connections=200 ${PIXGATE_PG_SETTINGS:-}" \
	start >&2; then
	echo "start-postgres: server did not start; last lines of $dir/pg.log:" >&2
	tail -n 30 "$dir/pg.log" >&2 || true
	exit 1
fi

echo "postgres://postgres@/postgres?host=$dir&sslmode=disable"
