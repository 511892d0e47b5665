#!/bin/sh
# The cnt demo: admit a day of example events into the log, read the log
# back, as an operator or analyst would, then count it: cnt-dedup |
# cnt-window | cnt-accumulate into a bucket file, whose rebuild - whole, or
# in parts that are merged - gives the same bytes; and end with a
# leaderboard: cnt-project builds and publishes the ranked view of the
# example board from that bucket file, cnt-rank answers from it.
#
#   make demo                      (builds the tools first)
#   BUILD=build-san sh examples/demo.sh
#
# Input: examples/events.jsonl (30 raw events for the tenants and counters
# of examples/definitions.json, with two client retries and three events
# that admission must refuse).  Every file is written to $BUILD/demo
# (build/demo; emptied first, kept afterwards so that the archive, bucket
# file and views it describes can be looked at; make clean removes it), or
# to CNT_DEMO_DIR=DIR, which must be new or empty (examples/check.sh uses
# that).  The demo says where at its start and its end.  --now fixes the
# ingest time, so the output is the same on every run and every machine.
set -eu
cd "$(dirname "$0")/.."

BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD="$PWD/$BUILD" ;; esac
BIN="$BUILD/bin"
NOW=2026-11-30T09:00:00Z
DEFS=examples/definitions.json
EVENTS=examples/events.jsonl
# the signing keys of the events' client-origin events (cnt-keyring(5))
KEYRING=examples/keyring.json

for t in cnt-ingest cnt-cat cnt-dedup cnt-window cnt-accumulate cnt-diff cnt-project cnt-rank; do
	if [ ! -x "$BIN/$t" ]; then
		echo "demo: $BIN/$t is missing: run 'make' first" >&2
		exit 2
	fi
done
if ! command -v jq >/dev/null 2>&1; then
	echo "demo: jq is missing: run ./scripts/install-deps.sh" >&2
	exit 2
fi

# A fresh directory: the dedup state and the views of an earlier run would
# change what the demo shows.
if [ -n "${CNT_DEMO_DIR:-}" ]; then
	dir=$CNT_DEMO_DIR
	if [ -d "$dir" ] && [ -n "$(ls -A "$dir")" ]; then
		echo "demo: CNT_DEMO_DIR '$dir' is not empty; give a new or empty directory" >&2
		exit 2
	fi
	mkdir -p "$dir"
else
	dir="$BUILD/demo"
	rm -rf "$dir"
	mkdir -p "$dir"
