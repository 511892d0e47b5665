#!/usr/bin/env bats
# cnt-diff: equal files (status 0, silent), changed / only-left / only-right
# records (status 1, one JSON line each), -q, -n, --tolerance for sketches,
# --stats, and trouble (status 2): unsorted input, missing files, usage.

bats_require_minimum_version 1.5.0
load data/core/common

LATER=2026-03-01T10:05:00Z

setup() {
	set -o pipefail
	cd "$BATS_TEST_TMPDIR"
}

# bucket OUT: JSON lines on standard input, admitted at $LATER, to the bucket file OUT.
bucket() {
	ingest "$LATER" - | cnt-window -d "$DEFS" | cnt-accumulate -o "$1"
}

@test "equal files: status 0 and no output, also when built from differently ordered input" {
	{ ev a dist m1 5; ev b dist m2 6; ev c uniq m1 1 u1; ev d uniq m1 1 u2; } >in.jsonl
	bucket L.avro <in.jsonl
	tac in.jsonl | bucket R.avro
	run cnt-diff L.avro R.avro
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	run cnt-diff --stats st.json L.avro L.avro
	[ "$status" -eq 0 ]
	one '.tool == "cnt-diff" and .left == 3 and .right == 3 and .equal and .changed == 0' st.json
}

@test "a changed value: status 1, one line with the key and both sides" {
	{ ev a dist m1 5; ev b dist m2 6; } | bucket L.avro
	{ ev a dist m1 5; ev b dist m2 7; } | bucket R.avro
	run --separate-stderr cnt-diff L.avro R.avro
	[ "$status" -eq 1 ]
	[ -z "$stderr" ]
	echo "$output" | one --argjson t0 "$T0_MS" '
		.key == {tenant_id: "utc", counter_id: "dist", counter_version: 1, member_ref: "m2",
		         bucket_start: $t0, shard: 0} and
		.left.sum == 6 and .right.sum == 7 and .left.min == null and .right.max == null and
		.left.count == 1 and .right.count == 1 and .left.member_ref == "m2"'
}

@test "only-left and only-right records: null on the other side, in key order" {
	{ ev a dist m1 5; ev b dist m2 6; ev c dist m4 1; } | bucket L.avro
	{ ev b dist m2 6; ev c dist m3 1; ev d dist m4 2; } | bucket R.avro
	run cnt-diff --stats st.json L.avro R.avro
	[ "$status" -eq 1 ]
	echo "$output" | jq -e -s '[.[] | {m: .key.member_ref, l: (.left | if . then .sum else null end),
		r: (.right | if . then .sum else null end)}] == [
		{m: "m1", l: 5, r: null}, {m: "m3", l: null, r: 1}, {m: "m4", l: 1, r: 2}]'
	one '.left == 3 and .right == 3 and .only_left == 1 and .only_right == 1 and .changed == 1 and
		(.equal | not)' st.json
	# swapped sides swap the answer
	run cnt-diff R.avro L.avro
	[ "$status" -eq 1 ]
	echo "$output" | jq -e -s '[.[] | [.key.member_ref, .left == null, .right == null]] ==
		[["m1", true, false], ["m3", false, true], ["m4", false, false]]'
}

