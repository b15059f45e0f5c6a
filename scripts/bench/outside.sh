#!/usr/bin/env bash
# Usage: scripts/bench/outside.sh [OP] [WORKDIR]
#
# Throughput measured from outside (docs/decisions.md, "Throughput from
# outside"): pixgate against PostgreSQL's own ceiling on the same cluster.
# OP is payout (default) or charge.
#
#   - One private PostgreSQL (scripts/start-postgres.sh: Unix socket,
#     fsync=on, synchronous_commit=on, the settings of pg-settings.sh).
#   - The ceiling: pgbench -n -M prepared -c 16 -j 2 -T T on its own
#     database. Payouts: outside/ceiling-schema.sql (1,000 accounts) and
#     outside/ceiling-payout.sql (reserve, transaction row, two entries,
#     outbox row). Charges: pixgate's schema, 64 seeded clients and
#     pgbench-charge.sql (a charge's one INSERT as pixgate writes it).
#   - pixgate: `serve` on another database of the cluster (sandbox
#     provider, 2 s payout delay, rate limit raised), 16 clients each
#     funded by one paid charge; wrk -t2 -c16 -d T posting OP round robin
#     over them (outside/load.lua), every request with its own
#     Idempotency-Key and a callbackUrl on a local receiver that answers 204
#     (receiver/), so settlement and webhook delivery run during the load.
#   - pgbench and wrk alternate, T each, ROUNDS rounds, a 10 s pause after
#     each wrk run. The median of rounds 2..ROUNDS is reported (the first
#     round's pgbench figure is an outlier on a fresh cluster).
#
# Per round it prints pgbench tx/s, pixgate requests/s (2xx only; any
# other answer is counted and fails the run), the ratio, and wrk's p50/p99.
# With CPU=1 it also measures, during each wrk run, the CPU seconds of the
# server, wrk, the receiver and PostgreSQL (scripts/bench/cpu.sh) and prints
# them per request, and during each pgbench run those of pgbench and
# PostgreSQL per transaction.
#
# With PROFILE=N, round N's wrk run also records a CPU profile of the
# server (PIXGATE_PPROF_ADDR; WORKDIR/cpu.pprof) and PostgreSQL's time per
# statement (pg_stat_statements; WORKDIR/statements.tsv);
# scripts/bench/stages.py turns both into time per stage.
#
# PAYOUT_DELAY (default 2s) is the sandbox's settlement delay: 1h keeps
# settlement and webhooks out of the run, to measure a payout's creation
# alone.
#
# PREP_SQL, for experiments, runs on pixgate's database after its migration.
#
# Environment: T (12), ROUNDS (5), PAUSE (10), CPU, PROFILE, PAYOUT_DELAY, PREP_SQL, PIXGATE (a pixgate
# binary to measure instead of building this tree's). Needs go, jq, psql,
# pgbench, wrk and PostgreSQL's server binaries (scripts/install-deps.sh;
# wrk: apt-get install wrk).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
op=${1:-payout}
T=${T:-12}
ROUNDS=${ROUNDS:-5}
if ((ROUNDS < 2)); then
	echo "ROUNDS must be at least 2: the figures are the median of rounds 2 to ROUNDS" >&2
	exit 2
fi
PAUSE=${PAUSE:-10}
RATE_LIMIT=100000000
case $op in payout | charge) ;; *)
	echo "usage: $0 [payout|charge] [WORKDIR]" >&2
	exit 2
	;;
esac
# shellcheck source=common.sh
. "$root/scripts/bench/common.sh"
work=$(work_dir "${2:-}" pixout)
chmod 755 "$work"

if [[ -n ${PIXGATE:-} ]]; then
	pixgate=$(realpath "$PIXGATE")
else
	(cd "$root" && go build -o "$work/pixgate" ./cmd/pixgate)
	pixgate=$work/pixgate
fi
if [[ -n ${PROFILE:-} ]]; then
	PG_EXTRA="${PG_EXTRA:-} -c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=all"
fi
start_postgres
if [[ -n ${PROFILE:-} ]]; then
	psql -X -q -c "CREATE EXTENSION pg_stat_statements" "$pg"
fi
if [[ -n ${PREP_SQL:-} ]]; then
	psql -X -q -v ON_ERROR_STOP=1 -c "$PREP_SQL" "$pg"
