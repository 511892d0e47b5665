#!/usr/bin/env bats
# Reads that pin a version (cnt-rank --pin, the token on every answer),
# paging (--offset), conditional reads (--if-newer, status 6) and view
# retention (retain_versions_s / retain_versions_min, the retention record,
# status 7 for a retired version).
#
# Board pb ranks the counter pts of tenant t over all time.  Version 1 is
# built from batch 1:  a 60, b 50, c 40, d 30, e 20, f 10.
# Version 2 adds batch 2 (g +100, c +25):
#                      g 100, c 65, a 60, b 50, d 30, e 20, f 10.
# So pages of two: v1 page 2 (offset 2) is c, d; v2 page 2 is a, b.

bats_require_minimum_version 1.5.0
load data/views/common

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	cat >defs.json <<'EOF'
{"format": "cnt-definitions/1",
 "tenants": [{"tenant_id": "t", "timezone": "UTC"}],
 "counters": [{"tenant_id": "t", "counter_id": "pts",
   "versions": [{"version": 1, "type": "exact", "lateness_horizon_s": 31536000,
     "windows": ["all_time", "season"]}]}],
 "leaderboards": [
  {"board_id": "pb", "tenant_id": "t", "counter_id": "pts", "window": "all_time",
   "retain_versions_s": 3600, "retain_versions_min": 0},
  {"board_id": "keep2", "tenant_id": "t", "counter_id": "pts", "window": "all_time",
   "retain_versions_s": 0, "retain_versions_min": 2},
  {"board_id": "dflt", "tenant_id": "t", "counter_id": "pts", "window": "all_time"},
  {"board_id": "w:\u00e9 1%", "tenant_id": "t", "counter_id": "pts", "window": "all_time"},
  {"board_id": "sb", "tenant_id": "t", "counter_id": "pts", "window": "season",
   "retain_versions_s": 0, "retain_versions_min": 0}],
 "seasons": [
  {"season_id": "s1", "board_id": "sb", "opens_at": "2026-03-01T00:00:00Z", "closes_at": "2026-03-02T00:00:00Z"},
  {"season_id": "s2", "board_id": "sb", "opens_at": "2026-03-02T00:00:00Z", "closes_at": "2026-03-09T00:00:00Z"}]}
EOF
	n=0
	for m in a:60 b:50 c:40 d:30 e:20 f:10; do
		n=$((n + 1))
		printf '{"idempotency_key":"k%d","tenant_id":"t","counter_id":"pts","member_ref":"%s","delta":%d,"event_time":"2026-03-01T10:00:00Z"}\n' \
			$n "${m%:*}" "${m#*:}"
	done >batch1.jsonl
	{
		cat batch1.jsonl
		echo '{"idempotency_key":"k7","tenant_id":"t","counter_id":"pts","member_ref":"g","delta":100,"event_time":"2026-03-01T11:00:00Z"}'
		echo '{"idempotency_key":"k8","tenant_id":"t","counter_id":"pts","member_ref":"c","delta":25,"event_time":"2026-03-01T11:00:00Z"}'
	} >batch2.jsonl
	for b in 1 2; do
		cnt-ingest -d defs.json --now 2026-03-01T1$((b + 1)):00:00Z --max-past 400d -o ev$b.avro batch$b.jsonl
		cnt-dedup -d defs.json ev$b.avro | cnt-window -d defs.json | cnt-accumulate -o b$b.avro
	done
}

setup() {
	set -o pipefail
	cd "$BATS_TEST_TMPDIR"
	F=$BATS_FILE_TMPDIR
	D=$F/defs.json
}

# build BOARD N NOW: version from batch N, built (and published) at NOW.
build() {
	cnt-project -d "$D" -b "$1" -w v --now "$3" "$F/b$2.avro"
}

names() {
	jq -r '[.entries[] | "\(.member_ref):\(.rank)"] | join(" ")'
}

