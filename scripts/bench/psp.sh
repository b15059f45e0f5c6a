#!/usr/bin/env bash
# Usage: scripts/bench/psp.sh [ROUNDS]
#
# What a real PSP provider costs (BENCHMARKS.md): charges and payouts at C
# clients with PIXGATE_PROVIDER=efi against `pixgate psp-sim` on the same
# machine, beside the same with the sandbox provider, on one fresh
# PostgreSQL cluster (common.sh). ROUNDS (default 3) rounds; in each, for
# charges, payouts, then payouts at RATE, one efi run and one sandbox run,
# which goes first alternating from round to round. Each run:
#   - the data tables emptied (reset.sql) and synced;
#   - efi: `pixgate psp-sim --settle-delay SETTLE --log-level debug` (one
#     log line per request it receives, which is how they are counted),
#     then `pixgate serve` with PIXGATE_ENV=production, the environment
#     psp-sim printed and PIXGATE_WEBHOOK_ALLOW_PRIVATE=true (for the
#     bench's webhook receiver on 127.0.0.1); sandbox: `pixgate serve` in
#     the sandbox environment;
#   - pixgate-bench --mix OP=1 --concurrency C (or --rate RATE) --duration
#     DUR with CLIENTS new clients, no failing or returned payouts (efi:
#     funded through --fund-via-psp-sim); the CPU of each process over MEAS
#     seconds from WARM seconds in, as scripts/bench/cpu.sh measures it.
# Prints one line per run: operations acknowledged per second; CPU µs per
# acknowledged operation over that window, of the server, the simulator,
# the load generator and PostgreSQL; the requests the simulator received
# in the whole run per charge acknowledged or per payout sent (by method
# and path), and the webhooks it sent. With efi the API acknowledges
# payouts faster than the server sends them to the PSP: the line also gives
# the payouts sent per second in the window (PUT /v3/gn/pix), and the run
# does not wait for the rest (its check fails on them). Then the medians
# per provider and operation. The same payouts once more in open loop at
# RATE per second (payout-rate), which the efi sender keeps up with: there
# every payout's whole cost (accepted, sent, read back, settled) falls into
# the window, for both providers. Raw outputs stay in WORK (printed at the
# end).
#
# Environment: OPS (charge payout payout-rate), C (16), RATE (50), DUR
# (30s), WARM (9), MEAS (18), CLIENTS (64), SETTLE (0s), PIXGATE (a pixgate
# binary; default: built from this tree), BENCH_PROCS (common.sh), PG_EXTRA.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
rounds=${1:-3}
C=${C:-16}
DUR=${DUR:-30s}
WARM=${WARM:-9}
MEAS=${MEAS:-18}
CLIENTS=${CLIENTS:-64}
SETTLE=${SETTLE:-0s}
RATE=${RATE:-50}
RATE_LIMIT=1000000
# shellcheck source=common.sh
. "$root/scripts/bench/common.sh"
work=$(work_dir "" pixpsp)
chmod 755 "$work"
build_bench
if [[ -n ${PIXGATE:-} ]]; then
	pixgate=$(realpath "$PIXGATE")
else
	(cd "$root" && go build -o "$work/pixgate" ./cmd/pixgate)
	pixgate=$work/pixgate
fi

sim_pid=
psp_cleanup() {
	if [[ -n $sim_pid ]]; then
		kill "$sim_pid" 2>/dev/null || true
		wait "$sim_pid" 2>/dev/null || true
	fi
	cleanup
}
trap psp_cleanup EXIT

# free_port: a TCP port on 127.0.0.1 free a moment ago.
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# start_sim NAME ADDR: psp-sim for a pixgate at ADDR; sets sim_pid, ctl (its
# control API) and leaves the environment it printed in WORK/sim-NAME.env.
start_sim() {
	"$pixgate" psp-sim --api-addr 127.0.0.1:0 --control-addr 127.0.0.1:0 --dir "$work/sim-$1" \
		--settle-delay "$SETTLE" --log-level debug --addr "$2" >"$work/sim-$1.env" 2>"$work/sim-$1.log" &
	sim_pid=$!
	for _ in $(seq 200); do
		grep -q '^export PIXGATE_PSP_WEBHOOK_URL=' "$work/sim-$1.env" 2>/dev/null && break
		sleep 0.1
	done
	ctl=$(sed -n 's/^# control API: \(http:[^ ]*\) .*/\1/p' "$work/sim-$1.env")
	if [[ -z $ctl ]]; then
		echo "psp.sh: psp-sim did not start:" >&2
		tail "$work/sim-$1.log" >&2
		exit 1
	fi
}

stop_sim() {
	kill "$sim_pid"
	wait "$sim_pid" || true
	sim_pid=
}

