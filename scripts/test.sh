#!/usr/bin/env bash
# Usage: bash scripts/test.sh
#
# The full test suite as CI runs it, each package once: under the race
# detector every package that runs goroutines over shared state, plainly
# the few whose code and tests are pure or sequential (listed below with
# their reason), whose -race run would only rebuild and rerun them slowly.
# It needs what the suite needs (PIXGATE_TEST_POSTGRES_URL and the others,
# README.md's Tests); `go test -count=1 -timeout 12m ./...` runs the same
# tests without the race detector.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

race_skip=(
	github.com/pixgate/pixgate/internal/pix     # domain values and validation
	github.com/pixgate/pixgate/internal/brcode  # BR Code build/parse, CRC
	github.com/pixgate/pixgate/internal/ledger  # posting rules
	github.com/pixgate/pixgate/internal/config  # flag/env parsing, Validate
	github.com/pixgate/pixgate/webhooksig       # signature verification
	github.com/pixgate/pixgate/internal/qr      # pure but for its sync.Pools: TestConcurrent is raced too (below)
	github.com/pixgate/pixgate/internal/httpapi # over 12 min under -race on 2 cores: its concurrent cases are raced too, by name (below)
	github.com/pixgate/pixgate/cmd/pixgate-bench/internal/bench # drives real serve processes under load; -race slows the loaded box past its settle bound
	github.com/pixgate/pixgate/internal/store/sqlite # the same store suites are raced on store/postgres; here -race instruments the transpiled SQLite engine (5 s → 100 s)
)
all_pkgs=$(go list ./...)
for p in "${race_skip[@]}"; do
	grep -qxF "$p" <<<"$all_pkgs" || echo "warning: scripts/test.sh race_skip names $p, which no longer exists" >&2
done
# Derived from go list: a new package is raced until someone lists it here.
mapfile -t race_pkgs < <(grep -vxF -f <(printf '%s\n' "${race_skip[@]}") <<<"$all_pkgs")
# go test starts packages in the order given, two at a time on two cores:
# the longest first, so that none of them starts last and runs alone.
long=(
	github.com/pixgate/pixgate/test/e2e
	github.com/pixgate/pixgate/internal/admin
	github.com/pixgate/pixgate/internal/gateway
	github.com/pixgate/pixgate/internal/sim
	github.com/pixgate/pixgate/internal/webhook
)
mapfile -t race_pkgs < <(printf '%s\n' "${long[@]}"; grep -vxF -f <(printf '%s\n' "${long[@]}") < <(printf '%s\n' "${race_pkgs[@]}"))

echo "== go test (${#race_skip[@]} packages without -race)"
go test -count=1 -timeout 12m "${race_skip[@]}"
echo "== go test -race (${#race_pkgs[@]} packages)"
go test -race -count=1 -timeout 12m "${race_pkgs[@]}"
# qr's rendering is sequential except for the pools every request shares:
# TestConcurrent alone exercises them (its whole suite takes ~70 s with -race).
go test -race -count=1 -timeout 5m -run '^TestConcurrent$' ./internal/qr/
# httpapi's suite is sequential request/answer checks but for these: the
# concurrent requests (charges, payouts, refunds, transfers, split refunds
# against payouts), the settlement racing another node, the limiters and
# Redis, the connection framer, the clock's background runs and the webhook
# test's sender.
go test -race -count=1 -timeout 10m -run '^Test(Concurrent.*|RandomConcurrentMix|TransfersConcurrent|SplitRefundRacesPayouts|SettlementRaceWithAnotherNode|RateLimit|Redis.*|FramerSplitAnywhere|SandboxClock(ExpiresCharges|SettlesPayouts|Recurrences)|WebhookTestEndpoint)$' ./internal/httpapi/
