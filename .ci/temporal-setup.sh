#!/usr/bin/env bash
# Builds the Temporal CLI (its dev server runs the temporal/ module's
# end-to-end tests and benchmark) into a cache directory if it is not there
# yet, and prints the environment variable the tests read:
#
#   eval "$(.ci/temporal-setup.sh)"    # then: (cd temporal && go test ./...)
#
# The build needs only the Go module proxy and takes a few minutes the
# first time. AGCORE_CACHE overrides the cache directory (default
# $XDG_CACHE_HOME/agcore or ~/.cache/agcore).
set -euo pipefail
version="v1.5.1"
cache="${AGCORE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/agcore}"
bin="$cache/bin/temporal"
if [ ! -x "$bin" ]; then
	mkdir -p "$cache/bin"
	echo "temporal-setup: building the Temporal CLI $version into $cache/bin" >&2
	GOBIN="$cache/bin" go install "github.com/temporalio/cli/cmd/temporal@$version" >&2
fi
"$bin" --version >/dev/null
echo "export AGCORE_TEMPORAL_CLI=$bin"
