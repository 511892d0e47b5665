# Helpers shared by tests/project.bats and tests/rank.bats.  Sourced with
# `load data/views/common`.  See README for the data.

VDATA="$BATS_TEST_DIRNAME/data/views"
DEFS="$VDATA/defs.json"
PY=/usr/bin/python3
# Events of the ranking files are admitted at INGEST_NOW: that is the as-of
# of every view built from them.
INGEST_NOW=2026-03-01T12:00:00Z
INGEST_NOW_MS=1772366400000

# buckets JSONL OUT [INGEST_NOW [SHARDS]]: the counting pipeline, from raw
# JSON lines to a bucket file; fails unless every line is admitted.
buckets() {
	local st=$BATS_TEST_TMPDIR/ingest-stats.$$.json
	cnt-ingest -d "$DEFS" --now "${3:-$INGEST_NOW}" --max-past 400d -o "$2.events" --stats "$st" "$1" &&
		jq -e '.rejected == 0 and .duplicates == 0' "$st" >/dev/null &&
		cnt-dedup -d "$DEFS" "$2.events" | cnt-window -d "$DEFS" --shards "${4:-1}" | cnt-accumulate -o "$2"
}

# events JSONL OUT [INGEST_NOW]: admitted events (the log segment).
events() {
	cnt-ingest -d "$DEFS" --now "${3:-$INGEST_NOW}" --max-past 400d -o "$2" "$1"
}

# desc DIR: the view description (index header = view.avro header) of the
# view version directory DIR, as read from view.avro by cnt-cat.
desc() {
	cnt-cat --meta "$1/view.avro" | jq -c '.metadata["cnt.view"] | fromjson'
}

# members DIR: "member:rank:value" of the head in view.avro, in order.
members() {
	cnt-cat "$1/view.avro" | jq -r '"\(.member_ref):\(.rank):\(.value)"' | paste -sd' ' -
}

# one [jq options] FILTER [FILE...]: the input holds exactly one JSON value
# and FILTER is true of it.
one() {
	local opts=() files=() f='' have=0
	while [ $# -gt 0 ]; do
		case $1 in
		--arg | --argjson | --slurpfile) opts+=("$1" "$2" "$3"); shift 3 ;;
		*)
			if [ "$have" -eq 0 ]; then f=$1; have=1; else files+=("$1"); fi
			shift ;;
		esac
	done
	jq -e -s "${opts[@]}" "length == 1 and (.[0] | $f)" "${files[@]}"
}

# Run from `make check` (tests/run-all.sh puts the build on PATH), or
# directly with `bats tests/project.bats` against build/.
command -v cnt-project >/dev/null 2>&1 || PATH="$BATS_TEST_DIRNAME/../build/bin:$PATH"
