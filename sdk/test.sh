#!/usr/bin/env bash
# Tests the TypeScript, Python and PHP SDKs against a real pixgate:
#
#   bash sdk/test.sh
#
# It checks with sdk/check-operations that each SDK covers every operation
# of internal/httpapi/openapi.yaml (and that the check fails, naming the
# operation, when one is missing), builds pixgate, starts two
# `pixgate serve` in the sandbox on SQLite in a temp dir (one with a rate
# limit of 5 a minute, for the 429 scenario), runs each SDK's tests against
# them, stops them, and exits non-zero if anything failed. Every suite runs
# even after another failed.
#
# What it needs (CI installs them; a developer machine may already have them):
#   Debian packages:  php-cli php-curl phpunit   (PHP 8.1+, ext-curl, PHPUnit 9.6)
#                     python3                    (3.9+; standard library only)
#                     nodejs npm                 (Node 18+; test/tsclient already needs 20.19+)
#   npm packages:     typescript 5.9.3, @types/node 20.19.43 (dev only, pinned in
#                     sdk/typescript/package-lock.json, installed by `npm ci` below
#                     from the npm registry)
#   and Go, to build pixgate.
# Nothing is installed from PyPI or Packagist: the Python and PHP SDKs have
# no dependency, and their tests use unittest and Debian's phpunit.
set -uo pipefail

sdk=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
root=$(dirname "$sdk")
start=$SECONDS
failed=()

need() {
	command -v "$1" >/dev/null || { echo "sdk/test.sh: $1 is needed ($2)" >&2; exit 1; }
}
need go "to build pixgate"
need node "Node.js 18 or later (Debian: nodejs)"
need npm "Debian: npm"
need python3 "Python 3.9 or later (Debian: python3)"
need php "PHP 8.1 or later (Debian: php-cli)"
need phpunit "Debian: phpunit"
php -r 'exit(PHP_VERSION_ID >= 80100 && extension_loaded("curl") ? 0 : 1);' ||
	{ echo "sdk/test.sh: PHP 8.1+ with the curl extension is needed (Debian: php-cli php-curl)" >&2; exit 1; }
python3 -c 'import sys; sys.exit(sys.version_info < (3, 9))' || { echo "sdk/test.sh: Python 3.9+ is needed" >&2; exit 1; }
node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 18 ? 0 : 1)' || { echo "sdk/test.sh: Node 18+ is needed" >&2; exit 1; }

