#!/usr/bin/env bash
# Tools the test suite runs besides Node, PostgreSQL and Redis, installed from Debian's packages
# when missing: HAProxy, the real load balancer of test/scale/load-balancer.integration-test.ts.
# Idempotent: with everything present it only checks. Run by `pnpm test` (pretest) and .ci/run.
set -euo pipefail

missing=()
# Debian puts haproxy in /usr/sbin, which is not on every user's PATH.
command -v haproxy >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ] || missing+=(haproxy)

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1; then
  sudo=(sudo -n)
else
  echo "error: ${missing[*]} missing and not root (no sudo): install the Debian package(s) ${missing[*]}" >&2
  exit 1
fi

echo "==> installing ${missing[*]} (Debian packages)"
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