@test "every answer carries its token, in JSON and in the table; --offset pages the top" {
	build pb 1 2026-03-01T12:00:00Z
	sum=$(od -An -t x8 -j 8 -N 8 v/pb/global/v000001/index.bin | tr -d ' ')
	data=$(od -An -t x8 -j 24 -N 8 v/pb/global/v000001/index.bin | tr -d ' ')
	want=$(printf 'cnt1:pb:global:1:%016x' $((0x$sum ^ 0x$data)))
	for q in "top 2" "rank a" "around a 1" "value a" verify; do
		cnt-rank -w v -b pb $q | one --arg t "$want" '.token == $t'
	done
	run -0 cnt-rank -w v -b pb -F table top 1
	[ "${lines[2]}" = "token $want" ]
	cnt-rank -w v -b pb top 2 | one '.offset == 0 and .top == 2'
	[ "$(cnt-rank -w v -b pb top 2 | names)" = "a:1 b:2" ]
	[ "$(cnt-rank -w v -b pb top 2 --offset 2 | names)" = "c:3 d:4" ]
	[ "$(cnt-rank -w v -b pb --offset 5 top 2 | names)" = "f:6" ]
	cnt-rank -w v -b pb --offset 6 top 2 | one '.offset == 6 and .top == 0 and .entries == []'
	run -2 cnt-rank -w v -b pb --offset 1 rank a
	[ "${lines[0]}" = "cnt-rank: --offset pages the top question" ]
	run -2 cnt-rank -w v -b pb --offset -1 top
	run -2 cnt-rank -w v -b pb --offset 2x top
}

@test "pinned paging across a publish: page 2 from the pinned version, unpinned from the new one" {
	build pb 1 2026-03-01T12:00:00Z
	cnt-rank -w v -b pb top 2 >p1.json
	[ "$(names <p1.json)" = "a:1 b:2" ]
	tok=$(jq -r .token p1.json)
	build pb 2 2026-03-01T13:00:00Z
	[ "$(readlink v/pb/global/current)" = v000002 ]
	# pinned: version 1, the positions after page 1, no member twice
	cnt-rank -w v -b pb --pin "$tok" top 2 --offset 2 >p2.json
	one --arg t "$tok" '.version == 1 and .token == $t' p2.json
	[ "$(names <p2.json)" = "c:3 d:4" ]
	[ "$(cnt-rank -w v -b pb --pin "$tok" top 2 --offset 4 | names)" = "e:5 f:6" ]
	# unpinned: the published version 2, whose page 2 repeats a and b
	cnt-rank -w v -b pb top 2 --offset 2 >u2.json
	one '.version == 2' u2.json
	[ "$(names <u2.json)" = "a:3 b:4" ]
	# the explicit version keeps working, and names the same token
	cnt-rank -w v -b pb --view-version 1 top 1 | one --arg t "$tok" '.version == 1 and .token == $t'
}

@test "rank, then around, pinned" {
	build pb 1 2026-03-01T12:00:00Z
	tok=$(cnt-rank -w v -b pb rank c | jq -r 'select(.rank == 3 and .value == 40) | .token')
	build pb 2 2026-03-01T13:00:00Z
	cnt-rank -w v -b pb rank c | one '.version == 2 and .rank == 2 and .value == 65'
	cnt-rank -w v -b pb --pin "$tok" around c 1 >a.json
	one '.version == 1 and .rank == 3 and .value == 40' a.json
	[ "$(jq -r '[.neighbourhood[].member_ref] | join(" ")' a.json)" = "b c d" ]
	cnt-rank -w v -b pb --pin "$tok" value g | one '.version == 1 and .found == false'
	cnt-rank -w v -b pb --pin "$tok" -F table rank c | grep -qx 'c: value 40, rank 3'
}

