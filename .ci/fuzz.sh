#!/usr/bin/env bash
# Runs every fuzz target of the module for a short fixed time each, so CI
# exercises the parsers with fresh inputs on every run; the committed seed
# corpora (testdata/fuzz/<FuzzName>/) run in the ordinary tests too.
#
# Usage: .ci/fuzz.sh [fuzztime]      fuzztime per target, default 5s
#        FUZZTIME=30s .ci/fuzz.sh    the same through the environment
#
# A target that fails writes its input to the package's testdata/fuzz/
# directory: commit it (it becomes a regression seed) with the fix.
# The script also fails when a Fuzz function exists that is not listed
# below, so a new parser's target cannot be forgotten.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime="${1:-${FUZZTIME:-5s}}"

targets=(
	"./internal/sse FuzzDecoder"
	"./internal/httpx FuzzParseRetryAfter"
	"./internal/httpx FuzzBaseURL"
	"./internal/httpx FuzzMergeExtra"
	"./internal/jsonscan FuzzScanner"
	"./llm FuzzMessageDecode"
	"./llm FuzzDecodeMatchesReference"
	"./llm FuzzMarshalMatchesReference"
	"./session/internal/stored FuzzEncodeTurnBytes"
	"./provider/openai FuzzChunkParsers"
	"./provider/openai FuzzStream"
	"./provider/openai FuzzResponse"
	"./provider/openai FuzzErrorBody"
	"./provider/openai/responses FuzzEventParsers"
	"./provider/openai/responses FuzzStream"
	"./provider/openai/responses FuzzResponse"
	"./provider/openai/responses FuzzErrorBody"
	"./provider/openai FuzzRequestEncoder"
	"./provider/anthropic FuzzStreamParser"
	"./provider/anthropic FuzzResponseParser"
	"./provider/anthropic FuzzFastPathMatchesEncodingJSON"
	"./provider/anthropic FuzzErrorBody"
	"./provider/gemini FuzzStreamParser"
	"./provider/gemini FuzzResponseParser"
	"./provider/gemini FuzzFastPathMatchesEncodingJSON"
	"./provider/gemini FuzzErrorBody"
	"./session FuzzValidateID"
	"./session/filestore FuzzSessionLog"
	"./session/postgres FuzzByteaArray"
	"./tool FuzzToolArguments"
	"./tool/fstool FuzzPathsStayInTheRoot"
	"./compact FuzzRepair"
	"./compact FuzzEstimate"
	"./cmd/agcore/internal/config FuzzConfigFile"
	"./cmd/agcore/internal/config FuzzExpandHeaders"
	"./serve FuzzTextChunkEncoding"
	"./internal/jsonw FuzzAppendString"
	"./replay FuzzParse"
	"./replay FuzzAppend"
	"./structured FuzzCompleteJSON"
	"./structured FuzzAnswer"
	"./eval FuzzParse"
	"./eval FuzzParseADK"
	"./eval FuzzParseADKConfig"
	"./eval FuzzRouge1"
)

# The list is checked in both directions: every Fuzz function in the module
# (bench/ is another module) is listed with its package, and every listed
# target exists in the package it is listed for (a stale name would print
# "no fuzz tests to fuzz" and pass).
listed=$(printf '%s\n' "${targets[@]}" | sed 's|^\./||' | sort)
found=$(git ls-files '*_test.go' | grep -v '^bench/' | xargs grep -o '^func Fuzz[A-Za-z0-9_]*' |
	sed -E 's|^(.*)/[^/]*_test\.go:func |\1 |; s|^[^/ ]*_test\.go:func |. |' | sort -u)
missing=$(comm -13 <(echo "$listed") <(echo "$found"))
stale=$(comm -23 <(echo "$listed") <(echo "$found"))
if [ -n "$missing" ]; then
	echo "fuzz targets not listed in .ci/fuzz.sh:"; echo "$missing"
	exit 1
fi
if [ -n "$stale" ]; then
	echo "fuzz targets listed in .ci/fuzz.sh that do not exist:"; echo "$stale"
	exit 1
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
failed=()
for entry in "${targets[@]}"; do
	read -r pkg name <<<"$entry"
	for try in 1 2; do
		echo "== $name ($pkg, $fuzztime)"
		if go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" "$pkg" >"$log" 2>&1; then
			tail -n 2 "$log"
			break
		fi
		# Go's fuzzing coordinator can fail a clean run with "context deadline
		# exceeded" and no failing input (a race in internal/fuzz); retry
		# such a run once. Anything else is a finding.
		if [ "$try" = 1 ] && grep -q 'context deadline exceeded' "$log" && ! grep -q 'Failing input written' "$log"; then
			echo "   (fuzzing coordinator hiccup, retrying)"
			continue
		fi
		cat "$log"
		failed+=("$name")
		break
	done
done
if [ ${#failed[@]} -gt 0 ]; then
	echo "fuzz targets failed: ${failed[*]}"
	exit 1
fi
echo "all ${#targets[@]} fuzz targets ran $fuzztime each"
