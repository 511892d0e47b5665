#!/usr/bin/env bats
# cnt-explain: every fate of a member's events, the value and rank equal to
# what cnt-project and cnt-rank publish from the pipeline's buckets for
# every counter type (and to the rebuild after a retraction), the check
# against a published view, hostile input.

bats_require_minimum_version 1.5.0
load data/core/common

NOW=2026-03-01T11:10:00Z     # on time for 10:xx events (lateness 600 s)
LATE=2026-03-01T11:40:00Z    # late for them, inside the dedup horizon (3600 s) of NOW
AT=2026-03-01T20:00:00Z      # the boards' window is taken at

setup() {
	set -o pipefail
	cd "$BATS_TEST_TMPDIR"
	# one counter of each type and a day board on each
	jq '.counters += [
		{tenant_id: "utc", counter_id: "lo", versions: [{version: 1, type: "min", lateness_horizon_s: 600}]},
		{tenant_id: "utc", counter_id: "hi", versions: [{version: 1, type: "max", lateness_horizon_s: 600}]}]
	    | .counters |= map(.versions |= map(.windows = ((.windows // []) + ["day"] | unique)))
	    | .leaderboards = ([["dist", "desc"], ["uniq", "desc"], ["lo", "asc"], ["hi", "desc"]] | map(
		{board_id: ("b-" + .[0]), tenant_id: "utc", counter_id: .[0], window: "day", scope_kind: "global",
		 order: .[1], tie_break: ["earliest_achiever", "member_ref_asc"], rank_numbering: "competition",
		 materialised_cap: 2, freshness_budget_s: 60}))' "$DEFS" >defs.json
	DEFS=$PWD/defs.json
}

# The log: for every counter, members m1..m4 with on-time events, a late
# one, a retry across segments (a dedup duplicate), an event of the day
# before (outside the window); admission side files with a reject and an
# in-batch retry of m1.
make_log() {
	for c in dist uniq lo hi; do
		ev "$c-1" "$c" m1 10 v1 2026-03-01T10:00:00Z
		ev "$c-2" "$c" m1 3 v2 2026-03-01T10:10:00Z
		ev "$c-3" "$c" m2 7 v1 2026-03-01T10:20:00Z
		ev "$c-4" "$c" m2 5 v3 2026-03-01T10:30:00Z
		ev "$c-7" "$c" m3 6 v4 2026-03-01T10:35:00Z
		ev "$c-8" "$c" m4 9 v5 2026-03-01T10:45:00Z
		ev "$c-1" "$c" m1 10 v1 2026-03-01T10:00:00Z
		printf '{"idempotency_key":"%s-bad","tenant_id":"utc","counter_id":"%s","member_ref":"m1","delta":"x","event_time":"2026-03-01T10:00:00Z"}\n' "$c" "$c"
	done >ontime.jsonl
	cnt-ingest -d "$DEFS" --now "$NOW" --max-past 400d -o log1.avro -r rejects.jsonl -D dups.jsonl ontime.jsonl
	for c in dist uniq lo hi; do
		ev "$c-5" "$c" m1 4 v4 2026-03-01T10:40:00Z
		ev "$c-2" "$c" m1 3 v2 2026-03-01T10:10:00Z
		ev "$c-9" "$c" m1 50 v6 2026-03-02T00:30:00Z
	done >late.jsonl
	cnt-ingest -d "$DEFS" --now "$LATE" --max-future 1d -o log2.avro late.jsonl
}

# publish BOARD BUCKETS...: cnt-project's view of BOARD at $AT
publish() {
	local b=$1
	shift
	cnt-project -d "$DEFS" -b "$b" -w views --now "$AT" "$@" 2>/dev/null
}

@test "every fate of a member's events, with where and why" {
	make_log
	run -0 cnt-explain -d "$DEFS" -b b-dist --member m1 --now "$AT" -r rejects.jsonl -D dups.jsonl \
		-F json log1.avro log2.avro
	echo "$output" >out.jsonl
	# log order: dist-1, dist-2 counted (log1); dist-5 late, dist-2 again a
	# duplicate, dist-9 outside the day (log2); then the side files
	[ "$(jq -r 'select(.kind == "event") | "\(.fate) \(.idempotency_key)"' out.jsonl | tr '\n' ,)" = \
		"counted dist-1,counted dist-2,late dist-5,duplicate dist-2,outside_window dist-9,rejected dist-bad,ingest_duplicate dist-1," ]
	jq -c 'select(.fate == "late")' out.jsonl | one '.deadline == "2026-03-01T11:10:00.000Z" and .late_by_ms == 1800000
		and .bucket_start == "2026-03-01T10:00:00.000Z" and .ingest_time == "2026-03-01T11:40:00.000Z"'
	jq -c 'select(.fate == "duplicate")' out.jsonl | one '.first_source == "log1.avro" and .first_record == 2 and .source == "log2.avro"'
	d2=$(jq -r 'select(.fate == "counted" and .idempotency_key == "dist-2") | .event_id' out.jsonl)
	[ "$(jq -r 'select(.fate == "duplicate") | .duplicate_of' out.jsonl)" = "$d2" ]
	jq -c 'select(.fate == "rejected")' out.jsonl | one '.reason == "bad_field" and .line == 8 and .source == "ontime.jsonl"'
	jq -c 'select(.fate == "ingest_duplicate")' out.jsonl | one '.line == 7 and .first_line == 1 and .reason == "duplicate"'
	jq -c 'select(.kind == "standing")' out.jsonl | one '.value == 13 and .rank == 1 and .members == 4 and .found
		and .fates == {counted: 2, outside_window: 1, late: 1, duplicate: 1, retracted: 0, compensation: 0,
		  rejected: 1, ingest_duplicate: 1, held: 0}'
	# the text form says the same for people
	run -0 cnt-explain -d "$DEFS" -b b-dist --member m1 --now "$AT" log1.avro log2.avro
	[[ ${lines[0]} == "m1 on b-dist (utc/dist, day: 2026-03-01T00:00:00.000Z .. 2026-03-02T00:00:00.000Z), scope global" ]]
	[[ ${lines[1]} == "value 13, rank 1 of 4, from the log as of 2026-03-01T11:40:00.000Z" ]]
	[[ $output == *"ingested 2026-03-01T11:40:00.000Z, deadline 2026-03-01T11:10:00.000Z: late by 30m00s.000"* ]]
}

@test "every counter type: value and rank are what cnt-project publishes from the pipeline's buckets" {
	make_log
	cnt-dedup -d "$DEFS" log1.avro log2.avro | cnt-window -d "$DEFS" | cnt-accumulate -o b.avro
	for c in dist uniq lo hi; do
		publish "b-$c" b.avro
		for m in m1 m2 m3 m4; do
			run -0 cnt-explain -d "$DEFS" -b "b-$c" --member "$m" --now "$AT" -w views -F json log1.avro log2.avro
			echo "$output" | jq -c 'select(.kind == "check")' | one '.agrees' ||
				{ echo "$c $m: $output"; return 1; }
			want=$(cnt-rank -w views -b "b-$c" --now "$AT" value "$m" | jq -r .value)
			[ "$(echo "$output" | jq -r 'select(.kind == "standing") | .value')" = "$want" ]
		done
	done
	# the values themselves: m1's sum 13, 3 distinct items, min 3, max 10
	for cv in dist:13 uniq:2 lo:3 hi:10; do
		run -0 cnt-explain -d "$DEFS" -b "b-${cv%%:*}" --member m1 --now "$AT" -F json log1.avro log2.avro
		[ "$(echo "$output" | jq -r 'select(.kind == "standing") | .value')" = "${cv#*:}" ]
	done
}

@test "retracted: both events count for nothing; the ledger gives cause and authority; min equals the rebuild" {
	make_log
	cnt-retract --event lo-2 --event dist-2 --tenant utc --cause fraud --requester ana --authority "case 7" \
		--ledger ledger.jsonl --now 2026-03-04T09:00:00Z -o comp.avro log1.avro log2.avro
	run -0 cnt-explain -d "$DEFS" -b b-dist --member m1 --now "$AT" --ledger ledger.jsonl -F json \
		log1.avro log2.avro comp.avro
	echo "$output" >out.jsonl
	rid=$(jq -r .retraction_id ledger.jsonl)
	jq -c 'select(.fate == "retracted")' out.jsonl | one --arg r "$rid" '.idempotency_key == "dist-2" and .cause == "fraud" and .authority == "case 7"
		and .requester == "ana" and .compensation_source == "comp.avro" and .retraction_id == $r'
	jq -c 'select(.fate == "compensation")' out.jsonl | one --arg r "$rid" '.delta == -3 and .retraction_id == $r'
	jq -c 'select(.kind == "standing")' out.jsonl | one '.value == 10'
	# min: m1's minimum was dist-2's 3; without it, 10 (as the rebuild says)
	cnt-dedup -d "$DEFS" log1.avro log2.avro | cnt-window -d "$DEFS" | cnt-accumulate -o b.avro
	cnt-retract --rebuild b.avro -d "$DEFS" -o rb.avro log1.avro log2.avro comp.avro
	publish b-lo rb.avro
	run -0 cnt-explain -d "$DEFS" -b b-lo --member m1 --now "$AT" -w views log1.avro log2.avro comp.avro
	[[ ${lines[1]} == "value 10, rank "* ]]
	[[ ${lines[-1]} == *": value 10, rank "*": agrees" ]]
}

@test "a published view that does not say what the log says: DIFFERS, exit status 1" {
	make_log
	cnt-dedup -d "$DEFS" log1.avro log2.avro | cnt-window -d "$DEFS" | cnt-accumulate -o b.avro
	# a view built from a partial log (the second segment only): stale
	cnt-window -d "$DEFS" log2.avro | cnt-accumulate -o partial.avro
	publish b-dist partial.avro
	run -1 cnt-explain -d "$DEFS" -b b-dist --member m2 --now "$AT" -w views log1.avro log2.avro
	[[ ${lines[-1]} == "view views/b-dist/global/v000001: the member is not in it: DIFFERS from the log" ]]
	publish b-dist b.avro
	run -0 cnt-explain -d "$DEFS" -b b-dist --member m2 --now "$AT" -w views log1.avro log2.avro
	run -1 cnt-explain -d "$DEFS" -b b-dist --member m2 --now "$AT" -w views --view-version 1 log1.avro log2.avro
	# beyond the head (materialised_cap 2) the band must hold the rank
	run -0 cnt-explain -d "$DEFS" -b b-dist --member m3 --now "$AT" -w views -F json log1.avro log2.avro
	echo "$output" | jq -c 'select(.kind == "check")' | one '.agrees and (.rank_band | length) == 2'
}

@test "a member with no events: not ranked, every count zero; strings are escaped in JSON" {
	make_log
	run -0 cnt-explain -d "$DEFS" -b b-dist --member 'q"\x' --now "$AT" -F json log1.avro
	echo "$output" | jq -c 'select(.kind == "standing")' | one '.found == false and .member == "q\"\\x" and .value == null'
	[ "$(echo "$output" | wc -l)" -eq 1 ]
}

@test "--scopes: split at the last comma as cnt-project splits it, so a member_ref may hold one" {
	jq '.leaderboards += [{board_id: "b-coh", tenant_id: "utc", counter_id: "dist", window: "day",
		scope_kind: "cohort", scope_attr: "cohort", order: "desc", tie_break: ["member_ref_asc"], rank_numbering: "competition",
		materialised_cap: 10, freshness_budget_s: 60}]' "$DEFS" >coh.json
	{ ev k1 dist 'a,b' 5 v1 2026-03-01T10:00:00Z; ev k2 dist m2 3 v2 2026-03-01T10:05:00Z; } |
		ingest "$NOW" log.avro coh.json
	printf 'a,b,div-a\nm2,div-a\n' >cohorts.csv
	cnt-dedup -d coh.json log.avro | cnt-window -d coh.json | cnt-accumulate -o b.avro
	cnt-project -d coh.json -b b-coh -w views --now "$AT" --scopes cohorts.csv b.avro
	[ "$(cnt-rank -w views -b b-coh --scope div-a --now "$AT" rank 'a,b' | jq -c '[.rank, .value]')" = "[1,5]" ]
	run -0 cnt-explain -d coh.json -b b-coh --member 'a,b' --scope div-a --scopes cohorts.csv --now "$AT" \
		-w views -F json log.avro
	echo "$output" | jq -c 'select(.kind == "standing")' | one '.found and .rank == 1 and .value == 5'
	echo "$output" | jq -c 'select(.kind == "check")' | one '.agrees'
}

@test "a region board: a scope attribute that is not text in the log stops it, naming file, record and event (status 2)" {
	jq '.leaderboards += [{board_id: "b-reg", tenant_id: "utc", counter_id: "dist", window: "day",
		scope_kind: "region", scope_attr: "region", order: "desc", tie_break: ["member_ref_asc"], rank_numbering: "competition",
		materialised_cap: 10, freshness_budget_s: 60}]' "$DEFS" >reg.json
	printf '%s\n' '{"idempotency_key":"r1","tenant_id":"utc","counter_id":"dist","member_ref":"m1","delta":5,"item":"v1","event_time":"2026-03-01T10:00:00Z","attrs":{"region":"eu"}}' \
		'{"idempotency_key":"r2","tenant_id":"utc","counter_id":"dist","member_ref":"m2","delta":3,"item":"v2","event_time":"2026-03-01T10:05:00Z","attrs":{"region":"eu"}}' |
		ingest "$NOW" log.avro reg.json
	run -0 cnt-explain -d reg.json -b b-reg --member m1 --scope eu --now "$AT" -F json log.avro
	echo "$output" | jq -c 'select(.kind == "standing")' | one '.found and .rank == 1 and .value == 5'
	# a log no cnt tool wrote: a NUL in m2's region
	"$PY" "$BATS_TEST_DIRNAME/data/core/avro-poke.py" log.avro bad.avro r2 attrs '{**v, "region": "e\0u"}'
	run -2 --separate-stderr cnt-explain -d reg.json -b b-reg --member m1 --scope eu --now "$AT" bad.avro
	id=$(cnt-cat log.avro | jq -r 'select(.idempotency_key == "r2") | .event_id')
	[ "$stderr" = "cnt-explain: 'bad.avro' record 2: event '$id': attrs 'region' is not UTF-8 text, so it cannot name a scope (cnt-ingest admits only text: was this log written by another tool?)" ]
	[ -z "$output" ]
}

