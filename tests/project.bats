#!/usr/bin/env bats
# cnt-project: windows composed in the tenant's timezone (every kind, at
# its boundaries, in Asia/Kolkata, America/St_Johns and Europe/Berlin),
# ranking and numbering with ties, scopes, versions, publishing, rollback,
# freezing, reproducibility, shard fan-in, errors.
#
# The window expectations come from data/views/gen-windows.py, which
# computes every boundary with Python's zoneinfo and the rules of lib/time/tz.h;
# rankings are worked out by hand in the comments beside them.

bats_require_minimum_version 1.5.0
load data/views/common

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	"$PY" "$VDATA/gen-windows.py" win.jsonl cases.jsonl
	# all window events admitted long after they happened (defs.json gives
	# every counter a year of lateness, so none is late)
	buckets win.jsonl win.avro 2026-12-01T00:00:00Z
	buckets "$VDATA/ranking.jsonl" rank.avro
	buckets "$VDATA/geo.jsonl" geo.avro
	buckets "$VDATA/cap.jsonl" cap.avro
}

setup() {
	set -o pipefail
	cd "$BATS_TEST_TMPDIR"
	F=$BATS_FILE_TMPDIR
}

# check_case CASE: builds the case's board at its --now (and --season) from
# the window buckets; the members of the case in the view must be exactly
# those named CASE.in.*, each with value 1, and the view must record the
# window [from, to) gen-windows.py computed.
check_case() {
	local c=$1 line b now season got want
	line=$(jq -c --arg c "$c" 'select(.case == $c)' "$F/cases.jsonl")
	[ -n "$line" ]
	b=$(jq -r .board <<<"$line")
	now=$(jq -r .now <<<"$line")
	season=$(jq -r '.season // empty' <<<"$line")
	cnt-project -d "$DEFS" -b "$b" -w "v-$c" --now "$now" ${season:+--season "$season"} "$F/win.avro"
	got=$(cnt-cat "v-$c/$b/global/current/view.avro" |
		jq -r --arg p "$c." 'select(.member_ref | startswith($p)) | "\(.member_ref)=\(.value)"' | sort | paste -sd' ' -)
	want=$(jq -r --arg p "$c.in." 'select(.member_ref | startswith($p)) | "\(.member_ref)=1"' "$F/win.jsonl" |
		sort | paste -sd' ' -)
	echo "$c: got  $got"
	echo "$c: want $want"
	[ -n "$want" ]
	[ "$got" = "$want" ]
	desc "v-$c/$b/global/current" | one --argjson l "$line" \
		'.window.from == $l.from and .window.to == $l.to and .board == $l.board'
}

@test "--help and --version" {
	run -0 cnt-project --help
	[[ $output == usage:* ]]
	[[ $output == *--scopes-from* ]]
	run -0 cnt-project --version
	[[ $output == "cnt-project "* ]]
}

@test "day: Kolkata; St. John's spring-forward day (23 h); Berlin fall-back day (25 h)" {
	check_case kol_day
	check_case stj_day
	check_case ber_day
	desc v-stj_day/stj_day/global/current | one '.window.kind == "day" and .window.timezone == "America/St_Johns"'
}

@test "week: Kolkata from Monday, St. John's from Sunday, Berlin's week ending on the spring-forward Sunday" {
	check_case kol_week
	check_case stj_week
	check_case ber_week
}

@test "month: February in Kolkata; March in St. John's and Berlin (DST inside), Berlin asked at 23:30 on the 31st" {
	check_case kol_month
	check_case stj_month
	check_case ber_month
}

@test "rolling_24h: ends at the end of the bucket of now - 1 ms; 24 absolute hours across the gap" {
	check_case kol_r24
	check_case ber_r24     # now 12:30: its own partial hour is in
	check_case ber_r24h    # now 12:00 exactly: the window ends there
	check_case stj_r24     # back across St. John's spring forward
}

@test "last_30d: 30 local days ending today, across the spring forward in Berlin and St. John's" {
	check_case ber_30d
	check_case stj_30d
}

