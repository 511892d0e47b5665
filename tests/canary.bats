#!/usr/bin/env bats
# cnt-canary: K probes through ingest | dedup | window | accumulate, the
# count read back from the bucket file and accumulated across runs; a stage
# that silently drops (or adds) an event fails it; --max-age and --check
# ("canary not reporting"); a corrupt state file and a tampered scratch are
# clear errors; probes mixed into a real log reach no real standing.

bats_require_minimum_version 1.5.0

ROOT="$BATS_TEST_DIRNAME/.."
DEFS0="$ROOT/examples/definitions.json"
EVENTS="$ROOT/examples/events.jsonl"
KEYRING="$ROOT/examples/keyring.json"
NOW=2026-11-30T09:00:00Z
command -v cnt-canary >/dev/null 2>&1 || PATH="$ROOT/build/bin:$PATH"

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	# the example definitions plus a probe tenant with one views counter
	jq '.tenants += [{"tenant_id": "probe", "timezone": "UTC", "probe": true}] |
		.counters += [{"tenant_id": "probe", "counter_id": "views", "versions": [{"version": 1,
		"type": "unique", "dedup_key": "item_member", "lateness_horizon_s": 3600}]}]' "$DEFS0" >defs.json
}

setup() {
	cd "$BATS_TEST_TMPDIR"
	DEFS=$BATS_FILE_TMPDIR/defs.json
}

# fake TOOL SCRIPT: a directory holding the canary and the real tools, with
# TOOL replaced by SCRIPT (sh, the real tool is $REAL).
fake() {
	mkdir -p fake
	for t in cnt-ingest cnt-dedup cnt-window cnt-accumulate cnt-cat; do
		ln -sf "$(command -v "$t")" "fake/$t"
	done
	cp "$(command -v cnt-canary)" fake/cnt-canary
	rm -f "fake/$1"
	printf '#!/bin/sh\nREAL=%s\n%s\n' "$(command -v "$1")" "$2" >"fake/$1"
	chmod +x "fake/$1"
}

@test "cnt-canary: K probes counted; the count accumulates across runs; the state records each success" {
	run -0 --separate-stderr cnt-canary -d "$DEFS" --scratch s --now "$NOW" --stats st.json
	[ -z "$output" ] && [ -z "$stderr" ]
	[ "$(jq -c '[.in, .out, .count_before, .count_after, .balanced, .canary_age_s]' st.json)" = '[10,10,0,10,true,0]' ]
	[ "$(jq -r '"\(.count) \(.runs) \(.last_success)"' s/canary.state)" = "10 1 2026-11-30T09:00:00Z" ]
	run -0 cnt-canary -d "$DEFS" --scratch s --now 2026-11-30T10:00:00Z --probes 7 --stats st.json
	[ "$(jq -c '[.in, .out, .count_before, .count_after]' st.json)" = '[7,7,10,17]' ]
	[ "$(jq -r '"\(.count) \(.runs)"' s/canary.state)" = "17 2" ]
	# the count is in the scratch's bucket file, under the probe tenant
	[ "$(cnt-cat s/buckets.avro | jq -s '[.[] | select(.tenant_id == "probe" and .member_ref == "canary") | .count] | add')" -eq 17 ]
	run -0 --separate-stderr cnt-canary -v -d "$DEFS" --scratch s --now 2026-11-30T11:00:00Z
	[[ $stderr == *"+ cnt-ingest -d"* ]]
	[[ $stderr == *"cnt-canary: ok: 10 probes counted (17 -> 27), run 3"* ]]
}

@test "cnt-canary: a stage that drops one event makes it fail loudly (status 1) and records nothing" {
	cnt-canary -d "$DEFS" --scratch s --now "$NOW"
	# an ingest that loses the last event of its input, and exits 0
	fake cnt-ingest 'sed "\$d" | exec "$REAL" "$@"'
	run -1 --separate-stderr fake/cnt-canary -d "$DEFS" --scratch s --now 2026-11-30T10:00:00Z --stats st.json
	[ "$stderr" = "cnt-canary: FAILED: the probe count moved by 9, not 10 (from 10 to 19): the pipeline lost or added events (run kept in s/run)" ]
	[ "$(jq -c '[.balanced, .count_before, .count_after, .canary_age_s]' st.json)" = '[false,10,19,3600]' ]
	[ "$(jq -r .count s/canary.state)" -eq 10 ]
	# the real pipeline again: counts from the recorded 10
	run -0 cnt-canary -d "$DEFS" --scratch s --now 2026-11-30T11:00:00Z
	[ "$(jq -r .count s/canary.state)" -eq 20 ]
}

