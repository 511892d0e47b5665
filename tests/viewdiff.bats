#!/usr/bin/env bats
# cnt-diff on two ranked views (cnt-view(5)): equal rebuilds that differ
# only in version and built_at (status 0), a changed value, a changed rank,
# a member on one side only, a member beyond the materialised head, a
# description field (status 1, one JSON line each), the tolerance of a
# sketch-backed board, and trouble (status 2): a corrupt index.bin, a view
# beside a bucket file.

bats_require_minimum_version 1.5.0
load data/views/common

setup() {
	set -o pipefail
	cd "$BATS_TEST_TMPDIR"
}

# pts LINES: "key member delta [event_time]" per line on standard input to
# raw JSON lines of utc/pts.
pts() {
	while read -r k m d t; do
		printf '{"idempotency_key":"%s","tenant_id":"utc","counter_id":"pts","member_ref":"%s","delta":%s,"event_time":"%s"}\n' \
			"$k" "$m" "$d" "${t:-2026-03-01T10:00:00Z}"
	done
}

# view BOARD JSONL VIEWS [NOW]: the board's view of the events, in VIEWS.
view() {
	buckets "$2" "$2.avro" && cnt-project -d "$DEFS" -b "$1" -w "$3" --now "${4:-2026-03-02T00:00:00Z}" "$2.avro"
}

@test "two builds of the same standing, versions 1 and 2 built at different times: status 0, silent" {
	printf 'e1 a 10\ne2 b 5\ne3 c 8\ne4 d 8 2026-03-01T09:00:00Z\n' | pts >ev.jsonl
	view rk_comp ev.jsonl views 2026-03-02T00:00:00Z
	cnt-project -d "$DEFS" -b rk_comp -w views --now 2026-03-05T00:00:00Z ev.jsonl.avro
	[ "$(desc views/rk_comp/global/v000001 | jq -c '[.version, .built_at]')" = '[1,1772409600000]' ]
	[ "$(desc views/rk_comp/global/v000002 | jq -c '[.version, .built_at]')" = '[2,1772668800000]' ]
	run --separate-stderr cnt-diff --stats st.json views/rk_comp/global/v000001 views/rk_comp/global/current
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ -z "$stderr" ]
	one '.tool == "cnt-diff" and .compared == "views" and .left == 4 and .right == 4 and .equal and
		.changed == 0 and .fields == 0 and .tolerance == 0' st.json
}

@test "a changed value, a changed rank, a member on each side only: status 1, one line each" {
	# left: a 10 (1), c 8 (2), d 8 (3, later), b 5 (4), x 1 (5)
	printf 'e1 a 10\ne2 b 5\ne3 c 8 2026-03-01T09:00:00Z\ne4 d 8\ne5 x 1\n' | pts >l.jsonl
	# right: a 10 (1), b 9 (2: value and rank), c 8 (3: rank), d 8 (4: rank), y 2 (5)
	printf 'e1 a 10\ne2 b 9\ne3 c 8 2026-03-01T09:00:00Z\ne4 d 8\ne6 y 2\n' | pts >r.jsonl
	view rk_comp l.jsonl L
	view rk_comp r.jsonl R
	run --separate-stderr cnt-diff --stats st.json L/rk_comp/global/current R/rk_comp/global/current
	[ "$status" -eq 1 ]
	[ -z "$stderr" ]
	echo "$output" | jq -e -s '[.[] | [.member_ref, .differs, (.left | if . then [.rank, .value] else null end),
		(.right | if . then [.rank, .value] else null end)]] == [
		["c", ["rank"], [2, 8], [3, 8]],
		["d", ["rank"], [3, 8], [4, 8]],
		["b", ["value", "rank"], [4, 5], [2, 9]],
		["x", [], [5, 1], null],
		["y", [], null, [5, 2]]]'
	# last_event_time is given on both sides
	echo "$output" | jq -e -s '.[0].left.last_event_time == 1772355600000'
	one '.left == 5 and .right == 5 and .only_left == 1 and .only_right == 1 and .changed == 3 and
		(.equal | not)' st.json
	# swapped sides swap the answer
	run cnt-diff R/rk_comp/global/current L/rk_comp/global/current
	[ "$status" -eq 1 ]
	echo "$output" | jq -e -s '[.[] | [.member_ref, .left == null, .right == null]] ==
		[["b", false, false], ["c", false, false], ["d", false, false], ["y", false, true], ["x", true, false]]'
	# -q says it by the status alone; --max-diffs bounds the lines, not the count
	run -1 cnt-diff -q L/rk_comp/global/current R/rk_comp/global/current
	[ -z "$output" ]
	run -1 cnt-diff --max-diffs 2 L/rk_comp/global/current R/rk_comp/global/current
	[ "${#lines[@]}" -eq 2 ]
}

@test "members beyond the materialised head are compared too (index.bin, not view.avro)" {
	# cap3 materialises 3 positions; the difference is at position 5
	for i in 1 2 3 4 5; do echo "c$i m$i $((100 - i))"; done | pts | sed 's/"pts"/"cap"/' >l.jsonl
	sed 's/"delta":95/"delta":94/' l.jsonl >r.jsonl
	view cap3 l.jsonl L
	view cap3 r.jsonl R
	[ "$(cnt-cat L/cap3/global/current/view.avro | wc -l)" -eq 3 ]
	run cnt-diff L/cap3/global/current R/cap3/global/current
	[ "$status" -eq 1 ]
	echo "$output" | one '.member_ref == "m5" and .differs == ["value"] and .left.value == 95 and
		.right.value == 94 and .left.rank == 5'
}