@test "conditional reads: status 6 and nothing printed until a publish, then the answer" {
	build pb 1 2026-03-01T12:00:00Z
	tok=$(cnt-rank -w v -b pb top 1 | jq -r .token)
	for q in "top 3" "rank a" "around a" "value a" verify; do
		run -6 --separate-stderr cnt-rank -w v -b pb --if-newer 1 $q
		[ -z "$output" ] && [ -z "$stderr" ]
		run -6 --separate-stderr cnt-rank -w v -b pb --if-newer "$tok" $q
		[ -z "$output" ] && [ -z "$stderr" ]
	done
	run -6 --separate-stderr cnt-rank -w v -b pb --if-newer 1 -v top
	[ -z "$output" ]
	[[ $stderr == *"version 1 is still the published one: not modified"* ]]
	build pb 2 2026-03-01T13:00:00Z
	cnt-rank -w v -b pb --if-newer 1 top 1 | one '.version == 2 and .entries[0].member_ref == "g"'
	cnt-rank -w v -b pb --if-newer "$tok" value c | one '.version == 2 and .value == 65'
	run -6 cnt-rank -w v -b pb --if-newer 2 top 1
	[ -z "$output" ]
	# a rollback is a publication: the client holding 2 gets version 1
	cnt-project -w v -b pb --publish 1 --now 2026-03-01T13:10:00Z
	cnt-rank -w v -b pb --if-newer 2 rank c | one '.version == 1 and .rank == 3'
	run -6 cnt-rank -w v -b pb --if-newer "$tok" rank c
	# bad arguments, and combinations that mean nothing
	run -2 cnt-rank -w v -b pb --if-newer 0 top
	[ "${lines[0]}" = "cnt-rank: --if-newer: '0' is not a version from 1 to 999999 or a token" ]
	run -2 cnt-rank -w v -b pb --if-newer 2x top
	run -2 cnt-rank -w v -b pb --if-newer 1 --pin "$tok" top
	[[ ${lines[0]} == "cnt-rank: --if-newer asks about the published version, --pin and --view-version name one: one of the three" ]]
	run -2 cnt-rank -w v -b pb --if-newer 1 --view-version 1 top
	run -2 cnt-rank -w v -b pb --pin "$tok" --view-version 1 top
}