@test "cnt-canary: a stage that adds an event, or fails, makes it fail (status 1)" {
	# a window stage that sees every event twice (cnt-window of the input, twice)
	fake cnt-window 'cat >in.avro; "$REAL" "$@" in.avro in.avro'
	run -1 --separate-stderr fake/cnt-canary -d "$DEFS" --scratch s --now "$NOW"
	[[ $stderr == "cnt-canary: FAILED: the probe count moved by 20, not 10 (from 0 to 20)"* ]]
	[ ! -e s/canary.state ]
	fake cnt-dedup 'echo "cnt-dedup: disk on fire" >&2; exit 3'
	run -1 --separate-stderr fake/cnt-canary -d "$DEFS" --scratch s --now "$NOW"
	[ "$stderr" = "cnt-canary: FAILED: cnt-dedup exited with status 3 (cnt-dedup: disk on fire)" ]
}

@test "cnt-canary: --max-age: canary not reporting when the last success is too old; --check probes nothing" {
	run -1 --separate-stderr cnt-canary --check --max-age 1h --scratch s --now "$NOW"
	[ "$stderr" = "cnt-canary: canary not reporting: no success recorded in 's/canary.state'" ]
	cnt-canary -d "$DEFS" --scratch s --now "$NOW" --max-age 1h
	run -0 cnt-canary --check --max-age 1h --scratch s --now 2026-11-30T10:00:00Z --stats st.json
	[ "$(jq -c '[.in, .canary_age_s, .reporting]' st.json)" = '[0,3600,true]' ]
	run -1 --separate-stderr cnt-canary --check --max-age 60m --scratch s --now 2026-11-30T10:00:01Z --stats st.json
	[ "$stderr" = "cnt-canary: canary not reporting: the last success was at 2026-11-30T09:00:00Z, 3601s ago (more than --max-age 60m)" ]
	[ "$(jq -c '[.canary_age_s, .reporting]' st.json)" = '[3601,false]' ]
	[ "$(jq -r .count s/canary.state)" -eq 10 ]
	# a probing run after a gap: the probes count (recorded), the gap fails
	run -1 --separate-stderr cnt-canary -d "$DEFS" --scratch s --now 2026-11-30T12:00:00Z --max-age 2h
	[ "$stderr" = "cnt-canary: canary not reporting: the last success was at 2026-11-30T09:00:00Z, 10800s ago (more than --max-age 2h)" ]
	[ "$(jq -r .count s/canary.state)" -eq 20 ]
	run -0 cnt-canary --check --max-age 1d --scratch s --now 2026-11-30T12:00:00Z
}

@test "cnt-canary: a corrupt state file or a tampered scratch is a clear error (status 2)" {
	cnt-canary -d "$DEFS" --scratch s --now "$NOW"
	echo '{"format":"cnt-canary/1","count":"ten"}' >s/canary.state
	run -2 --separate-stderr cnt-canary -d "$DEFS" --scratch s --now 2026-11-30T10:00:00Z
	[ "$stderr" = "cnt-canary: the state file 's/canary.state' is corrupt (not a cnt-canary/1 object with last_success_ms, count and runs): remove it to start the count again" ]
	printf 'garbage' >s/canary.state
	run -2 cnt-canary --check --max-age 1h --scratch s --now "$NOW"
	[[ $output == *"is corrupt"* ]]
	rm -rf s
	cnt-canary -d "$DEFS" --scratch s --now "$NOW"
	rm s/buckets.avro
	run -2 --separate-stderr cnt-canary -d "$DEFS" --scratch s --now 2026-11-30T10:00:00Z
	[ "$stderr" = "cnt-canary: the scratch directory's count (0) is not the last one recorded in 's/canary.state' (10): 's' was changed outside the canary" ]
}

