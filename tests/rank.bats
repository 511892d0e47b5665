#!/usr/bin/env bats
# cnt-rank: top-N, exact ranks in the head and histogram bands beyond it,
# ties under every numbering, neighbourhoods with opt-outs and display
# names, the own-write overlay, pinned versions, staleness, frozen scopes,
# the table form and the error paths.
#
# Views are built by cnt-project from data/views/*.jsonl; the expected
# answers are worked out by hand in the comments.  cap3 (materialised_cap
# 3, linear histogram of width 10 from the smallest value):
#   p1 100, p2 90, p3 80 | p4 75, p5 70, p6 40, p7 10     (head | beyond)
#   bins [10,20) p7, [40,50) p6, [70,80) p4 p5, [80,90) p3, [90,100) p2,
#   [100,101) p1; as of 2026-03-01T12:00:00Z, freshness budget 600 s.

bats_require_minimum_version 1.5.0
load data/views/common

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	buckets "$VDATA/cap.jsonl" cap.avro
	buckets "$VDATA/ranking.jsonl" rank.avro
	# the log segment after the views were built (admitted at 13:00)
	events "$VDATA/overlay.jsonl" later.avro 2026-03-01T13:00:00Z
	for b in cap3; do
		cnt-project -d "$DEFS" -b $b -D V --now "$INGEST_NOW" cap.avro
	done
	for b in rk_comp rk_dense rk_ord rk_latest rk_ref; do
		cnt-project -d "$DEFS" -b $b -D V --now "$INGEST_NOW" rank.avro
	done
}

setup() {
	set -o pipefail
	cd "$BATS_TEST_TMPDIR"
	F=$BATS_FILE_TMPDIR
	V=$F/V
	# a time inside cap3's freshness budget
	NOW=2026-03-01T12:05:00Z
}

rank() {
	cnt-rank -D "$V" --now "$NOW" "$@"
}

@test "--help and --version-info" {
	run -0 cnt-rank --help
	[[ $output == usage:* ]]
	[[ $output == *--overlay* ]]
	run -0 cnt-rank --version-info
	[[ $output == "cnt-rank "* ]]
}

@test "top N: the head with exact ranks; every answer carries board, scope, version, as-of, stale, frozen" {
	run -0 rank -b cap3 top 2
	[ "${#lines[@]}" -eq 1 ]
	echo "$output" | one --argjson asof "$INGEST_NOW_MS" '.board == "cap3" and .scope == "global" and .version == 1 and
		.as_of == "2026-03-01T12:00:00.000Z" and .as_of_ms == $asof and .stale == false and .frozen == false and
		.top == 2 and .members == 7 and
		(.entries | map([.member_ref, .rank, .value])) == [["p1", 1, 100], ["p2", 2, 90]]'
	# top 10 stops at the materialised head
	rank -b cap3 top 10 | one '.top == 3 and (.entries | map(.member_ref)) == ["p1", "p2", "p3"]'
	# the default N is 10: all five of rk_comp
	rank -b rk_comp top | one '(.entries | map("\(.member_ref):\(.rank)")) == ["a:1", "b:2", "d:2", "c:4", "e:5"]'
}

@test "exact ranks with ties under each numbering and tie-break" {
	# ranking.jsonl: a 10; b 8 and d 8 reached at 10:30 (tied); c 8 at 11:00; e 2
	[ "$(rank -b rk_comp rank b | jq -c '[.kind, .rank, .value]')" = '["exact",2,8]' ]
	[ "$(rank -b rk_comp rank d | jq .rank)" = 2 ]
	[ "$(rank -b rk_comp rank c | jq .rank)" = 4 ]
	[ "$(rank -b rk_dense rank c | jq .rank)" = 3 ]
	[ "$(rank -b rk_dense rank e | jq .rank)" = 4 ]
	[ "$(rank -b rk_ord rank d | jq .rank)" = 3 ]
	[ "$(rank -b rk_ord rank c | jq .rank)" = 4 ]
	# latest achiever: c first among the 8s, b and d tied behind it
	[ "$(rank -b rk_latest rank c | jq .rank)" = 2 ]
	[ "$(rank -b rk_latest rank d | jq .rank)" = 3 ]
	# member_ref only: all three 8s tied
	[ "$(rank -b rk_ref rank c | jq .rank)" = 2 ]
	[ "$(rank -b rk_ref rank e | jq .rank)" = 5 ]
}