# start_serve_efi NAME ADDR: pixgate serve in production at ADDR with the
# environment psp-sim printed; sets serve_pid and url.
start_serve_efi() {
	(
		set -a
		# shellcheck disable=SC1090
		. "$work/sim-$1.env"
		exec env PIXGATE_ENV=production PIXGATE_WEBHOOK_ALLOW_PRIVATE=true "$pixgate" serve --addr "$2" --database-url "$pg" --rate-limit "$RATE_LIMIT"
	) >"$work/serve-$1.out" 2>"$work/serve-$1.log" &
	serve_pid=$!
	url=
	for _ in $(seq 200); do
		url=$(jq -r 'select(.msg == "listening") | .addr' "$work/serve-$1.log" 2>/dev/null | head -n 1)
		[[ -n $url ]] && break
		sleep 0.1
	done
	if [[ -z $url ]]; then
		echo "psp.sh: pixgate serve (efi) did not start:" >&2
		tail "$work/serve-$1.log" >&2
		exit 1
	fi
	url=http://$url
}

# cpu_window PIDS SECONDS: what scripts/bench/cpu.sh PGDIR PIDS sleep SECONDS
# measures (the CPU seconds of each process in PIDS and of the PostgreSQL
# cluster in WORK/pg over SECONDS), printed with 10 ms resolution rather
# than 100 ms: at the open-loop rate a window holds only ~1,000 payouts.
cpu_window() {
	python3 - "$work/pg" "$1" "$2" <<'PY'
import os, subprocess, sys, time
pgdir, pids, secs = sys.argv[1], [p for p in sys.argv[2].split(",") if p], float(sys.argv[3])
hz = os.sysconf("SC_CLK_TCK")
def ticks(pid, children=False):
    try:
        f = open(f"/proc/{pid}/stat").read().rsplit(") ", 1)[1].split()
    except OSError:
        return 0
    return sum(int(x) for x in f[11:15 if children else 13])
def pg():
    pm = open(f"{pgdir}/data/postmaster.pid").readline().strip()
    kids = subprocess.run(["ps", "-o", "pid=", "--ppid", pm], capture_output=True, text=True).stdout.split()
    return ticks(pm, True) + sum(ticks(k) for k in kids)
b, p0, t0 = [ticks(p) for p in pids], pg(), time.time()
time.sleep(secs)
a, p1, t1 = [ticks(p) for p in pids], pg(), time.time()
print(f"cpu: wall {t1 - t0:.2f} s" + "".join(f" | pid[{p}] {(y - x) / hz:.2f} s" for p, x, y in zip(pids, b, a))
      + f" | postgres {(p1 - p0) / hz:.2f} s")
PY
}

# requests NAME: lines of the simulator's log so far.
sim_lines() { if [[ -n $sim_pid ]]; then wc -l <"$work/sim-$1.log"; else echo 0; fi; }

