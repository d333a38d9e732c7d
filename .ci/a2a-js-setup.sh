#!/usr/bin/env bash
# Installs the A2A project's JavaScript SDK (the @a2a-js/sdk npm package,
# pinned) into .ci/a2a-js (git-ignored) for the A2A client tests of agcore
# serve (cmd/agcore), and prints the environment variable they read:
#
#   eval "$(.ci/a2a-js-setup.sh)"    # then: go test ./cmd/agcore/
#
# With CI set, the tests fail instead of skipping when the SDK is missing.
# Needs node (18 or newer) and npm; the npm registry must be reachable. The
# 0.3 line speaks A2A protocol 0.3.0, the version agcore's server (a2a-go
# v0.3.3) implements; 1.x speaks protocol 1.0.
set -euo pipefail
cd "$(dirname "$0")/.."
version="0.3.14"
dir="$PWD/.ci/a2a-js"
pkgjson="$dir/node_modules/@a2a-js/sdk/package.json"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	echo "a2a-js-setup: node and npm are needed to install @a2a-js/sdk@$version" >&2
	exit 1
fi
if [ ! -f "$pkgjson" ] || ! grep -q "\"version\": \"$version\"" "$pkgjson"; then
	mkdir -p "$dir"
	# Its server side's optional peers (express, grpc) are not used.
	npm install --prefix "$dir" --no-audit --no-fund --legacy-peer-deps --loglevel=error "@a2a-js/sdk@$version" >&2
fi
test -f "$pkgjson"
echo "export AGCORE_A2A_JS_DIR=$dir"