@test "season: named with --season, found from --now, local times in the season's own zone" {
	check_case ber_s1
	check_case ber_s2
	desc v-ber_s2/ber_season/global/current | one '.window.label == "s2"'
	desc v-ber_s1/ber_season/global/current | one '.window.label == "s1"'
	# regression: s3's local times are Kolkata's (the season's timezone),
	# not the tenant's (Berlin)
	check_case ber_s3
}

@test "season: no season open at --now, or an unknown --season, stops with one line" {
	run -2 cnt-project -d "$DEFS" -b ber_season -w v --now 2026-02-01T00:00:00Z "$F/win.avro"
	[ "${#lines[@]}" -eq 1 ]
	[[ $output == "cnt-project: board 'ber_season' has no season open at --now"* ]]
	run -2 cnt-project -d "$DEFS" -b ber_season -w v --season nope --now 2026-04-15T00:00:00Z "$F/win.avro"
	[ "$output" = "cnt-project: board 'ber_season' has no season 'nope'" ]
	[ ! -e v/ber_season/global/current ]
}

@test "range: local times (Berlin) and instants (St. John's) across the gap; 'to' rounds up to its bucket's end" {
	check_case ber_range
	check_case stj_range
}

# ranking.jsonl (utc/pts, all time), worked out by hand:
#   a 10 (last event 10:00)   b 5+3 = 8 (10:30)   c 8 (11:00)   d 8 (10:30)   e 2 (12:00)
# earliest_achiever: a, then b and d (8 at 10:30, tied; member_ref orders
# them), then c (8 later), then e.
@test "competition numbering with earliest_achiever: 1, 2, 2, 4, 5" {
	cnt-project -d "$DEFS" -b rk_comp -w v --now "$INGEST_NOW" "$F/rank.avro"
	[ "$(members v/rk_comp/global/current)" = "a:1:10 b:2:8 d:2:8 c:4:8 e:5:2" ]
	desc v/rk_comp/global/current | one '.rank_numbering == "competition" and
		.tie_break == ["earliest_achiever", "member_ref_asc"] and .order == "desc"'
	# last_event_time is the latest contributing event (b's second one)
	cnt-cat v/rk_comp/global/current/view.avro | jq -c 'select(.member_ref == "b")' |
		one '.last_event_time == 1772361000000'
}

@test "dense numbering: 1, 2, 2, 3, 4" {
	cnt-project -d "$DEFS" -b rk_dense -w v --now "$INGEST_NOW" "$F/rank.avro"
	[ "$(members v/rk_dense/global/current)" = "a:1:10 b:2:8 d:2:8 c:3:8 e:4:2" ]
}

@test "ordinal numbering: 1, 2, 3, 4, 5 (ties still ordered by the rules)" {
	cnt-project -d "$DEFS" -b rk_ord -w v --now "$INGEST_NOW" "$F/rank.avro"
	[ "$(members v/rk_ord/global/current)" = "a:1:10 b:2:8 d:3:8 c:4:8 e:5:2" ]
}

@test "latest_achiever: the later achiever of a value ranks first" {
	# c reached 8 at 11:00, b and d at 10:30 (tied)
	cnt-project -d "$DEFS" -b rk_latest -w v --now "$INGEST_NOW" "$F/rank.avro"
	[ "$(members v/rk_latest/global/current)" = "a:1:10 c:2:8 b:3:8 d:3:8 e:5:2" ]
	desc v/rk_latest/global/current | one '.tie_break == ["latest_achiever", "member_ref_asc"]'
}

@test "member_ref_asc alone: equal values tie whatever their times; competition and dense" {
	cnt-project -d "$DEFS" -b rk_ref -w v --now "$INGEST_NOW" "$F/rank.avro"
	[ "$(members v/rk_ref/global/current)" = "a:1:10 b:2:8 c:2:8 d:2:8 e:5:2" ]
	cnt-project -d "$DEFS" -b rk_ref_dense -w v --now "$INGEST_NOW" "$F/rank.avro"
	[ "$(members v/rk_ref_dense/global/current)" = "a:1:10 b:2:8 c:2:8 d:2:8 e:3:2" ]
	desc v/rk_ref/global/current | one '.tie_break == ["member_ref_asc"]'
}

