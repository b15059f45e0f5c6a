#!/usr/bin/env python3
"""Usage: scripts/bench/stages.py PIXGATE_BINARY CPU_PPROF STATEMENTS_TSV REQUESTS

Where a request's time goes, per stage, from what scripts/bench/outside.sh
PROFILE=N records: the server's CPU profile (each sample's stack is given to
the stage of its innermost frame that names one) and PostgreSQL's execution
time per statement (pg_stat_statements, grouped by what the statement
does). REQUESTS is how many requests the profiled window served, to print
microseconds per request.
"""
import collections
import re
import subprocess
import sys

# The innermost matching frame decides (see stage); order matters only
# within one frame, and the HTTP server's rule must stay last.
SERVER_RULES = [
    ("GC (background marking)", r"runtime\.gcBgMarkWorker"),
    ("authentication and rate limit", r"gateway\.\(\*Service\)\.Authenticate|internal/ratelimit|redislimit"),
    ("idempotency (request hash, replay lookup)", r"gateway\.RequestHash|gateway\.appendCanonical|gateway\.foundBy|idempotenc"),
    ("creation transaction (grouped write)", r"store\.New\.newPayoutGroup|store\.New\.newInsertGroup|store\.\(\*DB\)\.createPayouts|store\.\(\*DB\)\.insertTransactions"),
    ("webhook bookkeeping (claims, attempts)", r"store\.New\.newFinishGroup|ClaimEvents|finishAttempts|store\.\(\*DB\)\.Claim"),
    ("webhook signing", r"webhooksig|crypto/hmac|fips140/hmac"),
    ("webhook delivery (HTTP client)", r"webhook\.\(\*Dispatcher\)|net/http\.\(\*persistConn\)|net/http\.\(\*Transport\)|net/http\.persistConnWriter"),
    ("settlement", r"gateway\.\(\*Service\)\.(SettleDue|settleBatch)|internal/job\."),
    ("JSON (request, response, event payloads)", r"^encoding/json\.|httpapi\.readJSON|httpapi\.writeJSON"),
    ("creation (request side: checks, rows)", r"gateway\.\(\*Service\)\.(CreatePayout|CreateCharge)"),
    ("request logging and metrics", r"^log/slog\.|httpapi\.\(\*Server\)\.logRequest|prometheus"),
    ("HTTP server and middleware", r"^net/http\.|httpapi\.|^bufio\.|^net\.\(\*conn\)"),
]

PG_RULES = [
    ("webhook outbox (events, attempts)", r"\bevents\b|delivery_attempts"),
    ("settlement (status updates)", r"UPDATE transactions SET status|settle_at <="),
    ("ledger (account updates, postings, entries)", r"accounts|postings|entries"),
    ("creation (transaction rows)", r"INSERT INTO transactions|FROM transactions"),
    ("authentication", r"FROM clients"),
]


def traces(binary, profile):
    out = subprocess.run(["go", "tool", "pprof", "-traces", binary, profile], capture_output=True, text=True, check=True).stdout
    for block in out.split("-----------+-------------------------------------------------------")[1:]:
        lines = [l for l in block.splitlines() if l.strip()]
        if not lines:
            continue
        m = re.match(r"\s*([0-9.]+)(ms|s|us)\s+(.*)", lines[0])
        if not m:
            continue
        v = float(m.group(1)) * {"ms": 1e-3, "s": 1.0, "us": 1e-6}[m.group(2)]
        frames = [m.group(3).strip()] + [l.strip() for l in lines[1:]]
        yield v, frames


def stage(frames):
    # The innermost frame naming a stage decides; the HTTP server's own
    # rule (last) only when no other stage is on the stack, since its
    # frames (net.(*conn), bufio) also carry the database's socket I/O.
    for rules in (SERVER_RULES[:-1], SERVER_RULES[-1:]):
        for f in frames:  # innermost first
            for name, rx in rules:
                if re.search(rx, f):
                    return name
    return "Go runtime (scheduler, netpoll, other)"


def main():
    binary, profile, statements, requests = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    server = collections.Counter()
    for v, frames in traces(binary, profile):
        server[stage(frames)] += v
    pg = collections.Counter()
    for line in open(statements).read().split("\n")[1:]:
        parts = line.split("\t", 2)
        if len(parts) < 3 or not parts[0].isdigit():
            continue
        secs = float(parts[1]) / 1000
        q = parts[2]
        pg[next((n for n, rx in PG_RULES if re.search(rx, q)), "other")] += secs
    us = lambda s: s / requests * 1e6
    print(f"server CPU per request, {requests:.0f} requests: {us(sum(server.values())):.0f} µs")
    for name, s in server.most_common():
        print(f"  {name:45s} {us(s):6.0f} µs  {100 * s / sum(server.values()):4.1f} %")
    print(f"PostgreSQL statement execution time per request: {us(sum(pg.values())):.0f} µs")
    for name, s in pg.most_common():
        print(f"  {name:45s} {us(s):6.0f} µs  {100 * s / sum(pg.values()):4.1f} %")


if __name__ == "__main__":
    main()