@test "cnt-canary: definitions without a probe tenant, usage errors" {
	run -2 --separate-stderr cnt-canary -d "$DEFS0" --scratch s
	[ "$stderr" = "cnt-canary: '$DEFS0' declares no probe tenant (a tenant with \"probe\": true)" ]
	run -2 cnt-canary --scratch s
	[[ ${lines[0]} == "cnt-canary: -d definitions is required" ]]
	[[ ${lines[1]} == "usage: cnt-canary "* ]]
	run -2 cnt-canary -d "$DEFS" --scratch s --probes 2x
	[[ ${lines[0]} == "cnt-canary: --probes: '2x' is not a whole number from 1 to 100000" ]]
	run -2 cnt-canary --check --scratch s
	[[ ${lines[0]} == "cnt-canary: --check needs --max-age" ]]
	run -2 cnt-canary --check --scratch s --max-age 5y
	[[ ${lines[0]} == "cnt-canary: --max-age: '5y' is not a duration (90s, 15m, 2h, 1d)" ]]
	run -2 cnt-canary -d "$DEFS" --scratch s --now yesterday
	[[ ${lines[0]} == "cnt-canary: --now: 'yesterday' is not an RFC 3339 time or epoch milliseconds" ]]
	run -2 cnt-canary -d "$DEFS" --scratch s extra
	[[ ${lines[0]} == "cnt-canary: unexpected operand 'extra'" ]]
}

@test "probes never reach a real standing: probe events mixed into a real log, every board projected" {
	# probes for the probe tenant under a real member's name, in the real log
	jq -cn 'range(50) as $i | {idempotency_key: "p\($i)", tenant_id: "probe", counter_id: "views",
		member_ref: "m-1042", item: "p\($i)", event_time: "2026-11-29T10:00:00Z"}' >probes.jsonl
	cat "$EVENTS" probes.jsonl >mixed.jsonl
	cnt-ingest -d "$DEFS" --keyring "$KEYRING" --now "$NOW" -r /dev/null -o mixed.avro mixed.jsonl
	cnt-ingest -d "$DEFS" --keyring "$KEYRING" --now "$NOW" -r /dev/null -o real.avro "$EVENTS"
	for log in mixed real; do
		cnt-dedup -d "$DEFS" $log.avro | cnt-window -d "$DEFS" | cnt-accumulate -o $log.buckets.avro
	done
	# the probes are in the bucket file, under the probe tenant only
	[ "$(cnt-cat mixed.buckets.avro | jq -s '[.[] | select(.tenant_id == "probe") | .count + .late_count] | add')" -eq 50 ]
	for b in $(jq -r '.leaderboards[].board_id' "$DEFS"); do
		for log in mixed real; do
			opt=''
			[ "$b" = acme-spring-5k ] && opt="--season acme-2026-spring --scopes-from $log.avro"
			[ "$b" = kahani-trending ] && opt="--scopes-from $log.avro"
			# shellcheck disable=SC2086
			cnt-project -d "$DEFS" -b "$b" -w views-$log --now "$NOW" $opt $log.buckets.avro
		done
	done
	# every view of every board: the same members and values with and without the probes
	n=0
	for v in views-real/*/*/current; do
		w=views-mixed/${v#views-real/}
		cnt-diff -q "$v" "$w"
		n=$((n + 1))
	done
	[ "$n" -ge 3 ]
	run -0 cnt-rank -w views-mixed -b acme-30d-distance --now "$NOW" value m-1042
	[ "$(echo "$output" | jq .value)" -eq 5200 ]
	# and a board on the probe counter is refused by the definitions loader
	jq '.leaderboards += [{"board_id": "probe-board", "tenant_id": "probe", "counter_id": "views", "window": "all_time"}]' \
		"$DEFS" >bad.json
	run -2 --separate-stderr cnt-project -d bad.json -b probe-board -w v --now "$NOW" mixed.buckets.avro
	[[ $stderr == *"\$.leaderboards[4].tenant_id: tenant 'probe' is a probe tenant (\"probe\": true): no leaderboard may rank its counters" ]]
}

@test "cnt-canary: a probe counter with breakdown dimensions still moves by exactly K (totals only are read back)" {
	jq '(.counters[] | select(.tenant_id == "probe") | .versions[0].dimensions) = ["source"]' "$DEFS" >dims.json
	run -0 cnt-canary -d dims.json --scratch s --now "$NOW" --probes 4 --stats st.json
	[ "$(jq -c '[.count_before, .count_after]' st.json)" = '[0,4]' ]
	[ "$(cnt-cat s/buckets.avro | jq -s '[.[] | select(.dim != "")] | length')" -ge 1 ]
	run -0 cnt-canary -d dims.json --scratch s --now 2026-11-30T10:00:00Z --probes 4 --stats st.json
	[ "$(jq -c '[.count_before, .count_after]' st.json)" = '[4,8]' ]
}