fi
# Where the files are, as the reader would type it (relative to the
# repository when inside it).
case $dir in
"$PWD"/*) shown=${dir#"$PWD"/} ;;
*) shown=$dir ;;
esac
echo "cnt demo: the files it writes are kept in $shown"
# The man pages' EXAMPLES run in this directory, with examples/ beside it.
ln -s "$PWD/examples" "$dir/examples"

section() {
	printf '\n== %s\n' "$1"
}

section "1. Admit $EVENTS (ingest time fixed at $NOW)"
echo "\$ cnt-ingest -d $DEFS --keyring $KEYRING --now $NOW -o archive.avro -r rejects.jsonl -D duplicates.jsonl --stats stats.json -v $EVENTS"
"$BIN/cnt-ingest" -d "$DEFS" --keyring "$KEYRING" --now "$NOW" -o "$dir/archive.avro" -r "$dir/rejects.jsonl" \
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
jq -r '"in \(.in) = out \(.out) + rejected \(.rejected) + duplicates \(.duplicates): balanced \(.balanced)",
	"dedup hit rate \(.dedup_hit_rate)"' "$dir/stats.json"

section "8. The same events as CSV (cnt-cat --output-format csv --head 2)"
"$BIN/cnt-cat" --output-format csv --head 2 "$dir/archive.avro"

section "9. The container header (cnt-cat --meta, metadata left out)"
(cd "$dir" && "$BIN/cnt-cat" --meta archive.avro) | jq -c 'del(.metadata)'

section "10. Archives concatenate: cat archive.avro archive.avro | cnt-cat --count"
cat "$dir/archive.avro" "$dir/archive.avro" | "$BIN/cnt-cat" --count

section "11. Admission is deterministic: the same input gives the same bytes"
"$BIN/cnt-ingest" -d "$DEFS" --keyring "$KEYRING" --now "$NOW" -o "$dir/again.avro" -r /dev/null "$EVENTS"
if cmp -s "$dir/archive.avro" "$dir/again.avro"; then
	echo "archive.avro and again.avro are identical"
else
	echo "archive.avro and again.avro DIFFER"
	exit 1
fi

section "12. Count: cnt-dedup | cnt-window | cnt-accumulate into a bucket file"
echo "\$ cnt-dedup -d $DEFS -s dedup.state -D dropped.avro -v archive.avro |"
echo "    cnt-window -d $DEFS --stats window.json -v | cnt-accumulate -o buckets.avro -v"
{
	"$BIN/cnt-dedup" -d "$DEFS" -s "$dir/dedup.state" -D "$dir/dropped.avro" -v "$dir/archive.avro" |
		"$BIN/cnt-window" -d "$DEFS" --stats "$dir/window.json" -v |
		"$BIN/cnt-accumulate" -o "$dir/buckets.avro" -v
} 2>&1

section "13. Dropped by cnt-dedup: a second view by the same viewer (dedup_key item_member)"
"$BIN/cnt-cat" "$dir/dropped.avro" |
	jq -r '"\(.tenant_id)/\(.counter_id): \(.item) viewed \(.member_ref) again (idempotency_key \(.idempotency_key))"'

section "14. Late events, kept apart (window.json)"
jq -r '.counters[] | "\(.tenant_id)/\(.counter_id): \(.late) of \(.in) late"' "$dir/window.json"

section "15. The first three bucket records (cnt-cat --iso-time --head 3)"
"$BIN/cnt-cat" --iso-time --head 3 "$dir/buckets.avro"

section "16. Per counter, from the bucket file: on-time + late events and sums"
"$BIN/cnt-cat" "$dir/buckets.avro" |
	jq -rs 'group_by([.tenant_id, .counter_id]) | .[] |
		"\(.[0].tenant_id)/\(.[0].counter_id): \(length) bucket records, " +
		"events \(map(.count) | add) + \(map(.late_count) | add) late, " +
		"sum \(map(.sum) | add) + \(map(.late_sum) | add) late"'

section "17. The dedup state spans runs: the same archive again is all duplicates"
"$BIN/cnt-dedup" -d "$DEFS" -s "$dir/dedup.state" -o /dev/null -v "$dir/archive.avro" 2>&1

section "18. A rebuild from the archive, without state, gives the same bytes"
"$BIN/cnt-dedup" -d "$DEFS" "$dir/archive.avro" | "$BIN/cnt-window" -d "$DEFS" |
	"$BIN/cnt-accumulate" -o "$dir/rebuilt.avro"
rc=0
"$BIN/cnt-diff" "$dir/buckets.avro" "$dir/rebuilt.avro" || rc=$?
echo "cnt-diff buckets.avro rebuilt.avro: exit status $rc"
if cmp -s "$dir/buckets.avro" "$dir/rebuilt.avro"; then
	echo "buckets.avro and rebuilt.avro are identical"
else
	echo "buckets.avro and rebuilt.avro DIFFER"
	exit 1
fi

section "19. In two parts, each admitted and counted on its own, then merged"
head -n 15 "$EVENTS" >"$dir/part1.jsonl"
tail -n +16 "$EVENTS" >"$dir/part2.jsonl"
for p in 1 2; do
	"$BIN/cnt-ingest" -d "$DEFS" --keyring "$KEYRING" --now "$NOW" -r /dev/null "$dir/part$p.jsonl" |
		"$BIN/cnt-dedup" -d "$DEFS" -s "$dir/parts.state" | "$BIN/cnt-window" -d "$DEFS" |
		"$BIN/cnt-accumulate" -o "$dir/part$p.buckets.avro"
done
echo "\$ cnt-accumulate -o merged.avro part2.buckets.avro part1.buckets.avro"
"$BIN/cnt-accumulate" -o "$dir/merged.avro" "$dir/part2.buckets.avro" "$dir/part1.buckets.avro"
rc=0
"$BIN/cnt-diff" "$dir/buckets.avro" "$dir/merged.avro" || rc=$?
echo "cnt-diff buckets.avro merged.avro: exit status $rc"
if cmp -s "$dir/buckets.avro" "$dir/merged.avro"; then
	echo "buckets.avro and merged.avro are identical"
else
	echo "buckets.avro and merged.avro DIFFER"
	exit 1
fi

section "20. Merging adds: a bucket file merged with itself has every sum doubled"
"$BIN/cnt-accumulate" -o "$dir/doubled.avro" "$dir/buckets.avro" "$dir/buckets.avro"
rc=0
"$BIN/cnt-diff" -q --stats "$dir/diff.json" "$dir/buckets.avro" "$dir/doubled.avro" || rc=$?
echo "cnt-diff -q buckets.avro doubled.avro: exit status $rc"
jq -r '"\(.changed) of \(.left) records changed, \(.only_left + .only_right) keys on one side only"' "$dir/diff.json"

BOARD=acme-30d-distance
section "21. Rank: cnt-project builds the view of $BOARD (distance, last 30 days in Berlin) and publishes it"
echo "\$ cnt-project -d $DEFS -b $BOARD -w views --now $NOW -v buckets.avro"
rm -rf "$dir/views"   # a fresh view directory: version 1 on every run
"$BIN/cnt-project" -d "$DEFS" -b "$BOARD" -w "$dir/views" --now "$NOW" -v "$dir/buckets.avro" 2>&1
echo "views/$BOARD/global/current -> $(readlink "$dir/views/$BOARD/global/current")"

section "22. The leaderboard: the top 10, with version and as-of (cnt-rank -F table top 10)"
echo "\$ cnt-rank -w views -b $BOARD --now $NOW -F table top 10"
"$BIN/cnt-rank" -w "$dir/views" -b "$BOARD" --now "$NOW" -F table top 10

section "23. One member's rank (cnt-rank rank m-1042)"
echo "\$ cnt-rank -w views -b $BOARD --now $NOW rank m-1042"
"$BIN/cnt-rank" -w "$dir/views" -b "$BOARD" --now "$NOW" rank m-1042

section "The demo's files, kept in $shown"
(cd "$dir" && ls -C -F)
echo "(for example: cnt-cat --iso-time $shown/buckets.avro)"
