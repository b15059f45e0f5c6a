#!/usr/bin/env bash
# Usage: scripts/start-redis.sh DIR
#
# Starts a throwaway redis-server listening only on the Unix socket
# DIR/redis.sock (no TCP, no persistence), waits until it answers PING and
# prints its URL on stdout: unix://DIR/redis.sock
# The log is DIR/redis.log. Stop it with scripts/stop-redis.sh DIR.
set -euo pipefail

if [[ $# -ne 1 ]]; then
	echo "usage: $0 DIR" >&2
	exit 2
fi
mkdir -p "$1"
dir=$(cd "$1" && pwd -P)
sock=$dir/redis.sock
if ((${#sock} > 100)); then
	echo "start-redis: $sock is too long for a Unix socket path" >&2
	exit 1
fi
command -v redis-server >/dev/null || { echo "start-redis: redis-server not found (run scripts/install-deps.sh)" >&2; exit 1; }

redis-server --port 0 --unixsocket "$sock" --unixsocketperm 700 \
	--save '' --appendonly no --daemonize yes \
	--pidfile "$dir/redis.pid" --logfile "$dir/redis.log" --dir "$dir" >&2

for _ in $(seq 1 100); do
	if [[ $(redis-cli -s "$sock" ping 2>/dev/null) == PONG ]]; then
		echo "unix://$sock"
		exit 0
	fi
	sleep 0.1
done
echo "start-redis: no PONG on $sock after 10s; last lines of $dir/redis.log:" >&2
tail -n 30 "$dir/redis.log" >&2 || true
exit 1
