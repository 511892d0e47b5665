#!/bin/sh
# The cnt demo: admit a day of example events into the log and read the log
# back, as an operator or analyst would.
#
#   make demo                      (builds the tools first)
#   BUILD=build-san sh examples/demo.sh
#
# Input: examples/events.jsonl (30 raw events for the tenants and counters
# of examples/definitions.json, with two client retries and three events
# that admission must refuse).  Every file is written to a temporary
# directory that is removed at exit (CNT_DEMO_DIR=DIR keeps them in DIR
# instead; examples/check.sh uses that).  --now fixes the ingest time, so
# the output is the same on every run and every machine.
set -eu
cd "$(dirname "$0")/.."

BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD="$PWD/$BUILD" ;; esac
BIN="$BUILD/bin"
NOW=2026-11-30T09:00:00Z
DEFS=examples/definitions.json
EVENTS=examples/events.jsonl

for t in cnt-ingest cnt-cat; do
	if [ ! -x "$BIN/$t" ]; then
		echo "demo: $BIN/$t is missing: run 'make' first" >&2
		exit 2
	fi
done
if ! command -v jq >/dev/null 2>&1; then
	echo "demo: jq is missing: run ./scripts/install-deps.sh" >&2
	exit 2
fi

if [ -n "${CNT_DEMO_DIR:-}" ]; then
	dir=$CNT_DEMO_DIR
	mkdir -p "$dir"
else
	dir=$(mktemp -d "${TMPDIR:-/tmp}/cnt-demo.XXXXXX")
	trap 'rm -rf "$dir"' EXIT
	trap 'exit 130' INT TERM
fi

section() {
	printf '\n== %s\n' "$1"
}

section "1. Admit $EVENTS (ingest time fixed at $NOW)"
echo "\$ cnt-ingest -d $DEFS --now $NOW -o archive.avro -r rejects.jsonl -D duplicates.jsonl --stats stats.json -v $EVENTS"
"$BIN/cnt-ingest" -d "$DEFS" --now "$NOW" -o "$dir/archive.avro" -r "$dir/rejects.jsonl" \
	-D "$dir/duplicates.jsonl" --stats "$dir/stats.json" -v "$EVENTS" 2>&1

section "2. The first three admitted events (cnt-cat --head 3 --iso-time)"
"$BIN/cnt-cat" --head 3 --iso-time "$dir/archive.avro"

section "3. How many events the archive holds (cnt-cat --count)"
"$BIN/cnt-cat" --count "$dir/archive.avro"

section "4. Per counter: events admitted and what they add up to (cnt-cat | jq)"
"$BIN/cnt-cat" "$dir/archive.avro" |
	jq -rs --slurpfile defs "$DEFS" '
		def vtype($e): first($defs[0].counters[] | select(.tenant_id == $e.tenant_id and .counter_id == $e.counter_id)
			| .versions[] | select(.version == $e.counter_version) | .type);
		group_by([.tenant_id, .counter_id]) | .[] | vtype(.[0]) as $t |
		"\(.[0].tenant_id)/\(.[0].counter_id) v\(.[0].counter_version) (\($t)): \(length) events, " +
		(if $t == "exact" then "sum \(map(.delta) | add)"
		 elif $t == "min" then "min \(map(.delta) | min)"
		 elif $t == "max" then "max \(map(.delta) | max)"
		 else "\(map(.item) | unique | length) distinct items" end)'

section "5. Rejected: typed reason, position and message (rejects.jsonl)"
jq -r '"line \(.line): \(.reason) (field \(.field)): \(.message)"' "$dir/rejects.jsonl"

section "6. Duplicates: client retries of events already admitted (duplicates.jsonl)"
jq -r '"line \(.line): duplicate of line \(.duplicate_of.line): \(.message)"' "$dir/duplicates.jsonl"

section "7. Every record accounted for (stats.json)"
jq -r '"in \(.in) = out \(.out) + rejected \(.rejected) + duplicate \(.duplicate): balanced \(.balanced)",
	"dedup hit rate \(.dedup_hit_rate)"' "$dir/stats.json"

section "8. The same events as CSV (cnt-cat --format csv --head 2)"
"$BIN/cnt-cat" --format csv --head 2 "$dir/archive.avro"

section "9. The container header (cnt-cat --meta, metadata left out)"
(cd "$dir" && "$BIN/cnt-cat" --meta archive.avro) | jq -c 'del(.metadata)'

section "10. Archives concatenate: cat archive.avro archive.avro | cnt-cat --count"
cat "$dir/archive.avro" "$dir/archive.avro" | "$BIN/cnt-cat" --count

section "11. Admission is deterministic: the same input gives the same bytes"
"$BIN/cnt-ingest" -d "$DEFS" --now "$NOW" -o "$dir/again.avro" -r /dev/null "$EVENTS"
if cmp -s "$dir/archive.avro" "$dir/again.avro"; then
	echo "archive.avro and again.avro are identical"
else
	echo "archive.avro and again.avro DIFFER"
	exit 1
fi