@test "order asc: smaller values rank higher" {
	# e 2; then the 8s, earliest first (b, d at 10:30 tied; c 11:00); a 10
	cnt-project -d "$DEFS" -b rk_asc -w v --now "$INGEST_NOW" "$F/rank.avro"
	[ "$(members v/rk_asc/global/current)" = "e:1:2 b:2:8 d:2:8 c:3:8 a:4:10" ]
}

@test "materialised_cap 3: view.avro holds the head, index.bin every member with a histogram" {
	cnt-project -d "$DEFS" -b cap3 -w v --now "$INGEST_NOW" "$F/cap.avro"
	[ "$(members v/cap3/global/current)" = "p1:1:100 p2:2:90 p3:3:80" ]
	desc v/cap3/global/current | one '.members == 7 and .head == 3 and .materialised_cap == 3 and
		.histogram.scale == "linear" and .histogram.bins > 1 and .freshness_budget_s == 600'
	# index.bin's header (cnt-view(5)): n = 7, head = 3, and the histogram
	# counts add up to n
	"$PY" - v/cap3/global/current/index.bin <<'EOF'
import struct, sys
b = open(sys.argv[1], "rb").read()
assert b[:8] == b"CNTVIEW2"
length, d, n, head, nbins, pool, slots = struct.unpack_from("<7Q", b, 32)
assert length == len(b) and (n, head) == (7, 3), (length, n, head)
o = 88 + d + (8 - d % 8) % 8
vals = [struct.unpack_from("<q", b, o + 32 * i)[0] for i in range(n)]
assert vals == [100, 90, 80, 75, 70, 40, 10], vals
o += 32 * n + 4 * slots
edges = struct.unpack_from("<%dq" % (nbins + 1), b, o)
counts = struct.unpack_from("<%dQ" % nbins, b, o + 8 * (nbins + 1))
assert list(edges) == sorted(edges) and sum(counts) == n, (edges, counts)
# linear, width 10 from the smallest value: every value in its bin
for v in vals:
    i = max(k for k in range(nbins) if edges[k] <= v)
    assert edges[i] <= v < edges[i + 1] and edges[i + 1] - edges[i] <= 10, (v, edges)
EOF
}

@test "the view's header: cnt-cat prints view.avro and its description" {
	cnt-project -d "$DEFS" -b rk_comp -w v --now 2026-03-02T00:00:00Z "$F/rank.avro"
	run -0 cnt-cat v/rk_comp/global/v000001/view.avro
	[ "${#lines[@]}" -eq 5 ]
	echo "${lines[0]}" | one '. == {"rank": 1, "member_ref": "a", "value": 10, "last_event_time": 1772359200000}'
	desc v/rk_comp/global/v000001 | one --argjson asof "$INGEST_NOW_MS" '.board == "rk_comp" and .scope == "global" and
		.scope_kind == "global" and .version == 1 and .tenant_id == "utc" and .counter_id == "pts" and
		.as_of == $asof and .log_position.max_ingest_time == $asof and .built_at == 1772409600000 and
		.members == 5 and .head == 5 and .window.kind == "all_time"'
	# index.bin carries the same description
	"$PY" - v/rk_comp/global/v000001 <<'EOF'
import json, struct, subprocess, sys
b = open(sys.argv[1] + "/index.bin", "rb").read()
d = struct.unpack_from("<Q", b, 40)[0]
meta = json.loads(subprocess.run(["cnt-cat", "--meta", sys.argv[1] + "/view.avro"], capture_output=True, check=True).stdout)
assert b[88:88 + d].decode() == meta["metadata"]["cnt.view"]
EOF
}

@test "region scope from events: one view per region, a member in its latest event's region only" {
	cnt-project -d "$DEFS" -b region -w v --now "$INGEST_NOW" --scopes-from "$F/geo.avro.events" \
		--stats st.json "$F/geo.avro"
	ls v/region | sort | paste -sd' ' - | grep -qx 'apac eu us'
	# g3 moved from eu (09:00) to us (11:00): counted whole (1 + 2) in us;
	# g5 has no region: left out; g6's two regions at the same instant are
	# settled by event id
	[ "$(members v/region/eu/current)" = "g1:1:5" ] || [ "$(members v/region/eu/current)" = "g1:1:5 g6:2:2" ]
	[[ "$(members v/region/us/current)" == "g2:1:7 g3:2:3"* ]]
	[ "$(members v/region/apac/current)" = "g4:1:4" ]
	all=$(for s in apac eu us; do cnt-cat v/region/$s/current/view.avro; done | jq -r .member_ref | sort | paste -sd' ' -)
	[ "$all" = "g1 g2 g3 g4 g6" ]
	one '.members == 5 and .unscoped == 1 and (.scopes | map(.scope) | sort) == ["apac", "eu", "us"]' st.json
	desc v/region/us/current | one '.scope == "us" and .scope_kind == "region"'
}

