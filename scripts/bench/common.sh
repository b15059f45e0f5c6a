# Sourced by the bench scripts once they have set root (the repository) and
# work (their working directory): what each needs to build pixgate and
# pixgate-bench, start a private PostgreSQL with pixgate's schema, start
# and stop `pixgate serve` on it and a webhook receiver, cleaning up on exit.

# work_dir DIR PREFIX: DIR (created) or a new temp dir named PREFIX.XXXXXX,
# as an absolute path.
work_dir() {
	local dir=${1:-$(mktemp -d "${TMPDIR:-/tmp}/$2.XXXXXX")}
	mkdir -p "$dir"
	(cd "$dir" && pwd -P)
}

serve_pid=
receiver_pid=
# stop_receiver: stops the receiver start_receiver started, if running (it
# then writes how many webhooks it received to WORK/receiver.log).
stop_receiver() {
	if [[ -n $receiver_pid ]]; then
		kill "$receiver_pid" 2>/dev/null || true
		wait "$receiver_pid" 2>/dev/null || true
		receiver_pid=
	fi
}
cleanup() {
	stop_receiver
	if [[ -n $serve_pid ]]; then
		kill "$serve_pid" 2>/dev/null || true
		wait "$serve_pid" 2>/dev/null || true
	fi
	if [[ -n ${work:-} ]]; then
		bash "$root/scripts/stop-postgres.sh" "$work/pg" 2>/dev/null || true
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# BENCH_PROCS is the GOMAXPROCS of every pixgate-bench the scripts run
# (default 1). The load generator shares the machine with the server and
# PostgreSQL; with one processor its Go scheduler does not keep a second
# thread spinning for work, which at C=16 took ~9 % of its CPU from them
# (docs/decisions.md). It needs well under one CPU at any rate measured here.
BENCH_PROCS=${BENCH_PROCS:-1}

# start_receiver: builds and starts the webhook receiver that answers 204
# (scripts/bench/receiver) into WORK, stopped by cleanup (sets
# receiver_pid, and hook, its URL).
start_receiver() {
	(cd "$root" && go build -o "$work/receiver" ./scripts/bench/receiver)
	"$work/receiver" 127.0.0.1:0 >"$work/receiver.out" 2>"$work/receiver.log" &
	receiver_pid=$!
	for _ in $(seq 50); do
		[[ -s $work/receiver.out ]] && break
		sleep 0.1
	done
	hook=http://$(head -n 1 "$work/receiver.out")/hook
}

# build_bench: builds the load generator into WORK (sets pixgate_bench).
build_bench() {
	(cd "$root" && go build -o "$work/pixgate-bench" ./cmd/pixgate-bench)
	pixgate_bench=$work/pixgate-bench
}

# setup_postgres: builds pixgate and pixgate-bench into WORK (sets pixgate
# and pixgate_bench), then start_postgres.
setup_postgres() {
	(cd "$root" && go build -o "$work/pixgate" ./cmd/pixgate)
	pixgate=$work/pixgate
	build_bench
	start_postgres
}

# start_postgres: starts PostgreSQL in WORK/pg with the settings of
# pg-settings.sh plus PG_EXTRA, and migrates it with $pixgate (sets pg, its
# URL).
start_postgres() {
	# shellcheck source=pg-settings.sh
	. "$root/scripts/bench/pg-settings.sh"
	PIXGATE_PG_SETTINGS="$PIXGATE_PG_SETTINGS ${PG_EXTRA:-}"
	pg=$(bash "$root/scripts/start-postgres.sh" "$work/pg")
	"$pixgate" migrate --database-url "$pg" 2>"$work/migrate.log"
}

# stop_postgres: stops the cluster in WORK/pg and deletes it.
stop_postgres() {
	bash "$root/scripts/stop-postgres.sh" "$work/pg" >/dev/null 2>&1 || true
	rm -rf "$work/pg"
}

# start_serve DBURL NAME: starts pixgate serve with --rate-limit RATE_LIMIT
# (and SERVE_ENV, e.g. PIXGATE_SANDBOX_PAYOUT_DELAY=60s, in its environment),
# its output in WORK/serve-NAME.{out,log}; sets serve_pid and url.
start_serve() {
	# shellcheck disable=SC2086 # SERVE_ENV is a list of NAME=VALUE words
	env ${SERVE_ENV:-} "$pixgate" serve --addr 127.0.0.1:0 --database-url "$1" --rate-limit "$RATE_LIMIT" \
		>"$work/serve-$2.out" 2>"$work/serve-$2.log" &
	serve_pid=$!
	url=
	for _ in $(seq 200); do
		url=$(jq -r 'select(.msg == "listening") | .addr' "$work/serve-$2.log" 2>/dev/null | head -n 1)
		[[ -n $url ]] && break
		sleep 0.1
	done
	if [[ -z $url ]]; then
		echo "$(basename "$0"): pixgate serve did not start:" >&2
		tail "$work/serve-$2.log" >&2
		exit 1
	fi
	url=http://$url
}

stop_serve() {
	kill "$serve_pid"
	wait "$serve_pid" || true
	serve_pid=
}

# wal_segments: how many WAL segment files the cluster in WORK/pg has.
wal_segments() {
	find "$work/pg/data/pg_wal" -maxdepth 1 -type f -name '0*' | wc -l
}

# kernel_writeback: the kernel's dirty page cache limits. With the defaults
# (dirty_background_ratio 10 % of RAM, no byte limit) the zero pages
# PostgreSQL writes when it extends a table pile up for 30 s and are then
# written back in one burst, during which WAL flushes — every commit — wait:
# the half-peak stalls of docs/decisions.md. docs/production.md: set
# vm.dirty_background_bytes (e.g. 8388608) on a database host.
kernel_writeback() {
	echo "vm.dirty_background_bytes=$(cat /proc/sys/vm/dirty_background_bytes 2>/dev/null || echo ?)" \
		"vm.dirty_background_ratio=$(cat /proc/sys/vm/dirty_background_ratio 2>/dev/null || echo ?)"
}