# one PROVIDER OP NAME: one run, one line (also appended to WORK/runs.tsv).
one() {
	local prov=$1 op=$2 name=$3 lp addr n0 n1 pids load=(--concurrency "$C")
	[[ $op == payout-rate ]] && load=(--rate "$RATE")
	psql -q -v ON_ERROR_STOP=1 -f "$root/scripts/bench/reset.sql" "$pg"
	sync
	local extra=(--settle-timeout 300s)
	if [[ $prov == efi ]]; then
		addr=127.0.0.1:$(free_port)
		start_sim "$name" "$addr"
		start_serve_efi "$name" "$addr"
		extra=(--env production --fund-via-psp-sim "$ctl")
		# In closed loop the payouts the API accepted are sent to the PSP
		# well after the load (see the output): not awaited, so their
		# check fails.
		if [[ $op == payout ]]; then
			extra+=(--settle-timeout 1s)
		else
			extra+=(--settle-timeout 300s)
		fi
	else
		start_serve "$pg" "$name"
	fi
	GOMAXPROCS=$BENCH_PROCS "$pixgate_bench" --pixgate "$pixgate" --target "$url" --database-url "$pg" \
		--create-clients "$CLIENTS" --mix "${op%-rate}=1" "${load[@]}" --duration "$DUR" \
		--payout-fail-percent 0 --payout-reverse-percent 0 "${extra[@]}" \
		--json >"$work/bench-$name.json" 2>"$work/bench-$name.err" &
	lp=$!
	sleep "$WARM"
	pids=$serve_pid,$lp
	[[ -n $sim_pid ]] && pids=$serve_pid,$lp,$sim_pid
	n0=$(sim_lines "$name")
	cpu_window "$pids" "$MEAS" >"$work/cpu-$name.txt"
	n1=$(sim_lines "$name")
	wait "$lp" || true
	stop_serve
	if [[ -n $sim_pid ]]; then
		stop_sim
		sed -n "$((n0 + 1)),${n1}p" "$work/sim-$name.log" >"$work/sim-$name.window"
	else
		: >"$work/sim-$name.window"
		: >"$work/sim-$name.log"
	fi
	python3 - "$prov" "$op" "$name" "$work" <<'PY'
import collections, json, re, sys
prov, op, name, work = sys.argv[1:]
rep = json.load(open(f"{work}/bench-{name}.json"))
o = next(o for o in rep["operations"] if o["op"] == op.removesuffix("-rate"))
rate = o["ok_rps"]
t = open(f"{work}/cpu-{name}.txt").read()
procs = [float(x) for x in re.findall(r'\] ([0-9.]+) s', t)]
pg = float(re.search(r'postgres ([0-9.]+) s', t).group(1))
wall = float(re.search(r'wall ([0-9.]+) s', t).group(1))
n = rate * wall  # operations acknowledged in the window
us = lambda s: s / n * 1e6
sim = procs[2] if len(procs) > 2 else 0.0

def requests(path):
    """PSP requests by method and path without ids, and webhooks sent."""
    reqs, hooks = collections.Counter(), 0
    for line in open(path):
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if e.get("msg") == "pspsim request":
            p = re.sub(r'/[A-Za-z0-9-]{20,}(?=/|$)', '/*', e.get("path", ""))
            reqs[f'{e.get("method")} {p}'] += 1
        elif e.get("msg") == "pspsim webhook":
            hooks += 1
    return reqs, hooks

run, hooks = requests(f"{work}/sim-{name}.log")        # the simulator's whole life
win, _ = requests(f"{work}/sim-{name}.window")         # the CPU window
sends = run["PUT /v3/gn/pix/*"]
# Per charge: every request of the run over the charges acknowledged (the
# funding charges and start-up requests included: a few dozen). Per payout:
# over the payouts sent to the PSP (a PUT each), since the API acknowledges
# them faster than they are sent.
per = sends if op.startswith("payout") else o["ok"]
row = dict(prov=prov, op=op, name=name, rate=rate, server=us(procs[0]), bench=us(procs[1]), sim=us(sim),
           pg=us(pg), total=us(sum(procs) + pg), reqs=sum(run.values()) / per if per else 0.0,
           sent_rps=win["PUT /v3/gn/pix/*"] / wall, check=rep["check"]["ok"])
open(f"{work}/runs.tsv", "a").write(json.dumps(row) + "\n")
detail = ", ".join(f"{k} {v / per:.3f}" for k, v in run.most_common(6)) if per else "none"
extra = f" | sent to the PSP in the window {row['sent_rps']:,.0f}/s" if prov == "efi" and op == "payout" else ""
print(f"{name}: {prov} {op} {rate:,.0f}/s acknowledged{extra} | CPU µs per {op}: server {row['server']:.0f}, "
      f"simulator {row['sim']:.0f}, load generator {row['bench']:.0f}, PostgreSQL {row['pg']:.0f}, total {row['total']:.0f} | "
      f"PSP requests per {op}{' sent' if op.startswith('payout') else ''} {row['reqs']:.3f} ({detail}), webhooks {hooks} | check {row['check']}",
      flush=True)
PY
}

setup_pg() {
	start_postgres
	echo "PostgreSQL in $work/pg; pixgate $pixgate; C=$C RATE=$RATE DUR=$DUR WARM=$WARM MEAS=$MEAS CLIENTS=$CLIENTS SETTLE=$SETTLE"
}
setup_pg
for round in $(seq "$rounds"); do
	for op in ${OPS:-charge payout payout-rate}; do
		order=(efi sandbox)
		((round % 2 == 0)) && order=(sandbox efi)
		for prov in "${order[@]}"; do
			one "$prov" "$op" "$prov-$op-$round"
		done
	done
done

echo
echo "medians of $rounds rounds (C=$C, $CLIENTS clients, CPU over ${MEAS}s from ${WARM}s in):"
python3 - "$work/runs.tsv" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
med = lambda xs: statistics.median(xs)
for op in ("charge", "payout", "payout-rate"):
    for prov in ("sandbox", "efi"):
        rs = [r for r in rows if r["op"] == op and r["prov"] == prov]
        if not rs:
            continue
        m = {k: med([r[k] for r in rs]) for k in ("rate", "sent_rps", "server", "sim", "bench", "pg", "total", "reqs")}
        sent = f", sent {m['sent_rps']:,.0f}/s" if m["sent_rps"] else ""
        print(f"{op:6} {prov:7} {m['rate']:7,.0f}/s{sent} | CPU µs/op: server {m['server']:4.0f}, simulator {m['sim']:4.0f}, "
              f"load generator {m['bench']:4.0f}, PostgreSQL {m['pg']:4.0f}, total {m['total']:5.0f} | "
              f"PSP requests/op {m['reqs']:.3f} | rounds: " + " ".join(f"{r['rate']:.0f}" for r in rs)
              + (" (sent: " + " ".join(f"{r['sent_rps']:.0f}" for r in rs) + ")" if sent else ""))
PY
echo "raw results: $work"