@test "region scope: the same views, byte for byte, whatever the order of the events" {
	cnt-project -d "$DEFS" -b region -w v1 --now "$INGEST_NOW" --scopes-from "$F/geo.avro.events" "$F/geo.avro"
	tac "$VDATA/geo.jsonl" >rev.jsonl
	events rev.jsonl rev.avro
	cnt-project -d "$DEFS" -b region -w v2 --now "$INGEST_NOW" --scopes-from rev.avro "$F/geo.avro"
	for s in apac eu us; do cmp v1/region/$s/v000001/index.bin v2/region/$s/v000001/index.bin; done
}

@test "cohort scope from a membership file: one view per cohort, the last line for a member wins" {
	cnt-project -d "$DEFS" -b cohort -w v --now "$INGEST_NOW" --scopes "$VDATA/cohorts.csv" --stats st.json "$F/geo.avro"
	ls v/cohort | sort | paste -sd' ' - | grep -qx 'div-a div-b'
	# div-a: g5 9, g1 5, g4 4 (moved by its second line), g3 3; div-b: g2 7;
	# g6 has no cohort
	[ "$(members v/cohort/div-a/current)" = "g5:1:9 g1:2:5 g4:3:4 g3:4:3" ]
	[ "$(members v/cohort/div-b/current)" = "g2:1:7" ]
	one '.unscoped == 1 and .members == 5' st.json
}

@test "a scoped board without --scopes or --scopes-from stops" {
	run -2 cnt-project -d "$DEFS" -b cohort -w v --now "$INGEST_NOW" "$F/geo.avro"
	[ "$output" = "cnt-project: board 'cohort' is scoped by cohort: give --scopes FILE" ]
	printf 'g1\n' >bad.csv
	run -2 cnt-project -d "$DEFS" -b cohort -w v --now "$INGEST_NOW" --scopes bad.csv "$F/geo.avro"
	[ "$output" = "cnt-project: 'bad.csv' line 1: expected member_ref,scope" ]
	[ ! -e v/cohort ] || [ -z "$(ls v/cohort)" ]
}

@test "rebuilt from the same buckets at the same --now: the same bytes" {
	cnt-project -d "$DEFS" -b cap3 -w v1 --now "$INGEST_NOW" "$F/cap.avro"
	cnt-project -d "$DEFS" -b cap3 -w v2 --now "$INGEST_NOW" "$F/cap.avro"
	cmp v1/cap3/global/v000001/index.bin v2/cap3/global/v000001/index.bin
	cmp v1/cap3/global/v000001/view.avro v2/cap3/global/v000001/view.avro
	# a second version in the same directory differs only in its number
	# (and the header checksum over it)
	cnt-project -d "$DEFS" -b cap3 -w v1 --now "$INGEST_NOW" "$F/cap.avro"
	"$PY" - v1/cap3/global/v000001/index.bin v1/cap3/global/v000002/index.bin <<'EOF'
import json, struct, sys
def split(p):
    b = open(p, "rb").read()
    d = struct.unpack_from("<Q", b, 40)[0]
    return json.loads(b[88:88 + d]), b[16:88], b[88 + d + (8 - d % 8) % 8:]
(d1, h1, t1), (d2, h2, t2) = split(sys.argv[1]), split(sys.argv[2])
assert (d1.pop("version"), d2.pop("version")) == (1, 2)
assert d1 == d2 and h1 == h2 and t1 == t2
EOF
}

