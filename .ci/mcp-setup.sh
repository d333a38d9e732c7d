#!/usr/bin/env bash
# Installs the MCP server the mcp package's integration tests run against
# (@modelcontextprotocol/server-everything, pinned) into .ci/mcp-server
# (git-ignored), and prints the environment variable the tests read:
#
#   eval "$(.ci/mcp-setup.sh)"    # then: go test ./mcp/...
#
# With AGCORE_MCP_SERVER_DIR set, the integration tests fail instead of
# skipping when the server is missing. Needs node and npm; the npm registry
# must be reachable.
set -euo pipefail
cd "$(dirname "$0")/.."
pkg="@modelcontextprotocol/server-everything@2026.8.31"
dir="$PWD/.ci/mcp-server"
entry="$dir/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	echo "mcp-setup: node and npm are needed to install $pkg" >&2
	exit 1
fi
if [ ! -f "$entry" ] || ! grep -q '"version": "2026.8.31"' "$dir/node_modules/@modelcontextprotocol/server-everything/package.json"; then
	mkdir -p "$dir"
	npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "$pkg" >&2
fi
test -f "$entry"
echo "export AGCORE_MCP_SERVER_DIR=$dir"