@test "views of different boards: the description fields that differ, then the members" {
	printf 'e1 a 10\ne2 b 10 2026-03-01T09:00:00Z\n' | pts >ev.jsonl
	view rk_comp ev.jsonl V
	cnt-project -d "$DEFS" -b rk_ord -w V --now 2026-03-02T00:00:00Z ev.jsonl.avro
	run cnt-diff V/rk_comp/global/current V/rk_ord/global/current
	[ "$status" -eq 1 ]
	echo "$output" | jq -e -s '[.[] | select(.field) | [.field, .left, .right]] ==
		[["board", "rk_comp", "rk_ord"], ["rank_numbering", "competition", "ordinal"]]'
	run cnt-diff --stats - V/rk_comp/global/current V/rk_comp/global/current
	[ "$status" -eq 0 ]
}

# uniq MEMBER N: N events of utc/uniq for MEMBER, items i1..iN.
uniq_events() {
	seq 1 "$2" | awk -v m="$1" '{printf "{\"idempotency_key\":\"u%d\",\"tenant_id\":\"utc\",\"counter_id\":\"uniq\",\"member_ref\":\"%s\",\"delta\":1,\"item\":\"i%d\",\"event_time\":\"2026-03-01T10:00:00Z\"}\n", $1, m, $1}'
}

@test "a unique board: estimates equal within three HyperLogLog++ standard errors by default; --tolerance overrides" {
	{ uniq_events big 1000; uniq_events small 100 | sed 's/"u/"s/'; } >l.jsonl
	{ uniq_events big 1010; uniq_events small 100 | sed 's/"u/"s/'; } >r.jsonl
	{ uniq_events big 1100; uniq_events small 100 | sed 's/"u/"s/'; } >far.jsonl
	view ov_uniq l.jsonl L
	view ov_uniq r.jsonl R
	view ov_uniq far.jsonl F
	l=$(cnt-cat L/ov_uniq/global/current/view.avro | jq 'select(.member_ref == "big") | .value')
	r=$(cnt-cat R/ov_uniq/global/current/view.avro | jq 'select(.member_ref == "big") | .value')
	[ "$l" -ne "$r" ]
	# about 1 % apart: within 2.4375 %
	run --separate-stderr cnt-diff --stats st.json L/ov_uniq/global/current R/ov_uniq/global/current
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	one '.equal and .tolerance == 0.024375' st.json
	# exact comparison on request
	run cnt-diff --tolerance 0 L/ov_uniq/global/current R/ov_uniq/global/current
	[ "$status" -eq 1 ]
	echo "$output" | one --argjson l "$l" --argjson r "$r" \
		'.member_ref == "big" and .differs == ["value"] and .left.value == $l and .right.value == $r'
	# about 10 % apart: a difference at the default, not within --tolerance 0.2
	run cnt-diff L/ov_uniq/global/current F/ov_uniq/global/current
	[ "$status" -eq 1 ]
	echo "$output" | one '.member_ref == "big"'
	run -0 cnt-diff --tolerance 0.2 L/ov_uniq/global/current F/ov_uniq/global/current
}

@test "a corrupt index.bin: status 2, the file named, no difference claimed" {
	printf 'e1 a 10\ne2 b 5\n' | pts >ev.jsonl
	view rk_comp ev.jsonl L
	cp -r L R
	idx=R/rk_comp/global/v000001/index.bin
	# one byte of the last name (the pool is the file's end): the data checksum
	size=$(stat -c %s "$idx")
	printf 'z' | dd of="$idx" bs=1 seek=$((size - 1)) conv=notrunc status=none
	run --separate-stderr cnt-diff L/rk_comp/global/current R/rk_comp/global/current
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	[[ $stderr == "cnt-diff: view 'R/rk_comp/global/current/index.bin' is corrupt: data checksum mismatch"* ]]
	# one byte of the header: the header checksum, on either side
	cp L/rk_comp/global/v000001/index.bin "$idx"
	printf '\377' | dd of="$idx" bs=1 seek=50 conv=notrunc status=none
	run --separate-stderr cnt-diff R/rk_comp/global/current L/rk_comp/global/current
	[ "$status" -eq 2 ]
	[[ $stderr == *"R/rk_comp/global/current/index.bin' is corrupt"* ]]
	# a directory that holds no view
	mkdir empty
	run --separate-stderr cnt-diff empty L/rk_comp/global/current
	[ "$status" -eq 2 ]
	[[ $stderr == *"empty/index.bin"* ]]
}

@test "a view directory and a bucket file: usage error, status 2" {
	printf 'e1 a 10\n' | pts >ev.jsonl
	view rk_comp ev.jsonl L
	run --separate-stderr cnt-diff L/rk_comp/global/current ev.jsonl.avro
	[ "$status" -eq 2 ]
	[[ $stderr == "cnt-diff: 'L/rk_comp/global/current' is a directory but 'ev.jsonl.avro' is not"* ]]
	run --separate-stderr cnt-diff - L/rk_comp/global/current
	[ "$status" -eq 2 ]
}