fi
ceiling=${pg/\/postgres\?/\/ceiling?}
psql -X -q -v ON_ERROR_STOP=1 -c "CREATE DATABASE ceiling" "$pg"
if [[ $op == payout ]]; then
	psql -X -q -v ON_ERROR_STOP=1 -f "$root/scripts/bench/outside/ceiling-schema.sql" "$ceiling"
	ceiling_args=(-f "$root/scripts/bench/outside/ceiling-payout.sql")
else
	"$pixgate" migrate --database-url "$ceiling" 2>>"$work/migrate.log"
	psql -X -q -v ON_ERROR_STOP=1 -v clients=64 -f "$root/scripts/bench/seed.sql" "$ceiling"
	ceiling_args=(-D clients=64 -D auth=0 -f "$root/scripts/bench/pgbench-charge.sql")
fi

start_receiver

SERVE_ENV="PIXGATE_ENV=sandbox PIXGATE_SANDBOX_PAYOUT_DELAY=${PAYOUT_DELAY:-2s} PIXGATE_WEBHOOK_ALLOW_PRIVATE=true"
if [[ -n ${PROFILE:-} ]]; then
	SERVE_ENV="$SERVE_ENV PIXGATE_PPROF_ADDR=127.0.0.1:0"
fi
start_serve "$pg" outside

# 16 clients, each funded by one charge paid in the sandbox.
: >"$work/clients.txt"
for i in $(seq 16); do
	cred=$("$pixgate" clients create --name "outside $i" --database-url "$pg" 2>>"$work/clients.log")
	id=$(jq -r .client_id <<<"$cred")
	secret=$(jq -r .client_secret <<<"$cred")
	echo "$id $secret" >>"$work/clients.txt"
	pid=$(curl -sf "$url/api/v1/gateway/request-qrcode" -H "stpi: $id" -H "stps: $secret" -H 'Content-Type: application/json' \
		-d '{"amount": 100000.00, "external_id": "fund-'"$i"'", "payerQuestion": "fund", "postbackUrl": "'"$hook"'",
		     "payer": {"name": "Maria Souza", "document": "52998224725", "phoneNumber": "11987654321", "email": "m@example.com",
		               "address": {"street": "Rua A", "number": "1", "neighborhood": "Centro", "city": "Recife", "state": "PE", "zipCode": "50000000"}},
		     "products": [{"name": "Fundo", "quantity": "1", "price": 100000.00}]}' | jq -r .payment_id)
	curl -sf -X POST "$url/api/v1/sandbox/charges/$pid/pay" -H "stpi: $id" -H "stps: $secret" >/dev/null
done

results=$work/rounds.txt
: >"$results"
for round in $(seq "$ROUNDS"); do
	pgbench -n -M prepared -c 16 -j 2 -T "$T" "${ceiling_args[@]}" "$ceiling" >"$work/pgbench-$round.txt" 2>"$work/pgbench-$round.err" &
	pgbench_pid=$!
	if [[ -n ${CPU:-} ]]; then
		sleep 1
		bash "$root/scripts/bench/cpu.sh" "$work/pg" "$pgbench_pid" sleep $((T - 3)) 2>"$work/cpu-pgbench-$round.txt" || true
	fi
	wait "$pgbench_pid"
	tps=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$work/pgbench-$round.txt")
	cpu_args=()
	if [[ -n ${CPU:-} ]]; then
		cpu_args=(bash "$root/scripts/bench/cpu.sh" "$work/pg" "$serve_pid,WRK,$receiver_pid")
	fi
	WRK_OP=$op WRK_RUN=$round WRK_HOOK=$hook WRK_CLIENTS=$work/clients.txt \
		wrk -t2 -c16 -d"${T}s" --latency -s "$root/scripts/bench/outside/load.lua" "$url" >"$work/wrk-$round.txt" 2>"$work/wrk-$round.err" &
	wrk_pid=$!
	sleep 1
	prof_pid=
	if [[ -n ${PROFILE:-} && $round == "$PROFILE" ]]; then
		psql -X -q -c "SELECT pg_stat_statements_reset()" "$pg" >/dev/null
		pprof=$(jq -r 'select(.msg == "profiler listening") | .addr' "$work/serve-outside.log" | head -n 1)
		curl -sf "http://$pprof/debug/pprof/profile?seconds=$((T - 2))" -o "$work/cpu.pprof" &
		prof_pid=$!
	fi
	if [[ -n ${CPU:-} ]]; then
		"${cpu_args[@]/WRK/$wrk_pid}" sleep $((T - 2)) 2>"$work/cpu-$round.txt" || true
	fi
	if [[ -n $prof_pid ]]; then
		wait "$prof_pid" || true
		psql -X -A -F $'\t' -c "SELECT calls, total_exec_time, query FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = 'postgres') ORDER BY total_exec_time DESC" \
			"$pg" >"$work/statements.tsv"
	fi
	wait "$wrk_pid"
	python3 - "$round" "$tps" "$work/wrk-$round.txt" "$work/cpu-$round.txt" >>"$results" <<'PY'