step() { echo; echo "=== sdk: $1 ==="; }
run() { # run NAME COMMAND...: runs a suite, remembering a failure
	local name=$1; shift
	step "$name"
	local t=$SECONDS
	if "$@"; then
		echo "--- $name: ok ($((SECONDS - t))s)"
	else
		echo "--- $name: FAILED ($((SECONDS - t))s)" >&2
		failed+=("$name")
	fi
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pixgate-sdk.XXXXXX")
pids=()
cleanup() {
	local rc=$?
	for pid in "${pids[@]}"; do
		kill "$pid" 2>/dev/null
	done
	for pid in "${pids[@]}"; do
		wait "$pid" 2>/dev/null
	done
	rm -rf "$tmp"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

check_operations() {
	python3 "$sdk/check-operations" || return 1
	# The check must fail, naming the operation and the event, when the
	# document has one that the SDKs lack.
	sed -e 's/^  \/healthz:$/  \/api\/v1\/gateway\/made-up:\n    post:\n      operationId: createMadeUp\n&/' \
		-e 's/^        - pix\.dispute\.closed$/&\n        - pix.made_up.event/' \
		"$root/internal/httpapi/openapi.yaml" >"$tmp/openapi-extra.yaml"
	local out
	if out=$(python3 "$sdk/check-operations" "$tmp/openapi-extra.yaml" 2>&1); then
		echo "check-operations passed a document with an operation no SDK has" >&2
		return 1
	fi
	for want in "missing operation createMadeUp" "missing event pix.made_up.event"; do
		[[ $(grep -c "$want" <<<"$out") == 3 ]] || { echo "check-operations did not name '$want' for all three SDKs:" >&2; echo "$out" >&2; return 1; }
	done
	echo "check-operations fails on a missing operation or event, naming it: ok"
}
run "check-operations" check_operations

step "build pixgate"
(cd "$root" && go build -o "$tmp/pixgate" ./cmd/pixgate) || { echo "go build failed" >&2; exit 1; }

# serve NAME RATE_LIMIT: starts a sandbox pixgate on SQLite in $tmp/NAME on a
# free port and sets URL_NAME, ID_NAME and SECRET_NAME, WEBHOOK_NAME from the
# credentials it prints on its first start.
serve() {
	local name=$1 limit=$2 dir=$tmp/$1
	mkdir -p "$dir"
	(
		for v in $(compgen -e | grep '^PIXGATE_'); do unset "$v"; done # only the settings below
		cd "$dir" && exec env PIXGATE_ENV=sandbox PIXGATE_ADDR=127.0.0.1:0 PIXGATE_DATABASE_URL="$dir/pixgate.db" \
			PIXGATE_RATE_LIMIT="$limit" PIXGATE_WEBHOOK_ALLOW_PRIVATE=true PIXGATE_SANDBOX_PAYOUT_DELAY=200ms \
			PIXGATE_WEBHOOK_RETRY_SCHEDULE=1s,2s,5s "$tmp/pixgate" serve >"$dir/stdout" 2>"$dir/stderr"
	) &
	pids+=($!)
	local addr="" i
	for ((i = 0; i < 600; i++)); do
		addr=$(sed -n 's/.*"msg":"listening","addr":"\([^"]*\)".*/\1/p' "$dir/stderr" | head -1)
		[[ -n $addr && -s $dir/stdout ]] && break
		kill -0 "${pids[-1]}" 2>/dev/null || break
		sleep 0.1
	done
	if [[ -z $addr ]]; then
		echo "pixgate serve ($name) did not start:" >&2
		cat "$dir/stderr" >&2
		exit 1
	fi
	local creds
	creds=$(head -1 "$dir/stdout")
	field() { python3 -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$creds" "$1"; }
	printf -v "URL_$name" '%s' "http://$addr"
	printf -v "ID_$name" '%s' "$(field client_id)"
	printf -v "SECRET_$name" '%s' "$(field client_secret)"
	printf -v "WEBHOOK_$name" '%s' "$(field webhook_secret)"
	echo "pixgate serve ($name, rate limit $limit/min) at http://$addr"
}
step "start pixgate serve (sandbox, SQLite)"
serve main 100000
serve limited 5

export PIXGATE_SDK_TEST_URL=$URL_main PIXGATE_SDK_TEST_CLIENT_ID=$ID_main
export PIXGATE_SDK_TEST_CLIENT_SECRET=$SECRET_main PIXGATE_SDK_TEST_WEBHOOK_SECRET=$WEBHOOK_main
export PIXGATE_SDK_TEST_LIMITED_URL=$URL_limited PIXGATE_SDK_TEST_LIMITED_CLIENT_ID=$ID_limited
export PIXGATE_SDK_TEST_LIMITED_CLIENT_SECRET=$SECRET_limited
export CI=true # the suites fail, not skip, if the server's settings are missing

typescript() {
	cd "$sdk/typescript" &&
		npm ci --prefer-offline --no-audit --no-fund --loglevel=error &&
		npm run --silent build &&
		npm run --silent typecheck &&
		npm test
}
python_sdk() {
	cd "$sdk/python" && python3 -m unittest discover -v -s tests -t . 2>&1
}
php_sdk() {
	cd "$sdk/php" && phpunit -c phpunit.xml
}
run "typescript" typescript
run "python" python_sdk
run "php" php_sdk

echo
if ((${#failed[@]})); then
	echo "=== sdk: FAILED: ${failed[*]} ($((SECONDS - start))s) ===" >&2
	exit 1
fi
echo "=== sdk: all passed ($((SECONDS - start))s) ==="