@test "at the head's edge: position 3 is exact, position 4 a histogram band holding 4" {
	rank -b cap3 rank p3 | one '.kind == "exact" and .rank == 3 and .value == 80'
	# p4 75 and p5 70 share the bin [70, 80); three members are above it
	rank -b cap3 rank p4 | one '.kind == "band" and .rank_band == [4, 5] and (has("rank") | not) and
		.top_percent_band == [(300 / 7 * 1000 | round / 1000), (500 / 7 * 1000 | round / 1000)]'
	rank -b cap3 rank p5 | one '.kind == "band" and .rank_band == [4, 5]'
	rank -b cap3 rank p6 | one '.kind == "band" and .rank_band == [6, 6]'
	rank -b cap3 rank p7 | one '.kind == "band" and .rank_band == [7, 7] and .top_percent_band == [(600 / 7 * 1000 | round / 1000), 100]'
}

@test "value: a member's exact value, also beyond the head; an unknown member is not found" {
	rank -b cap3 value p6 | one '.found == true and .value == 40 and (has("rank") or has("rank_band") | not)'
	rank -b cap3 value nobody | one '.member_ref == "nobody" and .found == false and (has("value") | not)'
	rank -b cap3 rank nobody | one '.found == false'
}

@test "around: +-k listed members; opted-out members left out, the asker always shown; display names" {
	rank -b cap3 around p4 1 | one '(.neighbourhood | map(.member_ref)) == ["p3", "p4", "p5"] and
		(.neighbourhood | map(.rank)) == [3, null, null] and .kind == "band"'
	# p3 opted out: the walk goes past it to p2
	rank -b cap3 --directory "$VDATA/directory.jsonl" around p4 1 |
		one '(.neighbourhood | map(.member_ref)) == ["p2", "p4", "p5"] and .neighbourhood[0].display_name == "Grace" and
		.neighbourhood[2].display_name == "Eve" and (.neighbourhood[1] | has("display_name") | not)'
	rank -b cap3 --directory "$VDATA/directory.jsonl" around p3 1 |
		one '(.neighbourhood | map(.member_ref)) == ["p2", "p3", "p4"] and .rank == 3'
	# at both ends of the view
	rank -b cap3 around p1 2 | one '(.neighbourhood | map(.member_ref)) == ["p1", "p2", "p3"]'
	rank -b cap3 around p7 2 | one '(.neighbourhood | map(.member_ref)) == ["p5", "p6", "p7"]'
	# the default k is 5
	rank -b cap3 around p4 | one '(.neighbourhood | length) == 7'
	run -2 rank -b cap3 around p4 0
	[ "$output" = "cnt-rank: around: '0' is not a count from 1 to 1000" ]
	rank -b cap3 around nobody 1 | one '.found == false and (has("neighbourhood") | not)'
	# a member the overlay brings in has no place in the view to stand around
	run -2 rank -b cap3 --overlay "$F/later.avro" around newbie 1
	[ "$output" = "cnt-rank: around: 'newbie' is not in the view; ask for its rank instead" ]
}

@test "display names come from --directory at read time (the last line wins), never from the view" {
	rank -b cap3 --directory "$VDATA/directory.jsonl" top 3 |
		one '(.entries | map(.display_name)) == ["Ada", "Grace", "Hidden"] and (.entries | map(.member_ref)) == ["p1", "p2", "p3"]'
	rank -b cap3 --directory "$VDATA/directory.jsonl" rank p5 | one '.member_ref == "p5"'
	! grep -q Ada "$V"/cap3/global/v000001/index.bin
	! cnt-cat --meta "$V"/cap3/global/v000001/view.avro | grep -q Ada
	printf '{"display_name":"x"}\n' >bad.jsonl
	run -2 rank -b cap3 --directory bad.jsonl top 1
	[ "$output" = "cnt-rank: 'bad.jsonl' line 1: expected a JSON object with member_ref" ]
	run -2 rank -b cap3 --directory missing.jsonl top 1
	[[ $output == "cnt-rank: cannot open the member directory 'missing.jsonl': "* ]]
}

@test "overlay: events after the view's as-of are added and the rank recomputed" {
	# p7 10 + 85 = 95 (another counter's +1000 is not p7's cap): exact rank 2
	rank -b cap3 --overlay "$F/later.avro" rank p7 |
		one '.overlay == {"events": 1, "delta": 85} and .value == 95 and .kind == "exact" and .rank == 2'
	rank -b cap3 --overlay "$F/later.avro" value p7 | one '.value == 95'
	# p6 40 + 18 = 58: alone in [50, 60), below the five above 60
	rank -b cap3 --overlay "$F/later.avro" rank p6 | one '.value == 58 and .kind == "band" and .rank_band == [6, 6]'
	# regression: p5 70 - 50 = 20: its old entry in [70, 80) is not someone
	# above it; rank 6 (p1..p4 and p6 are above)
	rank -b cap3 --overlay "$F/later.avro" rank p5 | one '.value == 20 and .rank_band == [6, 6]'
	# regression: a member new to the view with 1, below the lowest edge:
	# all 7 are above it; percentages out of 8
	rank -b cap3 --overlay "$F/later.avro" rank newbie |
		one '.found == true and .value == 1 and .rank_band == [8, 8] and .top_percent_band == [87.5, 100]'
	# a member without overlay events answers as without the overlay
	rank -b cap3 --overlay "$F/later.avro" rank p2 | one '.overlay.events == 0 and .rank == 2'
	rank -b cap3 --overlay "$F/later.avro" rank nobody | one '.overlay.events == 0 and .found == false'
}

