#!/usr/bin/env bats
# The counting core end to end:
#   cnt-ingest | cnt-dedup | cnt-window | cnt-accumulate > buckets.avro
# over 300 generated events (data/core/gen-events.py, deterministic), against
# bucket records computed independently in Python (data/core/expect-buckets.py)
# and a jq spot check; rebuilds byte-identical; a split run with the dedup
# state carried across equals the whole; conservation at every stage.

bats_require_minimum_version 1.5.0
load data/core/common

NOW=2026-03-01T12:01:00Z
NOW_MS=1772366460000

setup_file() {
	/usr/bin/python3 "$BATS_TEST_DIRNAME/data/core/gen-events.py" 7 300 >"$BATS_FILE_TMPDIR/in.jsonl"
}

setup() {
	set -o pipefail
	cd "$BATS_TEST_TMPDIR"
	IN=$BATS_FILE_TMPDIR/in.jsonl
}

# run_pipeline OUT [dedup options] < JSON lines
run_pipeline() {
	local out=$1
	shift
	cnt-ingest -d "$DEFS" --now "$NOW" - 2>/dev/null | cnt-dedup -d "$DEFS" "$@" |
		cnt-window -d "$DEFS" | cnt-accumulate >"$out"
}

@test "the generator is deterministic and makes what the tests need" {
	"$PY" "$DATA/gen-events.py" 7 300 | cmp - "$IN"
	[ "$(wc -l <"$IN")" -eq 300 ]
	# retries (repeated lines), repeated (video, viewer) pairs, both tenants
	[ "$(sort "$IN" | uniq -d | wc -l)" -gt 0 ]
	jq -s -e '[.[] | select(.counter_id == "views")] | (length > (map([.member_ref, .item]) | unique | length))' "$IN"
	jq -s -e '(map(.tenant_id) | unique) == ["kol", "utc"]' "$IN"
}

@test "end to end: every bucket record equals the independent Python computation" {
	run_pipeline b.avro <"$IN"
	ingest "$NOW" - </dev/null | cnt-window -d "$DEFS" | cnt-accumulate -o empty.avro
	{ cnt-diff b.avro empty.avro || [ $? -eq 1 ]; } >got.jsonl
	"$PY" "$DATA/expect-buckets.py" "$DEFS" "$NOW_MS" "$IN" >want.jsonl
	[ "$(wc -l <want.jsonl)" -gt 50 ]
	"$PY" - got.jsonl want.jsonl <<'EOF'
import json, sys
got = [json.loads(l)["left"] for l in open(sys.argv[1])]
want = [json.loads(l) for l in open(sys.argv[2])]
assert len(got) == len(want), (len(got), len(want))
for g, w in zip(got, want):
    assert g == w, f"\n got  {g}\n want {w}"
late = sum(w["late_count"] for w in want)
ontime = sum(w["count"] for w in want)
assert late > 0 and ontime > 0, (late, ontime)     # both kinds are exercised
assert any(w["sketch_estimate"] for w in want)
EOF
}

@test "end to end, spot check with jq: a member's total and a video's viewers" {
	run_pipeline b.avro <"$IN"
	cnt-cat b.avro >b.jsonl
	# utc/dist m3: the deltas of its distinct idempotency keys, on time or late
	want=$(jq -s '[.[] | select(.tenant_id == "utc" and .counter_id == "dist" and .member_ref == "m3")]
		| unique_by(.idempotency_key) | map(.delta) | add' "$IN")
	got=$(jq -s '[.[] | select(.counter_id == "dist" and .tenant_id == "utc" and .member_ref == "m3")]
		| map(.sum + .late_sum) | add' b.jsonl)
	echo "want $want got $got"
	[ "$want" -gt 0 ]
	[ "$got" = "$want" ]
	# utc/views v2: one view per (video, viewer) within the horizon
	want=$(jq -s '[.[] | select(.counter_id == "views" and .member_ref == "v2") | .item] | unique | length' "$IN")
	got=$(jq -s '[.[] | select(.counter_id == "views" and .member_ref == "v2") | .count + .late_count] | add' b.jsonl)
	[ "$got" = "$want" ]
}

@test "rebuilding twice gives byte-identical bucket files" {
	run_pipeline b1.avro <"$IN"
	run_pipeline b2.avro <"$IN"
	cmp b1.avro b2.avro
	cnt-diff b1.avro b2.avro
}

@test "split in two segments, the dedup state carried across, merged: equals the whole" {
	run_pipeline whole.avro <"$IN"
	head -n 150 "$IN" | run_pipeline b1.avro -s state
	tail -n +151 "$IN" | run_pipeline b2.avro -s state -D dups2.avro
	# retries and repeated views that crossed the cut were caught by the state
	[ "$(cnt-cat --count dups2.avro)" -gt 0 ]
	cnt-accumulate -o merged.avro b2.avro b1.avro
	cnt-diff whole.avro merged.avro
	cmp whole.avro merged.avro
	# without the state the second segment counts the retries again
	tail -n +151 "$IN" | run_pipeline b2-nostate.avro
	cnt-accumulate -o wrong.avro b1.avro b2-nostate.avro
	run cnt-diff -q whole.avro wrong.avro
	[ "$status" -eq 1 ]
}

@test "conservation at every stage" {
	cnt-ingest -d "$DEFS" --now "$NOW" --stats i.json -o e.avro "$IN"
	cnt-dedup -d "$DEFS" --stats d.json -o dd.avro e.avro
	cnt-window -d "$DEFS" --stats w.json -o w.avro dd.avro
	cnt-accumulate --stats a.json -o b.avro w.avro
	cnt-cat b.avro >b.jsonl
	jq -e -n --slurpfile i i.json --slurpfile d d.json --slurpfile w w.json --slurpfile a a.json \
		--slurpfile b b.jsonl '
		$i[0].in == 300 and $i[0].in == $i[0].out + $i[0].duplicates + $i[0].rejected and
		$d[0].in == $i[0].out and $d[0].in == $d[0].out + $d[0].duplicates + $d[0].rejected and
		$d[0].duplicates > 0 and
		$w[0].in == $d[0].out and $w[0].out == $w[0].in and
		$a[0].events == $w[0].out and $a[0].late == $w[0].late and
		([$b[] | .count + .late_count] | add) == $a[0].events'
}

@test "regression: -o /dev/stdout with standard output on a file writes the file, /dev/stdout stays a link" {
	[ -L /dev/stdout ] || skip "/dev/stdout is not a symbolic link here"
	ev a dist m1 1 | cnt-ingest -d "$DEFS" --now "$NOW" -o /dev/stdout - >e.avro
	[ -L /dev/stdout ]
	[ "$(keys_of e.avro)" = a ]
	cnt-window -d "$DEFS" -o /dev/stdout e.avro | cnt-accumulate -o /dev/stdout >b.avro
	[ -L /dev/stdout ]
	[ "$(cnt-cat --count b.avro)" = 1 ]
}