@test "buckets split over 4 shards fan in to the same view" {
	buckets "$VDATA/cap.jsonl" sharded.avro "$INGEST_NOW" 4
	# the shards really are split: more than one shard number among the records
	[ "$(cnt-cat sharded.avro | jq -s 'map(.shard) | unique | length')" -gt 1 ]
	cnt-project -d "$DEFS" -b cap3 -w v1 --now "$INGEST_NOW" "$F/cap.avro"
	cnt-project -d "$DEFS" -b cap3 -w v2 --now "$INGEST_NOW" sharded.avro
	cmp v1/cap3/global/v000001/index.bin v2/cap3/global/v000001/index.bin
	# bucket files in pieces, in either order, give the same bytes
	head -n 4 "$VDATA/cap.jsonl" >c1.jsonl
	tail -n +5 "$VDATA/cap.jsonl" | tac >c2.jsonl
	buckets c1.jsonl c1.avro
	buckets c2.jsonl c2.avro
	cnt-project -d "$DEFS" -b cap3 -w v5 --now "$INGEST_NOW" c2.avro c1.avro
	cmp v1/cap3/global/v000001/index.bin v5/cap3/global/v000001/index.bin
	# buckets of other counters are read and skipped
	cnt-project -d "$DEFS" -b rk_comp -w v3 --now "$INGEST_NOW" "$F/rank.avro"
	cnt-project -d "$DEFS" -b rk_comp -w v4 --now "$INGEST_NOW" "$F/cap.avro" "$F/rank.avro" "$F/geo.avro"
	cmp v3/rk_comp/global/v000001/index.bin v4/rk_comp/global/v000001/index.bin
}

@test "versions, publishing, --no-publish, rollback with --publish N; old versions are kept (within the retention period)" {
	cnt-project -d "$DEFS" -b rk_comp -w v --now "$INGEST_NOW" "$F/rank.avro"
	[ "$(readlink v/rk_comp/global/current)" = v000001 ]
	cnt-project -d "$DEFS" -b rk_comp -w v --now "$INGEST_NOW" "$F/rank.avro"
	[ "$(readlink v/rk_comp/global/current)" = v000002 ]
	cnt-project -d "$DEFS" -b rk_comp -w v --now "$INGEST_NOW" --no-publish "$F/rank.avro"
	[ "$(readlink v/rk_comp/global/current)" = v000002 ]
	[ -f v/rk_comp/global/v000003/index.bin ]
	cnt-rank -w v -b rk_comp top 1 | one '.version == 2'
	# roll back to 1: the link moves, cnt-rank answers version 1
	run -0 cnt-project -w v -b rk_comp --publish 1
	[ -z "$output" ]
	[ "$(readlink v/rk_comp/global/current)" = v000001 ]
	cnt-rank -w v -b rk_comp rank c | one '.version == 1 and .rank == 4'
	# and forward to the unpublished 3
	cnt-project -w v -b rk_comp --scope global --publish 3
	cnt-rank -w v -b rk_comp top 1 | one '.version == 3'
	ls v/rk_comp/global | paste -sd' ' - | grep -qx 'current retention v000001 v000002 v000003'
	# no temporary links or directories are left behind
	[ -z "$(find v -name '.*')" ]
	run -2 cnt-project -w v -b rk_comp --publish 9
	[ "${#lines[@]}" -eq 1 ]
	[[ $output == "cnt-project: "*"has no version 9 to publish" ]]
	[ "$(readlink v/rk_comp/global/current)" = v000003 ]
	run -2 cnt-project -w v -b rk_comp --publish x
	[ "${lines[0]}" = "cnt-project: --publish: 'x' is not a whole number from 1 to 999999" ]
	[[ ${lines[1]} == usage:* ]]
	# the pointer operations take no bucket files
	run -2 cnt-project -w v -b rk_comp --publish 1 "$F/rank.avro"
	[ "${lines[0]}" = "cnt-project: unexpected operand '$F/rank.avro': this tool takes no bucket files with --publish, --freeze or --unfreeze" ]
	[ "$(readlink v/rk_comp/global/current)" = v000003 ]
}

