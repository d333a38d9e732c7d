#!/usr/bin/env bash
# Installs OpenAI's official Node SDK (the openai npm package, pinned) into
# .ci/openai-node (git-ignored) for package serve's client tests, and prints
# the environment variable they read:
#
#   eval "$(.ci/openai-node-setup.sh)"    # then: go test ./serve/ ./cmd/agcore/
#
# With CI set, the tests fail instead of skipping when the SDK is missing.
# Needs node (20 or newer) and npm; the npm registry must be reachable. The
# 6.x line is the newest that runs on Node 20 (7.x wants Node 22).
set -euo pipefail
cd "$(dirname "$0")/.."
version="6.49.0"
dir="$PWD/.ci/openai-node"
pkgjson="$dir/node_modules/openai/package.json"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	echo "openai-node-setup: node and npm are needed to install openai@$version" >&2
	exit 1
fi
if [ ! -f "$pkgjson" ] || ! grep -q "\"version\": \"$version\"" "$pkgjson"; then
	mkdir -p "$dir"
	# The SDK's peer dependencies (AWS signing, zod, ws) are optional extras
	# the tests do not use.
	npm install --prefix "$dir" --no-audit --no-fund --legacy-peer-deps --loglevel=error "openai@$version" >&2
fi
test -f "$pkgjson"
echo "export AGCORE_OPENAI_NODE_DIR=$dir"
