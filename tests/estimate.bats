#!/usr/bin/env bats
# Estimates and their error bounds (issue 11, part 3): every answer for a
# unique counter says "estimate": true with "error" E = ceil(1.96 * 1.04 /
# sqrt(2^14) * U) (the 95 % bound at precision 14), in every cnt-rank
# question, JSON and table, in cnt-explain and cnt-series; an exact
# counter's answers say "estimate": false and carry no error.  cnt-diff -d
# compares a unique counter's sketches within the bound of their
# precision, names the tolerance it applied per counter, and keeps exact
# counters byte-exact.  (Approx counters: tests/estimate-approx.bats.)

bats_require_minimum_version 1.5.0
load data/views/common

setup() {
	set -o pipefail
	cd "$BATS_TEST_TMPDIR"
}

# uniq_events MEMBER N [ITEMS]: N events of utc/uniq for MEMBER, items
# i1..iITEMS in turn (ITEMS defaults to N), keys prefixed by MEMBER.
uniq_events() {
	seq 1 "$2" | awk -v m="$1" -v k="${3:-$2}" '{printf "{\"idempotency_key\":\"%s%d\",\"tenant_id\":\"utc\",\"counter_id\":\"uniq\",\"member_ref\":\"%s\",\"delta\":1,\"item\":\"i%d\",\"event_time\":\"2026-03-01T10:00:00Z\"}\n", m, $1, m, ($1 - 1) % k + 1}'
}

# bound U: the 95 % bound of estimate U at precision 14, by Python.
bound() {
	"$PY" -c "import math,sys; print(math.ceil(1.96 * 1.04 / math.sqrt(2 ** 14) * int(sys.argv[1]) - 1e-9))" "$1"
}

# A unique board (ov_uniq): big 1000 viewers, mid 300, small 20.
uniq_view() {
	{ uniq_events big 1000; uniq_events mid 300; uniq_events small 20; } >u.jsonl
	buckets u.jsonl u.avro && cnt-project -d "$DEFS" -b ov_uniq -w views --now 2026-03-02T00:00:00Z u.avro
}

@test "unique board, top: every entry an estimate with its 95 % bound at precision 14, JSON and table" {
	uniq_view
	run -0 cnt-rank -w views -b ov_uniq --now 2026-03-01T12:30:00Z top 3
	echo "$output" | one '.estimate == true and (.entries | length) == 3 and
		all(.entries[]; .estimate == true and (.error | type) == "number")'
	for m in big mid small; do
		v=$(echo "$output" | jq --arg m $m '.entries[] | select(.member_ref == $m) | .value')
		e=$(echo "$output" | jq --arg m $m '.entries[] | select(.member_ref == $m) | .error')
		[ "$e" -eq "$(bound "$v")" ]
	done
	# big: about 1000, so E = 16
	[ "$(echo "$output" | jq '.entries[0].error')" -ge 15 ]
	run -0 cnt-rank -w views -b ov_uniq --now 2026-03-01T12:30:00Z -F table top 3
	v=$(cnt-rank -w views -b ov_uniq top 1 | jq '.entries[0].value')
	echo "$output" | grep -E "^ +1  big +~$v \+-$(bound "$v")\$"
	echo "$output" | grep -E "^ +3  small +~20 \+-1\$"
}

@test "unique board, rank, value and around: the member's estimate and bound, JSON and table" {
	uniq_view
	v=$(cnt-rank -w views -b ov_uniq value mid | jq .value)
	e=$(bound "$v")
	for q in "rank mid" "value mid" "around mid 1"; do
		# shellcheck disable=SC2086
		run -0 cnt-rank -w views -b ov_uniq $q
		echo "$output" | one --argjson v "$v" --argjson e "$e" '.value == $v and .estimate == true and .error == $e'
		# shellcheck disable=SC2086
		run -0 cnt-rank -w views -b ov_uniq -F table $q
		echo "$output" | grep -F "mid: value ~$v +-$e"
	done
	run -0 cnt-rank -w views -b ov_uniq around mid 1
	echo "$output" | one '[.neighbourhood[] | .estimate] == [true, true, true] and
		[.neighbourhood[] | .member_ref] == ["big", "mid", "small"]'
	# not in the view: nothing to bound
	run -0 cnt-rank -w views -b ov_uniq value nobody
	echo "$output" | one '.found == false and (has("estimate") | not) and (has("error") | not)'
}

