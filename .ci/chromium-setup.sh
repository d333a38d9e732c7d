#!/usr/bin/env bash
# Installs Debian's chromium for the e2e module's browser test of the web page
# (e2e/web_test.go) when /usr/bin/chromium is missing (and AGCORE_CHROMIUM
# names no browser). Idempotent; prints nothing on success, apt-get's output
# on failure.
set -euo pipefail
if [ -x /usr/bin/chromium ] || { [ -n "${AGCORE_CHROMIUM:-}" ] && [ -x "$AGCORE_CHROMIUM" ]; }; then
	exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! { $sudo apt-get update -q && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q chromium; } >"$log" 2>&1; then
	cat "$log" >&2
	echo "chromium-setup: installing chromium failed" >&2
	exit 1
fi
if [ ! -x /usr/bin/chromium ]; then
	echo "chromium-setup: chromium installed but /usr/bin/chromium is missing" >&2
	exit 1
fi
