#!/usr/bin/env bash
# Installs the AG-UI protocol's TypeScript client (the @ag-ui/client npm
# package, pinned) into .ci/agui-client (git-ignored) for the AG-UI tests of
# agcore serve (cmd/agcore), and prints the environment variable they read:
#
#   eval "$(.ci/agui-client-setup.sh)"    # then: go test ./cmd/agcore/
#
# With CI set, the tests fail instead of skipping when the SDK is missing.
# Needs node (18 or newer) and npm; the npm registry must be reachable.
set -euo pipefail
cd "$(dirname "$0")/.."
version="0.0.42"
dir="$PWD/.ci/agui-client"
pkgjson="$dir/node_modules/@ag-ui/client/package.json"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	echo "agui-client-setup: node and npm are needed to install @ag-ui/client@$version" >&2
	exit 1
fi
if [ ! -f "$pkgjson" ] || ! grep -q "\"version\": \"$version\"" "$pkgjson"; then
	mkdir -p "$dir"
	npm install --prefix "$dir" --no-audit --no-fund --legacy-peer-deps --loglevel=error "@ag-ui/client@$version" >&2
fi
test -f "$pkgjson"
echo "export AGCORE_AGUI_CLIENT_DIR=$dir"
