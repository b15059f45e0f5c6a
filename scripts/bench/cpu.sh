#!/usr/bin/env bash
# Usage: scripts/bench/cpu.sh PGDIR SERVE_PID COMMAND [ARG...]
#
# Runs COMMAND (a load generator: pgbench or pixgate bench) and prints, on
# stderr, the CPU seconds spent while it ran by:
#   load   — COMMAND and its children,
#   serve  — the process SERVE_PID (a pixgate serve; 0 when there is none),
#   pg     — the PostgreSQL cluster started by scripts/start-postgres.sh PGDIR
#            (postmaster, live backends, and backends that exited meanwhile,
#            which the postmaster reaped into its children's times),
# and the wall time. Dividing by the operations COMMAND reports gives the CPU
# cost of one operation in each process, which is what binds on a small box.
set -euo pipefail

if (($# < 3)); then
	echo "usage: $0 PGDIR SERVE_PID COMMAND [ARG...]" >&2
	exit 2
fi
pgdir=$1
serve=$2
shift 2
hz=$(getconf CLK_TCK)

# ticks PID [WITH_CHILDREN]: utime+stime (and cutime+cstime) of one process.
ticks() {
	local f
	f=$(cat "/proc/$1/stat" 2>/dev/null) || {
		echo 0
		return
	}
	f=${f##*) } # fields after the command name, which may hold spaces
	read -r -a a <<<"$f"
	# a[0] is field 3 (state): utime is field 14 → a[11].
	if [[ ${2:-} == children ]]; then
		echo $((a[11] + a[12] + a[13] + a[14]))
	else
		echo $((a[11] + a[12]))
	fi
}

pg_ticks() {
	local pm total=0 p
	pm=$(head -n 1 "$pgdir/data/postmaster.pid")
	total=$(ticks "$pm" children)
	for p in $(ps -o pid= --ppid "$pm"); do
		total=$((total + $(ticks "$p")))
	done
	echo "$total"
}

serve_ticks() { if [[ $serve == 0 ]]; then echo 0; else ticks "$serve"; fi; }

pg0=$(pg_ticks)
s0=$(serve_ticks)
start=$(date +%s.%N)
TIMEFORMAT='%U %S'
rc=0
{ t=$({ time "$@" >&3 2>&4; } 2>&1) || rc=$?; } 3>&1 4>&2
end=$(date +%s.%N)
pg1=$(pg_ticks)
s1=$(serve_ticks)
read -r lu ls <<<"$t"
awk -v lu="$lu" -v ls="$ls" -v s=$((s1 - s0)) -v p=$((pg1 - pg0)) -v hz="$hz" -v w0="$start" -v w1="$end" 'BEGIN {
	printf "cpu: wall %.1f s | load %.1f s | serve %.1f s | pg %.1f s\n", w1 - w0, lu + ls, s / hz, p / hz > "/dev/stderr"
}'
exit "$rc"