import os, re, sys
rnd, tps, path, cpu = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4]
t = open(path).read()
total = int(re.search(r'(\d+) requests in', t).group(1))
secs = float(re.search(r'requests in ([0-9.]+)s', t).group(1))
bad = re.search(r'Non-2xx or 3xx responses: (\d+)', t)
bad = int(bad.group(1)) if bad else 0
errs = re.search(r'Socket errors: (.*)', t)
def ms(label):
    m = re.search(r'^\s+' + label + r'%\s+([0-9.]+)(us|ms|s)', t, re.M)
    v, u = float(m.group(1)), m.group(2)
    return v / 1000 if u == 'us' else v * 1000 if u == 's' else v
rps = (total - bad) / secs
line = f"round {rnd}: pgbench {tps:,.0f} tx/s | pixgate {rps:,.0f} req/s | ratio {rps / tps:.2f} | p50 {ms('50'):.1f} ms p99 {ms('99'):.1f} ms"
if bad or errs:
    line += f" | NON-2xx {bad} {errs.group(1) if errs else ''}"
if os.path.exists(cpu) and os.path.getsize(cpu):
    c = open(cpu).read()
    procs = [float(x) for x in re.findall(r'\] ([0-9.]+) s', c)]
    pg = float(re.search(r'postgres ([0-9.]+) s', c).group(1))
    wall = float(re.search(r'wall ([0-9.]+) s', c).group(1))
    n = rps * wall
    us = lambda s: s / n * 1e6
    line += f" | CPU/req µs: server {us(procs[0]):.0f} wrk {us(procs[1]):.0f} receiver {us(procs[2]):.0f} PostgreSQL {us(pg):.0f}"
pc = cpu.replace("cpu-", "cpu-pgbench-")
if os.path.exists(pc) and os.path.getsize(pc):
    c = open(pc).read()
    procs = [float(x) for x in re.findall(r'\] (-?[0-9.]+) s', c)]
    pg = float(re.search(r'postgres ([0-9.]+) s', c).group(1))
    n = tps * float(re.search(r'wall ([0-9.]+) s', c).group(1))
    gen = f"{procs[0] / n * 1e6:.0f}" if procs and procs[0] > 0 else "?"
    line += f" | pgbench CPU/tx µs: pgbench {gen} PostgreSQL {pg / n * 1e6:.0f}"
print(line)
PY
	tail -n 1 "$results"
	sleep "$PAUSE"
done
python3 - "$results" <<'PY'
import re, statistics, sys
rows = open(sys.argv[1]).read().splitlines()[1:]
get = lambda k: [float(re.search(k, r).group(1).replace(',', '')) for r in rows]
print(f"median of rounds 2..{len(rows) + 1}: pgbench {statistics.median(get(r'pgbench ([0-9,.]+)')):,.0f} tx/s, "
      f"pixgate {statistics.median(get(r'pixgate ([0-9,.]+)')):,.0f} req/s, ratio {statistics.median(get(r'ratio ([0-9.]+)')):.2f}, "
      f"p99 {statistics.median(get(r'p99 ([0-9.]+)')):.1f} ms")
PY
stop_receiver
echo "webhook $(cat "$work/receiver.log") received; work directory $work" >&2
if [[ -n ${PROFILE:-} && -s $work/cpu.pprof ]]; then
	rps=$(sed -n "s/^round $PROFILE: .*pixgate \([0-9,]*\) req.*/\1/p" "$results" | tr -d ,)
	python3 "$root/scripts/bench/stages.py" "$pixgate" "$work/cpu.pprof" "$work/statements.tsv" "$((rps * (T - 2)))"
fi