@test "usage and hostile input: clear one-line errors, status 2" {
	make_log
	run -2 cnt-explain -d "$DEFS" -b b-dist --now "$AT" log1.avro
	[[ $output == *"--member are required"* ]]
	run -2 cnt-explain -d "$DEFS" -b b-dist --member m1 --now "$AT"
	[[ $output == *"no log files"* ]]
	run -2 cnt-explain -d "$DEFS" -b nope --member m1 --now "$AT" log1.avro
	[[ $output == "cnt-explain: board 'nope' is not in '$DEFS'" ]]
	head -c 300 log1.avro >cut.avro
	run -2 cnt-explain -d "$DEFS" -b b-dist --member m1 --now "$AT" cut.avro
	[[ $output == "cnt-explain: 'cut.avro'"* ]]
	echo 'not json' >bad.jsonl
	run -2 cnt-explain -d "$DEFS" -b b-dist --member m1 --now "$AT" -r bad.jsonl log1.avro
	[[ $output == "cnt-explain: 'bad.jsonl' line 1: not a JSON object"* ]]
	run -2 cnt-explain -d "$DEFS" -b b-dist --member m1 --now "$AT" -F yaml log1.avro
	run -2 cnt-explain -d "$DEFS" -b b-dist --member m1 --now "$AT" -w nowhere log1.avro
}

