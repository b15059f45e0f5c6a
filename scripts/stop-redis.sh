#!/usr/bin/env bash
# Usage: scripts/stop-redis.sh DIR
# Stops a redis-server started by scripts/start-redis.sh DIR and waits for it
# to exit. Succeeds quietly when there is nothing to stop.
set -euo pipefail

if [[ $# -ne 1 ]]; then
	echo "usage: $0 DIR" >&2
	exit 2
fi
dir=$1
[[ -f $dir/redis.pid ]] || exit 0
pid=$(cat "$dir/redis.pid")

redis-cli -s "$dir/redis.sock" shutdown nosave >/dev/null 2>&1 || kill "$pid" 2>/dev/null || true
for _ in $(seq 1 100); do
	kill -0 "$pid" 2>/dev/null || exit 0
	sleep 0.1
done
echo "stop-redis: redis-server (pid $pid) still running; sending SIGKILL" >&2
kill -9 "$pid" 2>/dev/null || true
