#!/usr/bin/env bash
# Installs the Debian packages the test suite needs, only when missing:
#   postgresql     (initdb/pg_ctl under /usr/lib/postgresql/*/bin)
#   redis-server   (redis-server, redis-cli)
#   chromium       (/usr/bin/chromium)
#   php-cli, php-curl, phpunit, python3   (the SDKs' tests: sdk/test.sh)
# Idempotent: does nothing (and never touches the network) when all are
# present; otherwise runs at most one `apt-get update` and one install.
set -euo pipefail

missing=()
if ! compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null; then
	missing+=(postgresql)
fi
if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
	missing+=(redis-server)
fi
if [[ ! -x /usr/bin/chromium ]]; then
	missing+=(chromium)
fi
if ! command -v php >/dev/null || ! php -r 'exit(extension_loaded("curl") ? 0 : 1);' 2>/dev/null; then
	missing+=(php-cli php-curl)
fi
if ! command -v phpunit >/dev/null; then
	missing+=(phpunit)
fi
if ! command -v python3 >/dev/null; then
	missing+=(python3)
fi

if ((${#missing[@]} == 0)); then
	echo "install-deps: postgresql, redis-server, chromium, php and python3 already installed" >&2
	exit 0
fi

sudo=()
if [[ $(id -u) -ne 0 ]]; then
	if command -v sudo >/dev/null; then
		sudo=(sudo)
	else
		echo "install-deps: missing ${missing[*]} and not root (no sudo)" >&2
		exit 1
	fi
fi

echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive

# Keep package post-install scripts from starting system-wide daemons
# (a default "main" cluster on :5432, redis on :6379): the tests start their
# own servers on private Unix sockets. Only done when no policy exists.
policy=/usr/sbin/policy-rc.d
created_policy=
if [[ ! -e $policy ]]; then
	printf '#!/bin/sh\nexit 101\n' | "${sudo[@]}" tee "$policy" >/dev/null
	"${sudo[@]}" chmod 755 "$policy"
	created_policy=1
fi
cleanup() {
	if [[ -n $created_policy ]]; then
		"${sudo[@]}" rm -f "$policy"
	fi
}
trap cleanup EXIT

apt_opts=(-q -o Dpkg::Use-Pty=0 -o DPkg::Lock::Timeout=300)
"${sudo[@]}" apt-get "${apt_opts[@]}" update -qq
"${sudo[@]}" apt-get "${apt_opts[@]}" install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

# Verify the result instead of trusting apt's exit status alone.
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || { echo "install-deps: initdb not found after install" >&2; exit 1; }
command -v redis-server >/dev/null && command -v redis-cli >/dev/null || { echo "install-deps: redis not found after install" >&2; exit 1; }
[[ -x /usr/bin/chromium ]] || { echo "install-deps: /usr/bin/chromium not found after install" >&2; exit 1; }
command -v php >/dev/null && command -v phpunit >/dev/null && command -v python3 >/dev/null || { echo "install-deps: php, phpunit or python3 not found after install" >&2; exit 1; }
echo "install-deps: done" >&2