@test "held: the member's held events with hold id and signal, from the hold files" {
	jq '(.counters[] | select(.counter_id == "dist")).holds = [{signal: "rate", window_s: 600, ceiling: 100}]' \
		"$DEFS" >hdefs.json
	{
		ev h-1 dist m1 60 '' 2026-03-01T10:00:00Z
		ev h-2 dist m1 60 '' 2026-03-01T10:01:00Z     # 120 in 600 s: held
		ev h-3 dist m2 5 '' 2026-03-01T10:02:00Z
	} >h.jsonl
	cnt-ingest -d hdefs.json --now "$NOW" --max-past 400d -o hlog.avro --holds holds.avro h.jsonl
	run -0 cnt-explain -d hdefs.json -b b-dist --member m1 --now "$AT" --holds holds.avro -F json hlog.avro
	echo "$output" >out.jsonl
	jq -c 'select(.fate == "held")' out.jsonl | one '.idempotency_key == "h-2" and .signal == "rate"
		and (.hold_id | startswith("h-")) and .source == "holds.avro" and .delta == 60'
	jq -c 'select(.kind == "standing")' out.jsonl | one '.value == 60 and .fates.held == 1 and .fates.counted == 1'
}

@test "--sealed: checked against the season's sealed standing with its corrections" {
	jq '.counters |= map(.versions |= map(.windows = ((.windows // []) + ["season"] | unique)))
	    | .leaderboards += [{board_id: "b-season", tenant_id: "utc", counter_id: "dist", window: "season",
		scope_kind: "global", tie_break: ["earliest_achiever", "member_ref_asc"], rank_numbering: "competition",
		materialised_cap: 10, freshness_budget_s: 60}]
	    | .seasons = [{season_id: "s1", board_id: "b-season", opens_at: "2026-03-01T00:00:00Z",
		closes_at: "2026-03-02T00:00:00Z", state: "open"}]' "$DEFS" >sdefs.json
	DEFS=$PWD/sdefs.json
	make_log
	cnt-dedup -d "$DEFS" log1.avro log2.avro | cnt-window -d "$DEFS" | cnt-accumulate -o b.avro
	cnt-seal close -d "$DEFS" --season s1 --sealed sealed --now 2026-03-03T00:00:00Z b.avro
	run -0 cnt-explain -d "$DEFS" -b b-season --member m2 --season s1 --now 2026-03-03T00:00:00Z \
		--sealed sealed log1.avro log2.avro
	[[ ${lines[-1]} == "sealed standing of season s1 in sealed, corrections applied: value 12, rank 2: agrees" ]]
	# a retraction after closure, not yet published as a correction: differs
	cnt-retract --event dist-1 --tenant utc --counter dist --cause dq --requester r --authority a \
		--ledger ledger.jsonl --now 2026-03-04T00:00:00Z -o comp.avro log1.avro log2.avro
	run -1 cnt-explain -d "$DEFS" -b b-season --member m2 --season s1 --now 2026-03-03T00:00:00Z \
		--sealed sealed log1.avro log2.avro comp.avro
	[[ ${lines[-1]} == *"value 12, rank 2: DIFFERS from the log" ]]
	# once the correction is published, the sealed standing agrees again
	cnt-retract --rebuild b.avro -d "$DEFS" -o rb.avro log1.avro log2.avro comp.avro
	cnt-seal correct -d "$DEFS" --season s1 --sealed sealed --retractions ledger.jsonl \
		--now 2026-03-04T01:00:00Z rb.avro
	run -0 cnt-explain -d "$DEFS" -b b-season --member m2 --season s1 --now 2026-03-03T00:00:00Z \
		--sealed sealed log1.avro log2.avro comp.avro
	[[ ${lines[-1]} == *"value 12, rank 1: agrees" ]]
	# a board without seasons
	run -2 cnt-explain -d "$DEFS" -b b-dist --member m2 --now "$AT" --sealed sealed log1.avro
	[[ $output == *"--sealed: board 'b-dist' has no seasons"* ]]
	# said before the archive is read: a missing segment is not reached
	run -2 cnt-explain -d "$DEFS" -b b-dist --member m2 --now "$AT" --sealed sealed no-such-segment.avro
	[[ $output == *"--sealed: board 'b-dist' has no seasons"* ]]
	run -2 cnt-explain -d "$DEFS" -b b-dist --member m2 --now "$AT" --sealed sealed --tenant utc no-such-segment.avro
	[[ $output == *"--sealed: board 'b-dist' has no seasons"* ]]
}