@test "overlay: events the view already holds are not counted again; duplicates count once" {
	# the whole log: the view's own events (ingest_time = as_of) and the
	# later segment twice
	cat "$F/cap.avro.events" "$F/later.avro" "$F/later.avro" >log.avro
	rank -b cap3 --overlay log.avro rank p7 | one '.overlay == {"events": 1, "delta": 85} and .value == 95 and .rank == 2'
	rank -b cap3 --overlay log.avro rank p3 | one '.overlay.events == 0 and .value == 80 and .rank == 3'
	rank -b cap3 --overlay "$F/cap.avro.events" rank p1 | one '.overlay.events == 0 and .value == 100'
	# from standard input
	rank -b cap3 --overlay - rank p7 <log.avro | one '.value == 95'
}

@test "overlay: a tie with a head member shares its rank" {
	# e 2 + 6 = 8 at 10:30 (its last event stays 12:00); under member_ref
	# only it ties b, c and d at rank 2; under earliest achiever it is 5th
	jq -c '.member_ref = "e" | .counter_id = "pts" | .delta = 6 | .event_time = "2026-03-01T10:30:00Z"' \
		<<<"$(head -n 1 "$VDATA/overlay.jsonl")" >e.jsonl
	events e.jsonl e.avro 2026-03-01T13:00:00Z
	rank -b rk_ref --overlay e.avro rank e | one '.value == 8 and .kind == "exact" and .rank == 2'
	rank -b rk_comp --overlay e.avro rank e | one '.value == 8 and .rank == 5'
	# dense: a 1, b d 2, c 3, then e
	rank -b rk_dense --overlay e.avro rank e | one '.value == 8 and .rank == 4'
	rank -b rk_ord --overlay e.avro rank e | one '.value == 8 and .rank == 5'
}

@test "--version pins an older view; the published one answers otherwise" {
	buckets "$VDATA/overlay.jsonl" later-b.avro 2026-03-01T13:00:00Z
	cnt-project -d "$DEFS" -b cap3 -D W --now "$INGEST_NOW" "$F/cap.avro"
	cnt-project -d "$DEFS" -b cap3 -D W --now 2026-03-01T13:00:00Z "$F/cap.avro" later-b.avro
	cnt-rank -D W -b cap3 --now "$NOW" rank p7 | one '.version == 2 and .value == 95 and .rank == 2 and
		.as_of == "2026-03-01T13:00:00.000Z"'
	cnt-rank -D W -b cap3 --now "$NOW" --version 1 rank p7 | one '.version == 1 and .value == 10 and .rank_band == [7, 7] and
		.as_of_ms == 1772366400000'
	run -2 cnt-rank -D W -b cap3 --version 0 top
	[ "$output" = "cnt-rank: --version: '0' is not a version number" ]
}

@test "stale: true once --now is past as-of + freshness_budget_s" {
	rank -b cap3 --now 2026-03-01T12:10:00Z top 1 | one '.stale == false'
	rank -b cap3 --now 1772367000001 top 1 | one '.stale == true'
	rank -b cap3 --now 1772367000001 rank p5 | one '.stale == true'
	# rk_comp keeps the default budget of 60 s
	rank -b rk_comp --now 2026-03-01T12:01:00Z top 1 | one '.stale == false'
	rank -b rk_comp --now 2026-03-01T12:01:00.001Z top 1 | one '.stale == true'
}

@test "a frozen scope answers frozen:true" {
	cnt-project -d "$DEFS" -b cap3 -D W --now "$INGEST_NOW" "$F/cap.avro"
	cnt-project -D W -b cap3 --freeze
	cnt-rank -D W -b cap3 --now "$NOW" rank p1 | one '.frozen == true and .rank == 1'
	cnt-rank -D W -b cap3 --now "$NOW" --table top 1 | head -n 1 | grep -q FROZEN
}