@test "freeze: a rebuild writes a version but current stays; cnt-rank says frozen; unfreeze resumes" {
	cnt-project -d "$DEFS" -b rk_comp -w v --now "$INGEST_NOW" "$F/rank.avro"
	cnt-project -w v -b rk_comp --freeze
	[ -e v/rk_comp/global/frozen ]
	cnt-rank -w v -b rk_comp top 1 | one '.frozen == true and .version == 1'
	run -0 cnt-project -d "$DEFS" -b rk_comp -w v --now "$INGEST_NOW" -v --stats st.json "$F/rank.avro"
	[[ $output == *"rk_comp/global: version 2, 5 members, not published (scope frozen)"* ]]
	one '.scopes == [{"scope": "global", "version": 2, "members": 5, "published": false, "retired": 0}]' st.json
	[ "$(readlink v/rk_comp/global/current)" = v000001 ]
	[ -f v/rk_comp/global/v000002/index.bin ]
	# an operator may still move the pointer by hand while frozen
	cnt-project -w v -b rk_comp --unfreeze
	[ ! -e v/rk_comp/global/frozen ]
	cnt-rank -w v -b rk_comp top 1 | one '.frozen == false and .version == 1'
	cnt-project -d "$DEFS" -b rk_comp -w v --now "$INGEST_NOW" "$F/rank.avro"
	[ "$(readlink v/rk_comp/global/current)" = v000003 ]
	# --freeze on one scope of a scoped board leaves the others alone
	cnt-project -d "$DEFS" -b cohort -w c --now "$INGEST_NOW" --scopes "$VDATA/cohorts.csv" "$F/geo.avro"
	cnt-project -w c -b cohort --scope div-a --freeze
	cnt-project -d "$DEFS" -b cohort -w c --now "$INGEST_NOW" --scopes "$VDATA/cohorts.csv" "$F/geo.avro"
	[ "$(readlink c/cohort/div-a/current)" = v000001 ]
	[ "$(readlink c/cohort/div-b/current)" = v000002 ]
}