@test "exact board: every answer says estimate false and carries no error; tables unchanged" {
	printf '{"idempotency_key":"e%d","tenant_id":"utc","counter_id":"pts","member_ref":"%s","delta":%d,"event_time":"2026-03-01T10:00:00Z"}\n' \
		1 a 10 2 b 5 3 c 8 >ev.jsonl
	buckets ev.jsonl ev.avro
	cnt-project -d "$DEFS" -b rk_comp -w views --now 2026-03-02T00:00:00Z ev.avro
	run -0 cnt-rank -w views -b rk_comp top 3
	echo "$output" | one '.estimate == false and all(.entries[]; .estimate == false and (has("error") | not))'
	for q in "rank b" "value b" "around b 1"; do
		# shellcheck disable=SC2086
		run -0 cnt-rank -w views -b rk_comp $q
		echo "$output" | one '.value == 5 and .estimate == false and (has("error") | not)'
		# shellcheck disable=SC2086
		run -0 cnt-rank -w views -b rk_comp -F table $q
		echo "$output" | grep -F "b: value 5"
		! echo "$output" | grep -F '~'
	done
}

@test "a unique view announces its error column and precision; an exact view has neither (old views: test_view)" {
	uniq_view
	desc views/ov_uniq/global/current | jq -e '.errors == true and .precision == 14'
	run -0 cnt-rank -w views -b ov_uniq verify
	echo "$output" | one '.intact == true'
	# an exact view has neither key
	printf '{"idempotency_key":"e1","tenant_id":"utc","counter_id":"pts","member_ref":"a","delta":1,"event_time":"2026-03-01T10:00:00Z"}\n' >ev.jsonl
	buckets ev.jsonl ev.avro
	cnt-project -d "$DEFS" -b rk_comp -w views --now 2026-03-02T00:00:00Z ev.avro
	desc views/rk_comp/global/current | jq -e 'has("errors") == false and has("precision") == false'
}

@test "cnt-explain: a unique counter's standing is an estimate with its bound" {
	{ uniq_events big 1000; uniq_events small 20; } >u.jsonl
	events u.jsonl log.avro
	run -0 cnt-explain -d "$DEFS" -b ov_uniq --member big --now 2026-03-02T00:00:00Z -F json log.avro
	v=$(echo "$output" | jq 'select(.kind == "standing") | .value')
	echo "$output" | jq -e --argjson e "$(bound "$v")" 'select(.kind == "standing") | .estimate == true and .error == $e'
	run -0 cnt-explain -d "$DEFS" -b ov_uniq --member big --now 2026-03-02T00:00:00Z log.avro
	echo "$output" | grep -F "value ~$v +-$(bound "$v") (an estimate, 95 %), rank 1 of 2"
}

@test "cnt-series: unique viewers are an estimate with their bound; views of a unique counter are counted exactly" {
	{ uniq_events big 1000; uniq_events small 20; } >u.jsonl
	buckets u.jsonl u.avro
	run -0 cnt-series -d "$DEFS" --counter utc/uniq --from 2026-03-01 --to 2026-03-02 -F json u.avro
	echo "$output" | one '.views == 1020 and .views_estimate == false and (has("views_error") | not) and
		.unique_viewers_estimate == true'
	v=$(echo "$output" | jq .unique_viewers)
	echo "$output" | one --argjson e "$(bound "$v")" '.unique_viewers_error == $e'
	run -0 cnt-series -d "$DEFS" --counter utc/uniq --from 2026-03-01 --to 2026-03-02 u.avro
	echo "$output" | grep -E "^2026-03-01 +1020 +~$v \+-$(bound "$v")\$"
}

