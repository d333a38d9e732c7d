#!/usr/bin/env bash
# Installs the MCP project's conformance suite (@modelcontextprotocol/
# conformance, pinned) into .ci/mcp-conformance (git-ignored), and prints
# the environment variable the conformance tests read
# (internal/testkit/mcpconformance):
#
#   eval "$(.ci/mcp-conformance-setup.sh)"   # then: go test ./internal/testkit/mcpconformance
#
# With AGCORE_MCP_CONFORMANCE_DIR set, those tests fail instead of skipping
# when the suite is missing. Needs node and npm; the npm registry must be
# reachable.
#
# Why 0.1.13: it is the newest release that runs on this machine's Node 20.
# 0.1.14 and later import fs.globSync, which Node 22 added, and stop at
# startup with "The requested module 'fs' does not provide an export named
# 'globSync'". 0.1.10 runs too, but its tools_call scenario serves every
# request with one SDK Server, which the TypeScript SDK 1.26 and later
# refuse to connect twice ("Already connected to a transport"), so no
# client passes it; 0.1.13 makes a server per request, and adds scenarios
# (pre-registration, resource-mismatch, dns-rebinding-protection).
#
# The TypeScript SDK the suite runs its servers and clients on is pinned
# too (an npm override), so that a new SDK release cannot change what the
# pinned suite does, as 1.26 did to 0.1.10.
set -euo pipefail
cd "$(dirname "$0")/.."
version="0.1.13"
sdk="1.32.2"
dir="$PWD/.ci/mcp-conformance"
entry="$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	echo "mcp-conformance-setup: node and npm are needed to install @modelcontextprotocol/conformance@$version" >&2
	exit 1
fi
if [ ! -f "$entry" ] || ! grep -q "\"version\": \"$version\"" "$dir/node_modules/@modelcontextprotocol/conformance/package.json" \
	|| ! grep -q "\"version\": \"$sdk\"" "$dir/node_modules/@modelcontextprotocol/sdk/package.json"; then
	rm -rf "$dir"
	mkdir -p "$dir"
	cat >"$dir/package.json" <<JSON
{
  "private": true,
  "dependencies": {"@modelcontextprotocol/conformance": "$version"},
  "overrides": {"@modelcontextprotocol/sdk": "$sdk"}
}
JSON
	npm install --prefix "$dir" --no-audit --no-fund --loglevel=error >&2
fi
node "$entry" list >/dev/null
echo "export AGCORE_MCP_CONFORMANCE_DIR=$dir"