@test "--stats: buckets read and used, members, scopes" {
	cnt-project -d "$DEFS" -b kol_day -w v --now 1773124200000 --stats st.json "$F/win.avro"
	# every bucket record of the file is read; kol_day uses the 2 in-window
	# events of its case and the kol events of other cases that fall in the
	# same day (counted independently from gen-windows' output)
	used=$(jq -s --slurpfile c "$F/cases.jsonl" '($c[] | select(.case == "kol_day")) as $k |
		map(select(.tenant_id == "kol" and .event_time >= $k.from and .event_time < $k.to)) | length' "$F/win.jsonl")
	records=$(cnt-cat --count "$F/win.avro")
	one --argjson u "$used" --argjson r "$records" \
		'.tool == "cnt-project" and .in == $r and .buckets_used == $u and .members == $u and .unscoped == 0' st.json
}

@test "errors: unknown board, missing options, unreadable or wrong input, each one line and exit 2" {
	run -2 cnt-project -d "$DEFS" -b nope -w v --now "$INGEST_NOW" "$F/rank.avro"
	[ "$output" = "cnt-project: board 'nope' is not declared in '$DEFS'" ]
	run -2 cnt-project -d "$DEFS" -b rk_comp -w v --now "$INGEST_NOW" missing.avro
	[ "$output" = "cnt-project: cannot open 'missing.avro': No such file or directory" ]
	run -2 cnt-project -d "$DEFS" -b rk_comp -w v --now yesterday "$F/rank.avro"
	[ "${lines[0]}" = "cnt-project: --now: 'yesterday' is not an RFC 3339 time or epoch milliseconds" ]
	[[ ${lines[1]} == usage:* ]]
	# an events file is not a bucket file
	run -2 cnt-project -d "$DEFS" -b rk_comp -w v --now "$INGEST_NOW" "$F/rank.avro.events"
	[ "${#lines[@]}" -eq 1 ]
	[[ $output == "cnt-project: "* ]]
	[ ! -e v/rk_comp/global/current ]
	run -2 cnt-project -d "$DEFS" -w v "$F/rank.avro"
	[[ ${lines[0]} == "cnt-project: -b board and -w views are required" ]]
	run -2 cnt-project -b rk_comp -w v "$F/rank.avro"
	[[ ${lines[0]} == "cnt-project: building a view needs -d definitions and bucket files" ]]
	run -2 cnt-project -w v -b nope --freeze
	[ "${#lines[@]}" -eq 1 ]
	[[ $output == "cnt-project: no views of board 'nope' in 'v'"* ]]
}

@test "regression: a region key that needs escaping gives a safe directory and valid --stats JSON" {
	printf '%s\n' '{"idempotency_key":"q1","tenant_id":"utc","counter_id":"geo","member_ref":"q","delta":1,"event_time":"2026-03-01T10:00:00Z","attrs":{"region":"a\"b/../c"}}' >q.jsonl
	buckets q.jsonl q.avro
	cnt-project -d "$DEFS" -b region -w v --now "$INGEST_NOW" --scopes-from q.avro.events --stats st.json q.avro
	one '.scopes[0].scope == "a\"b/../c" and .scopes[0].members == 1' st.json
	[ "$(ls v/region)" = 'a%22b%2F..%2Fc' ]
	cnt-rank -w v -b region --scope 'a"b/../c' rank q | one '.scope == "a\"b/../c" and .rank == 1'
}

@test "region scope from events: an empty value places no one; a value that is not text stops the build, naming the event" {
	# g1 (eu at 10:00) sends an empty region later: it stays in eu, and no
	# scope named '' (which would be the board's own directory) appears
	{ cat "$VDATA/geo.jsonl"
	  printf '%s\n' '{"idempotency_key":"ge","tenant_id":"utc","counter_id":"geo","member_ref":"g1","delta":1,"event_time":"2026-03-01T11:30:00Z","attrs":{"region":""}}'
	} >e.jsonl
	buckets e.jsonl e.avro
	cnt-project -d "$DEFS" -b region -w v --now "$INGEST_NOW" --scopes-from e.avro.events --stats st.json e.avro
	ls v/region | sort | paste -sd' ' - | grep -qx 'apac eu us'
	[[ "$(members v/region/eu/current)" == "g1:1:6"* ]]
	one '(.scopes | map(.scope) | sort) == ["apac", "eu", "us"] and .unscoped == 1' st.json
	# a log no cnt tool wrote: a NUL in g2's region
	"$PY" "$BATS_TEST_DIRNAME/data/core/avro-poke.py" e.avro.events bad.avro g2 attrs '{**v, "region": "u\0s"}'
	run -2 --separate-stderr cnt-project -d "$DEFS" -b region -w w --now "$INGEST_NOW" --scopes-from bad.avro e.avro
	id=$(cnt-cat e.avro.events | jq -r 'select(.idempotency_key == "g2") | .event_id')
	[ "$stderr" = "cnt-project: 'bad.avro' record 2: event '$id': attrs 'region' is not UTF-8 text, so it cannot name a scope (cnt-ingest admits only text: was this log written by another tool?)" ]
	[ ! -e w/region ] || [ -z "$(ls -A w/region)" ]
}

@test "--scopes: a scope that is not UTF-8 text is refused with its line" {
	printf 'member_ref,scope\ng1,div-a\ng2,d\377v\n' >bad.csv
	run -2 --separate-stderr cnt-project -d "$DEFS" -b cohort -w v --now "$INGEST_NOW" --scopes bad.csv "$F/geo.avro"
	[ "$stderr" = "cnt-project: 'bad.csv' line 3: the scope is not UTF-8 text" ]
}

@test "--scopes and --scopes-from are refused on a global board" {
	run -2 cnt-project -d "$DEFS" -b cap3 -w v --now "$INGEST_NOW" --scopes "$VDATA/cohorts.csv" "$F/cap.avro"
	[ "${#lines[@]}" -eq 1 ]
	[[ $output == "cnt-project: board 'cap3' is global: --scopes and --scopes-from are for region and cohort boards" ]]
	[ ! -e v ]
}

@test "a scope can be frozen before its first view; publishing all scopes checks every scope first" {
	run -0 cnt-project -w v -b cap3 --scope global --freeze
	[ -f v/cap3/global/frozen ]
	cnt-project -d "$DEFS" -b cap3 -w v --now "$INGEST_NOW" "$F/cap.avro"
	[ -d v/cap3/global/v000001 ]
	[ ! -e v/cap3/global/current ]
	# two scopes; only one has version 2: a board-wide --publish 2 switches none
	cnt-project -d "$DEFS" -b cohort -w v --now "$INGEST_NOW" --scopes "$VDATA/cohorts.csv" "$F/geo.avro"
	scopes=$(ls v/cohort)
	first=$(echo "$scopes" | head -n 1)
	cnt-project -d "$DEFS" -b cohort -w v --now "$INGEST_NOW" --no-publish --scopes "$VDATA/cohorts.csv" "$F/geo.avro"
	rm -r "v/cohort/$first/v000002"
	run -2 cnt-project -w v -b cohort --publish 2
	[[ $output == "cnt-project: no scope was switched: "*"has no version 2 to publish" ]]
	for s in $scopes; do [ "$(readlink "v/cohort/$s/current")" = v000001 ]; done
}

@test "option vocabulary: -w views, --scope long only, options after the bucket files; the old -D and -s are refused" {
	run -0 cnt-project --help
	[[ $output == *"-w, --views DIR"* && $output == *"--scope KEY"* ]]
	[[ $output != *"-D,"* && $output != *"-s,"* ]]
	run -0 cnt-project --version
	[[ $output =~ ^cnt-project\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
	# GNU order: options may follow the operands
	cnt-project "$F/rank.avro" -d "$DEFS" -b rk_comp -w v --now "$INGEST_NOW"
	[ "$(members v/rk_comp/global/current)" = "a:1:10 b:2:8 d:2:8 c:4:8 e:5:2" ]
	run -2 cnt-project -d "$DEFS" -b rk_comp -D v --now "$INGEST_NOW" "$F/rank.avro"
	[[ ${lines[0]} == *"invalid option -- 'D'"* ]]
	run -2 cnt-project -w v -b rk_comp -s global --freeze
	[[ ${lines[0]} == *"invalid option -- 's'"* ]]
	run -0 cnt-project -w v -b rk_comp --scope global --freeze
	[ -e v/rk_comp/global/frozen ]
	run -2 cnt-project -d "$DEFS" -b rk_comp -w v --bogus "$F/rank.avro"
	[[ ${lines[0]} == *"unrecognized option '--bogus'"* ]]
}

@test "every view written verifies, and its description reads back as written" {
	cnt-project -d "$DEFS" -b cohort -w v --now "$INGEST_NOW" --scopes "$VDATA/cohorts.csv" "$F/geo.avro"
	for s in div-a div-b; do
		cnt-rank -w v -b cohort --scope "$s" verify | one --arg s "$s" '.intact and .scope == $s'
		desc "v/cohort/$s/current" | one --arg s "$s" '.scope == $s and .scope_kind == "cohort" and
			.counter_version == null and .counter_type == "exact" and .members == .head'
	done
	# an empty view (a cohort of nobody counted) verifies too
	printf 'member_ref,scope\nnobody,empty\n' >e.csv
	cnt-project -d "$DEFS" -b cohort -w e --now "$INGEST_NOW" --scopes e.csv "$F/geo.avro"
	cnt-rank -w e -b cohort --scope empty verify | one '.intact and .members == 0'
	cnt-rank -w e -b cohort --scope empty top | one '.entries == [] and .top == 0'
}

@test "outputs: --stats into a full disk is exit 3 and leaves no temporary file; a scopes line that never ends is refused" {
	run -3 cnt-project -d "$DEFS" -b rk_comp -w v --now "$INGEST_NOW" --stats /dev/full "$F/rank.avro"
	[ "$output" = "cnt-project: --stats: cannot write '/dev/full': No space left on device" ]
	[ -z "$(find . -name '*.tmp*' -o -name '.*.XXXXXX' -o -name '.v0*')" ]
	run -2 cnt-project -d "$DEFS" -b cohort -w c --now "$INGEST_NOW" --scopes /dev/zero "$F/geo.avro"
	[ "$output" = "cnt-project: '/dev/zero' line 1: longer than 65536 bytes" ]
	# nothing goes to standard output
	run -0 cnt-project -d "$DEFS" -b rk_comp -w v --now "$INGEST_NOW" --stats - "$F/rank.avro"
	echo "$output" | one '.tool == "cnt-project" and .scopes[0].version == 2'
	cnt-project -d "$DEFS" -b rk_comp -w v --now "$INGEST_NOW" "$F/rank.avro" >out.txt
	[ ! -s out.txt ]
}