@test "-q: nothing printed, the status says it" {
	ev a dist m1 5 | bucket L.avro
	ev a dist m1 6 | bucket R.avro
	run cnt-diff -q L.avro R.avro
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	run cnt-diff --quiet L.avro L.avro
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "--max-diffs N: at most N lines printed, every difference counted" {
	{ for k in 1 2 3 4 5; do ev "a$k" dist "m$k" "$k"; done; } | bucket L.avro
	{ for k in 1 2 3 4 5; do ev "a$k" dist "m$k" "$((k + 1))"; done; } | bucket R.avro
	run cnt-diff --max-diffs 2 --stats st.json L.avro R.avro
	[ "$status" -eq 1 ]
	[ "$(echo "$output" | wc -l)" -eq 2 ]
	echo "$output" | jq -e -s '[.[].key.member_ref] == ["m1", "m2"]'
	one '.changed == 5' st.json
	run cnt-diff --max-diffs 0 L.avro R.avro
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	run cnt-diff --max-diffs -1 L.avro R.avro
	[ "$status" -eq 2 ]
	[[ "$output" == "cnt-diff: --max-diffs: '-1' is not a whole number from 0 to "* ]]
	run cnt-diff --max-diffs 2x L.avro R.avro
	[ "$status" -eq 2 ]
	# -n is cnt-cat's --head, not a diff option
	run cnt-diff -n 2 L.avro R.avro
	[ "$status" -eq 2 ]
}

@test "a third operand is a usage error" {
	ev a dist m1 5 | bucket L.avro
	run cnt-diff L.avro L.avro L.avro
	[ "$status" -eq 2 ]
	[[ "${lines[0]}" == "cnt-diff: unexpected operand 'L.avro' after the two bucket files or two view directories" ]]
	[[ "${lines[1]}" == "usage: cnt-diff "* ]]
}

@test "--tolerance: sketches whose estimates are within the fraction are equal; other fields still exact" {
	# 101 views each; 100 distinct viewers on the left, 101 on the right:
	# the estimates differ by 1 % (HLL++ is exact at this size)
	{ for k in $(seq 100); do ev "k$k" uniq m1 1 "u$k"; done; ev k101 uniq m1 1 u1; } | bucket L.avro
	{ for k in $(seq 101); do ev "k$k" uniq m1 1 "u$k"; done; } | bucket R.avro
	run cnt-diff L.avro R.avro
	[ "$status" -eq 1 ]
	echo "$output" | one '.left.sketch_estimate == 100 and .right.sketch_estimate == 101 and
		.left.count == .right.count'
	run cnt-diff --tolerance 0.02 L.avro R.avro
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	run cnt-diff --tolerance 0.005 L.avro R.avro
	[ "$status" -eq 1 ]
	# a tolerance does not hide a difference outside the sketches
	{ for k in $(seq 101); do ev "k$k" uniq m1 1 "u$k"; done; ev k102 uniq m1 1 u1; } | bucket R2.avro
	run cnt-diff --tolerance 0.5 L.avro R2.avro
	[ "$status" -eq 1 ]
	run cnt-diff --tolerance 1.5 L.avro R.avro
	[ "$status" -eq 2 ]
	[[ "$output" == *"--tolerance: '1.5'"* ]]
}

@test "'-' reads one side from standard input" {
	ev a dist m1 5 | bucket L.avro
	ev a dist m1 6 | bucket R.avro
	run cnt-diff -q - R.avro <L.avro
	[ "$status" -eq 1 ]
	run cnt-diff L.avro - <L.avro
	[ "$status" -eq 0 ]
	run cnt-diff - - <L.avro
	[ "$status" -eq 2 ]
}

@test "an unsorted bucket file -> status 2 saying so (a merge join would hide differences)" {
	{ ev a dist m1 5; ev b dist m2 6; ev c dist m3 7; } | bucket sorted.avro
	# the same records in descending key order, written by python3-avro
	"$PY" - sorted.avro unsorted.avro <<'EOF'
import sys
import avro.datafile, avro.io, avro.schema
r = avro.datafile.DataFileReader(open(sys.argv[1], "rb"), avro.io.DatumReader())
schema = avro.schema.parse(r.schema)
recs = list(r)
with open(sys.argv[2], "wb") as f:
    w = avro.datafile.DataFileWriter(f, avro.io.DatumWriter(), schema)
    for x in reversed(recs):
        w.append(x)
    w.close()
EOF
	[ "$(cnt-cat unsorted.avro | jq -r .member_ref | paste -sd, -)" = m3,m2,m1 ]
	run cnt-diff sorted.avro unsorted.avro
	[ "$status" -eq 2 ]
	[[ "$output" == *"'unsorted.avro' record 2: keys are not in ascending order"* ]]
	run cnt-diff unsorted.avro sorted.avro
	[ "$status" -eq 2 ]
	# re-sorted by cnt-accumulate, as the message says, it is equal again
	cnt-accumulate -o resorted.avro unsorted.avro
	cnt-diff resorted.avro sorted.avro
}

@test "trouble: a missing file, a wrong file type, a wrong number of arguments -> status 2" {
	ev a dist m1 5 | bucket L.avro
	run cnt-diff L.avro missing.avro
	[ "$status" -eq 2 ]
	[[ "$output" == "cnt-diff: cannot open 'missing.avro': No such file or directory" ]]
	ev a dist m1 5 | ingest "$LATER" events.avro
	run cnt-diff L.avro events.avro
	[ "$status" -eq 2 ]
	[[ "$output" == "cnt-diff: "*"events.avro"* ]]
	run cnt-diff L.avro
	[ "$status" -eq 2 ]
	[[ "$output" == *"two bucket files or two view directories are needed"* ]]
	run cnt-diff L.avro L.avro L.avro
	[ "$status" -eq 2 ]
	run cnt-diff --help
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "usage: cnt-diff "* ]]
}