@test "tokens: another board or scope, malformed, the other count: usage errors (2); a tampered content: 7" {
	build pb 1 2026-03-01T12:00:00Z
	build dflt 1 2026-03-01T12:00:00Z
	tok=$(cnt-rank -w v -b pb top 1 | jq -r .token)
	other=$(cnt-rank -w v -b dflt top 1 | jq -r .token)
	run -2 --separate-stderr cnt-rank -w v -b pb --pin "$other" top
	[ -z "$output" ]
	[ "${stderr_lines[0]}" = "cnt-rank: --pin: the token pins board 'dflt' scope 'global', not board 'pb' scope 'global'" ]
	run -2 cnt-rank -w v -b pb --scope eu --pin "$tok" top
	[ "${lines[0]}" = "cnt-rank: --pin: the token pins board 'pb' scope 'global', not board 'pb' scope 'eu'" ]
	run -2 cnt-rank -w v -b pb --if-newer "$other" top
	run -2 cnt-rank -w v -b pb --verified --pin "$tok" top
	[ "${lines[0]}" = "cnt-rank: --pin: the token pins the fast count: without --verified" ]
	for bad in "" x cnt1 cnt2:pb:global:1:0000000000000000 "cnt1:pb:global:1:" "cnt1:pb:global:01:${tok##*:}" \
		"cnt1:pb:global:1000000:${tok##*:}" "cnt1::global:1:${tok##*:}" "cnt1:pb:glo:bal:1:${tok##*:}" \
		"cnt1:p%62:global:1:${tok##*:}" "cnt1:pb%zz:global:1:${tok##*:}" "cnt1:pb:global:1:${tok##*:}0" \
		"cnt1:pb:global:1:$(echo "${tok##*:}" | tr a-f A-F)X" "cnt1:p b:global:1:${tok##*:}"; do
		run -2 --separate-stderr cnt-rank -w v -b pb --pin "$bad" top
		[ -z "$output" ]
		[[ ${stderr_lines[0]} == "cnt-rank: --pin: "*"is not a cnt-rank token"* ]]
	done
	# the right board and version, another content: not the pinned view
	flip=$(printf '%016x' $((0x${tok##*:} ^ 1)))
	run -7 --separate-stderr cnt-rank -w v -b pb --pin "${tok%:*}:$flip" top
	[ -z "$output" ]
	[ "$stderr" = "cnt-rank: board 'pb' scope 'global': version 1 is no longer retained (the version of that number now holds another view: the scope was rebuilt since, or the token was altered); the published version is now 1" ]
	# a scope rebuilt from scratch numbers from 1 again: the old token does not match it
	rm -r v/pb
	build pb 2 2026-03-01T13:00:00Z
	run -7 cnt-rank -w v -b pb --pin "$tok" top
	[[ $output == *"version 1 is no longer retained (the version of that number now holds another view"* ]]
	# a board id that needs escaping: one spelling, and it pins
	build 'w:é 1%' 1 2026-03-01T12:00:00Z
	wtok=$(cnt-rank -w v -b 'w:é 1%' top 1 | jq -r .token)
	[[ $wtok =~ ^cnt1:w%3A%C3%A9%201%25:global:1:[0-9a-f]{16}$ ]]
	build 'w:é 1%' 2 2026-03-01T13:00:00Z
	cnt-rank -w v -b 'w:é 1%' --pin "$wtok" top 1 | one '.version == 1 and .board == "w:é 1%"'
	run -2 cnt-rank -w v -b 'w:é 1%' --pin "${wtok/\%3A/:}" top 1
}

@test "retention: a superseded version is retired after retain_versions_s, recorded; a pin on it gets 7" {
	build pb 1 2026-03-01T12:00:00Z
	t1=$(cnt-rank -w v -b pb top 1 | jq -r .token)
	build pb 2 2026-03-01T12:30:00Z
	t2=$(cnt-rank -w v -b pb top 1 | jq -r .token)
	# within the hour version 1 stays, pinned readers are answered
	run -0 cnt-project -d "$D" -b pb -w v --now 2026-03-01T13:29:59Z --stats st.json "$F/b1.avro"
	one '.scopes[0].retired == 0 and .scopes[0].version == 3' st.json
	cnt-rank -w v -b pb --pin "$t1" top 1 | one '.version == 1'
	# an hour after it was superseded it is retired
	run -0 cnt-project -d "$D" -b pb -w v --now 2026-03-01T13:30:00Z -v --stats st.json "$F/b2.avro"
	[ "$output" = "cnt-project: pb/global: version 4, 7 members, published, older versions retired" ]
	one '.scopes[0].retired == 1' st.json
	[ ! -e v/pb/global/v000001 ]
	[ -z "$(find v -name '.*')" ]
	[ "$(cat v/pb/global/retention)" = "cnt-retention 1
superseded 1 1772368200000
superseded 2 1772371799000
superseded 3 1772371800000
retired 1 1772371800000" ]
	run -7 --separate-stderr cnt-rank -w v -b pb --pin "$t1" top 2 --offset 2
	[ -z "$output" ]
	[ "$stderr" = "cnt-rank: board 'pb' scope 'global': version 1 is no longer retained: retired at 2026-03-01T13:30:00.000Z; the published version is now 4" ]
	run -7 cnt-rank -w v -b pb --view-version 1 rank a
	[ "$output" = "cnt-rank: board 'pb' scope 'global': version 1 is no longer retained: retired at 2026-03-01T13:30:00.000Z; the published version is now 4" ]
	cnt-rank -w v -b pb --pin "$t2" top 1 | one '.version == 2'
	# a version never recorded is still just missing (2)
	run -2 cnt-rank -w v -b pb --view-version 9 top
	# a rollback to a retired version is refused, and nothing moves
	run -2 cnt-project -w v -b pb --publish 1
	[ "$output" = "cnt-project: no scope was switched: '$BATS_TEST_TMPDIR/v/pb/global' cannot be published again (rebuild the view from the log): board 'pb' scope 'global': version 1 is no longer retained: retired at 2026-03-01T13:30:00.000Z; the published version is now 4" ] ||
	[ "$output" = "cnt-project: no scope was switched: 'v/pb/global' cannot be published again (rebuild the view from the log): board 'pb' scope 'global': version 1 is no longer retained: retired at 2026-03-01T13:30:00.000Z; the published version is now 4" ]
	[ "$(readlink v/pb/global/current)" = v000004 ]
	# a rollback to a retained one is recorded (no definitions: nothing retired by it)
	cnt-project -w v -b pb --publish 2 --now 2026-03-01T14:00:00Z
	tail -n 1 v/pb/global/retention | grep -qx 'superseded 4 1772373600000'
	[ -d v/pb/global/v000003 ]
}

@test "retention: retain_versions_min keeps the most recently superseded whatever their age; defaults keep a day" {
	for i in 1 2 3 4; do build keep2 1 2026-03-01T1$i:00:00Z; done
	ls v/keep2/global | paste -sd' ' - | grep -qx 'current retention v000002 v000003 v000004'
	grep -qx 'retired 1 1772373600000' v/keep2/global/retention
	[ "$(grep -c retired v/keep2/global/retention)" -eq 1 ]
	# default: a day, and one kept whatever its age
	build dflt 1 2026-03-01T10:00:00Z
	build dflt 1 2026-03-01T11:00:00Z
	build dflt 1 2026-03-02T10:59:59Z
	ls v/dflt/global | paste -sd' ' - | grep -qx 'current retention v000001 v000002 v000003'
	build dflt 1 2026-03-02T11:00:00Z
	ls v/dflt/global | paste -sd' ' - | grep -qx 'current retention v000002 v000003 v000004'
	# versions built while frozen wait; never published, they are passed over by a later publish
	cnt-project -w v -b dflt --freeze
	build dflt 1 2026-03-05T00:00:00Z
	build dflt 1 2026-03-05T01:00:00Z
	ls v/dflt/global | paste -sd' ' - | grep -qx 'current frozen retention v000002 v000003 v000004 v000005 v000006'
	cnt-project -w v -b dflt --unfreeze
	build dflt 1 2026-03-06T02:00:00Z
	grep -qx 'superseded 5 1772762400000' v/dflt/global/retention
	grep -qx 'superseded 6 1772762400000' v/dflt/global/retention
	ls v/dflt/global | paste -sd' ' - | grep -qx 'current retention v000004 v000005 v000006 v000007'
}

@test "retention: of a season board, the newest version of each season is never retired" {
	cnt-project -d "$D" -b sb -w v --season s1 --now 2026-03-01T12:00:00Z "$F/b1.avro"
	cnt-project -d "$D" -b sb -w v --season s1 --now 2026-03-01T23:00:00Z "$F/b1.avro"
	cnt-project -d "$D" -b sb -w v --now 2026-03-02T12:00:00Z "$F/b1.avro"
	cnt-project -d "$D" -b sb -w v --now 2026-03-03T12:00:00Z "$F/b1.avro"
	# v1 (s1, superseded by s1's v2) and v3 (s2, superseded by v4) are retired
	# at once (retain 0 s, none kept by count); v2, s1's last, stays
	ls v/sb/global | paste -sd' ' - | grep -qx 'current retention v000002 v000004'
	cnt-rank -w v -b sb --view-version 2 top 1 | one '.version == 2'
}

@test "definitions: the retention keys are checked, and are not part of the board's fingerprint" {
	jq '.leaderboards[0].retain_versions_s = -1' "$D" >bad.json
	run -2 cnt-defs check "$D" bad.json
	[[ $output == *'$.leaderboards[0].retain_versions_s: -1 is out of range [0, 34560000]'* ]]
	jq '.leaderboards[0].retain_versions_min = 1001' "$D" >bad.json
	run -2 cnt-defs check "$D" bad.json
	[[ $output == *'$.leaderboards[0].retain_versions_min: 1001 is out of range [0, 1000]'* ]]
	jq '.leaderboards[0].retain_versions_s = "1d"' "$D" >bad.json
	run -2 cnt-defs check "$D" bad.json
	[[ $output == *'retain_versions_s: expected an integer, got string'* ]]
	# changing it is compatible (cnt-defs check), and under published views
	# the next build publishes
	build pb 1 2026-03-01T12:00:00Z
	jq '.leaderboards[0].retain_versions_s = 60 | .leaderboards[0].retain_versions_min = 3' "$D" >d2.json
	run -0 cnt-defs check "$D" d2.json
	cnt-project -d d2.json -b pb -w v --now 2026-03-01T12:00:00Z "$F/b1.avro"
	[ "$(readlink v/pb/global/current)" = v000002 ]
}

@test "a damaged retention record is an error, never reset" {
	build pb 1 2026-03-01T12:00:00Z
	build pb 1 2026-03-01T12:10:00Z
	printf 'cnt-retention 1\nsuperseded one 5\n' >v/pb/global/retention
	run -2 build pb 1 2026-03-01T12:20:00Z
	[[ $output == *"retention record '"*"/retention' line 2: damaged (expected 'superseded|retired VERSION MS')" ]]
	[ "$(cat v/pb/global/retention)" = "cnt-retention 1
superseded one 5" ]
}