@test "--table: a header line and one line per member" {
	run -0 rank -b cap3 --table --directory "$VDATA/directory.jsonl" top 3
	[ "${#lines[@]}" -eq 4 ]
	[[ ${lines[0]} == "board cap3  scope global  version 1  as of 2026-03-01T12:00:00.000Z" ]]
	[[ ${lines[1]} =~ ^\ +1\ +Ada\ +100$ ]]
	run -0 rank -b cap3 --table rank p4
	[ "${lines[1]}" = "p4: value 75, rank between 4 and 5 (histogram band)" ]
	run -0 rank -b cap3 --table rank p2
	[ "${lines[1]}" = "p2: value 90, rank 2" ]
	run -0 rank -b cap3 --table rank nobody
	[ "${lines[1]}" = "nobody: not in this view" ]
}

@test "errors: unknown board, missing version, corrupt index, bad question: one line, exit 2" {
	run -2 rank -b nope top
	[ "$output" = "cnt-rank: board 'nope' scope 'global' has no published view in '$V' (cnt-project builds and publishes one)" ]
	run -2 rank -b cap3 -s nowhere top
	[ "${#lines[@]}" -eq 1 ]
	run -2 rank -b cap3 --version 9 top
	[ "${#lines[@]}" -eq 1 ]
	[[ $output == "cnt-rank: cannot open the view '$V/cap3/global/v000009/index.bin': No such file or directory" ]]
	run -2 rank -b cap3 why p1
	[ "$output" = "cnt-rank: unknown question 'why': top, rank, around or value" ]
	run -2 rank -b cap3 rank
	[ "$output" = "cnt-rank: rank: which member?" ]
	run -2 rank -b cap3 top 0
	[ "$output" = "cnt-rank: top: '0' is not a positive count" ]
	run -2 cnt-rank -b cap3 top
	[ "${lines[0]}" = "cnt-rank: -D views, -b board and a question are required" ]
	# a truncated index, a damaged magic, a lost tail: each refused
	cp -r "$V" W
	idx=W/cap3/global/v000001/index.bin
	cp "$idx" good.bin
	for cut in 0 20 100 $(($(stat -c %s good.bin) - 1)); do
		head -c "$cut" good.bin >"$idx"
		run -2 cnt-rank -D W -b cap3 top
		echo "cut $cut: $output"
		[ "${#lines[@]}" -eq 1 ]
		[[ $output == "cnt-rank: view '$PWD/W/cap3/global/v000001/index.bin' is"* || $output == "cnt-rank: view 'W/cap3/global/v000001/index.bin' is"* ]]
	done
	{ printf 'CNTVIEW2'; tail -c +9 good.bin; } >"$idx"
	run -2 cnt-rank -D W -b cap3 rank p1
	[ "$output" = "cnt-rank: view 'W/cap3/global/v000001/index.bin' is corrupt or truncated; rebuild it with cnt-project" ]
	# a current link pointing at nothing a version is named
	cp good.bin "$idx"
	ln -sfn elsewhere W/cap3/global/current
	run -2 cnt-rank -D W -b cap3 top
	[ "$output" = "cnt-rank: 'W/cap3/global/current' points at 'elsewhere', which is not a view version" ]
}

@test "overlay by counter type: max keeps the larger, min the smaller, unique is unsupported" {
	buckets "$VDATA/types.jsonl" types.avro
	events "$VDATA/types-later.jsonl" types-later.avro 2026-03-01T13:00:00Z
	for b in ov_best ov_fastest ov_uniq; do
		cnt-project -d "$DEFS" -b $b -D T --now "$INGEST_NOW" types.avro
	done
	# max: 9 in the view; the log adds 12 and 3 -> 12 (not 9 + 15)
	cnt-rank -D T -b ov_best --now "$NOW" --overlay types-later.avro value q1 |
		one '.value == 12 and .overlay.events == 2'
	cnt-rank -D T -b ov_best --now "$NOW" --overlay types-later.avro rank q1 | one '.kind == "exact" and .rank == 1'
	# min: 5 in the view; the log adds 2 and 8 -> 2
	cnt-rank -D T -b ov_fastest --now "$NOW" --overlay types-later.avro value q1 |
		one '.value == 2 and .overlay.events == 2'
	# unique: two items in the view; a third cannot be added without the sketch
	cnt-rank -D T -b ov_uniq --now "$NOW" --overlay types-later.avro value q1 |
		one '.value == 2 and .overlay.supported == false'
}

@test "--table value prints the member's value" {
	run -0 rank -b cap3 --table value p5
	[ "${lines[1]}" = "p5: value 70" ]
}

@test "a view of a counter with no bucket records has a null as-of and is always stale" {
	# cap.avro holds nothing of counter utc/geo
	cnt-project -d "$DEFS" -b cohort -D E --now "$INGEST_NOW" --scopes "$VDATA/cohorts.csv" "$F/cap.avro"
	run -0 cnt-rank -D E -b cohort -s "$(ls E/cohort | head -n 1)" --now "$NOW" top 1
	echo "$output" | one '.as_of == null and .as_of_ms == null and .stale == true'
}
