#!/usr/bin/env bash
# Usage: scripts/bench/cpu.sh PGDIR PIDS COMMAND [ARG...]
#
# Runs COMMAND and prints, on stderr, the CPU seconds spent while it ran by
#   - COMMAND itself and its children,
#   - each process in PIDS (comma-separated, e.g. the pid of a running
#     `pixgate serve` and of a running load generator; "-" for none),
#   - the PostgreSQL cluster started by scripts/start-postgres.sh PGDIR
#     (postmaster, live backends, and backends that exited meanwhile, which
#     the postmaster reaped into its children's times),
# and the wall time. With COMMAND = `sleep 10` while a load generator runs in
# the background, dividing by the operations done in those 10 s gives the
# CPU cost of one operation in each process: what binds on a small machine.
set -euo pipefail

if (($# < 3)); then
	echo "usage: $0 PGDIR PIDS COMMAND [ARG...]" >&2
	exit 2
fi
pgdir=$1
IFS=, read -r -a pids <<<"${2//-/}"
shift 2
hz=$(getconf CLK_TCK)

# ticks PID [children]: utime+stime (plus cutime+cstime) of one process.
ticks() {
	local f
	f=$(cat "/proc/$1/stat" 2>/dev/null) || {
		echo 0
		return
	}
	f=${f##*) } # the fields after the command name, which may hold spaces
	local a
	read -r -a a <<<"$f"
	# a[0] is field 3 (state), so utime (field 14) is a[11].
	if [[ ${2:-} == children ]]; then
		echo $((a[11] + a[12] + a[13] + a[14]))
	else
		echo $((a[11] + a[12]))
	fi
}

pg_ticks() {
	local pm total p
	pm=$(head -n 1 "$pgdir/data/postmaster.pid")
	total=$(ticks "$pm" children)
	for p in $(ps -o pid= --ppid "$pm"); do
		total=$((total + $(ticks "$p")))
	done
	echo "$total"
}

declare -A before
for p in "${pids[@]}"; do before[$p]=$(ticks "$p"); done
pg0=$(pg_ticks)
start=$(date +%s.%N)
TIMEFORMAT='%U %S'
rc=0
{ t=$({ time "$@" >&3 2>&4; } 2>&1) || rc=$?; } 3>&1 4>&2
end=$(date +%s.%N)
pg1=$(pg_ticks)
read -r lu ls <<<"$t"
line=$(awk -v s="$start" -v e="$end" -v u="$lu" -v y="$ls" 'BEGIN { printf "cpu: wall %.1f s | command %.1f s", e - s, u + y }')
for p in "${pids[@]}"; do
	name=$(ps -o comm= -p "$p" 2>/dev/null || echo "?")
	line+=$(awk -v n="$name" -v p="$p" -v t=$(($(ticks "$p") - before[$p])) -v hz="$hz" 'BEGIN { printf " | %s[%s] %.1f s", n, p, t / hz }')
done
line+=$(awk -v t=$((pg1 - pg0)) -v hz="$hz" 'BEGIN { printf " | postgres %.1f s", t / hz }')
echo "$line" >&2
exit "$rc"