@test "cnt-diff -d: a unique counter's sketches agree within its precision's 95 % bound, not beyond; exact stays exact" {
	# the same 1000 events; right: 10 of big's items repeated (about 1 % fewer)
	{ uniq_events big 1000; uniq_events small 20; } >l.jsonl
	{ uniq_events big 1000 990; uniq_events small 20; } >r.jsonl
	{ uniq_events big 1000 900; uniq_events small 20; } >far.jsonl
	buckets l.jsonl l.avro
	buckets r.jsonl r.avro
	buckets far.jsonl far.avro
	# without definitions: bytes
	run -1 cnt-diff -q l.avro r.avro
	# with them: within 1.5925 %
	run -0 --separate-stderr cnt-diff -d "$DEFS" -v --stats st.json l.avro r.avro
	[ -z "$output" ]
	echo "$stderr" | grep -F "utc/uniq v1: unique, tolerance 0.015925 (precision)"
	one '.equal and (.counters | length) == 1 and .counters[0].counter_id == "uniq" and
		.counters[0].type == "unique" and .counters[0].tolerance_from == "precision" and
		(.counters[0].tolerance - 0.015925 | fabs) < 1e-9' st.json
	# about 10 % apart: a difference, unless --tolerance says more
	run -1 cnt-diff -d "$DEFS" l.avro far.avro
	echo "$output" | one '.key.member_ref == "big"'
	run -0 --separate-stderr cnt-diff -d "$DEFS" -v --tolerance 0.2 l.avro far.avro
	echo "$stderr" | grep -F "utc/uniq v1: unique, tolerance 0.2 (--tolerance)"
	# an exact counter: a difference of 1 in 1000 is a difference
	seq 1 1000 | awk '{printf "{\"idempotency_key\":\"p%d\",\"tenant_id\":\"utc\",\"counter_id\":\"pts\",\"member_ref\":\"a\",\"delta\":1,\"event_time\":\"2026-03-01T10:00:00Z\"}\n", $1}' >p1.jsonl
	head -n 999 p1.jsonl >p2.jsonl
	buckets p1.jsonl p1.avro
	buckets p2.jsonl p2.avro
	run -1 --separate-stderr cnt-diff -d "$DEFS" -v --tolerance 0.2 --stats st.json p1.avro p2.avro
	echo "$stderr" | grep -F "utc/pts v1: exact, tolerance 0 (exact)"
	one '.counters[0].tolerance_from == "exact" and .changed == 1' st.json
}

@test "cnt-diff -d on views: the tolerance applied is named; ids with quotes and backslashes keep --stats JSON valid" {
	uniq_view
	cp -r views v2
	run -0 --separate-stderr cnt-diff -d "$DEFS" -v --stats st.json views/ov_uniq/global/current v2/ov_uniq/global/current
	echo "$stderr" | grep -F "tolerance 0.024375 (default)"
	one '.tolerance_from == "default"' st.json
	run -0 --separate-stderr cnt-diff -v --tolerance 0.1 views/ov_uniq/global/current v2/ov_uniq/global/current
	echo "$stderr" | grep -F "tolerance 0.1 (--tolerance)"
	# bucket files of a counter whose ids need escaping
	printf '{"idempotency_key":"q1","tenant_id":"utc","counter_id":"uniq","member_ref":"a\\"b\\\\c\\u0001","delta":1,"item":"x","event_time":"2026-03-01T10:00:00Z"}\n' >q.jsonl
	buckets q.jsonl q.avro
	run -0 cnt-diff -d "$DEFS" --stats st.json q.avro q.avro
	"$PY" -c 'import json,sys; d=json.load(open("st.json")); assert d["counters"][0]["counter_id"] == "uniq"'
}
