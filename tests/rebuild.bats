#!/usr/bin/env bats
# cnt-rebuild: a clean rebuild agrees (0) and is promoted; a tampered live
# bucket file or view raises the alert (1) naming the member and by how
# much, and is never promoted; a rebuild that starts at a later segment
# from a dedup snapshot; an archive that ends before the live as-of; a
# corrupt live view and every failing stage are trouble (2, never 0); the
# replay rate; usage errors.
#
# The live side is the demo's events in three segments, each deduplicated
# with the state (and a snapshot) of the one before, as examples/nightly.sh
# builds it.

bats_require_minimum_version 1.5.0

ROOT="$BATS_TEST_DIRNAME/.."
DEFS="$ROOT/examples/definitions.json"
EVENTS="$ROOT/examples/events.jsonl"
KEYRING="$ROOT/examples/keyring.json"
BOARD=acme-30d-distance
NOW=2026-11-30T09:40:00Z
command -v cnt-rebuild >/dev/null 2>&1 || PATH="$ROOT/build/bin:$PATH"

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	mkdir -p log live
	sed -n '1,10p' "$EVENTS" >part1.jsonl
	sed -n '11,20p' "$EVENTS" >part2.jsonl
	sed -n '21,$p' "$EVENTS" >part3.jsonl
	i=0
	for now in 2026-11-30T09:00:00Z 2026-11-30T09:20:00Z $NOW; do
		i=$((i + 1))
		cnt-ingest -d "$DEFS" --keyring "$KEYRING" --now "$now" -r /dev/null -o "log/seg$i.avro" "part$i.jsonl"
		cnt-dedup -d "$DEFS" -s live/dedup.state --snapshots live/snapshots "log/seg$i.avro" |
			cnt-window -d "$DEFS" | cnt-accumulate -o "live/seg$i.buckets.avro"
	done
	cnt-accumulate -o live/buckets.avro live/seg1.buckets.avro live/seg2.buckets.avro live/seg3.buckets.avro
	cnt-project -d "$DEFS" -b "$BOARD" -w live/views --now "$NOW" live/buckets.avro
	# the same with day roll-ups (codec null, for raise-day-count.py)
	cnt-accumulate -d "$DEFS" -c null -o live/days.avro live/buckets.avro
	# a forged record: m-1042 +700 m, admitted at the live as-of
	printf '%s\n' '{"idempotency_key":"forged-1","tenant_id":"acme","counter_id":"distance_m","member_ref":"m-1042","delta":700,"event_time":"2026-11-29T08:10:00Z"}' |
		cnt-ingest -d "$DEFS" --keyring "$KEYRING" --now "$NOW" -r /dev/null - | cnt-dedup -d "$DEFS" |
		cnt-window -d "$DEFS" | cnt-accumulate -o forged.buckets.avro
}

setup() {
	cd "$BATS_TEST_TMPDIR"
	F=$BATS_FILE_TMPDIR
	cp -r "$F/live" live
	ln -s "$F/log" log
	SEGS="log/seg1.avro log/seg2.avro log/seg3.avro"
	mkdir tmp
	export TMPDIR=$BATS_TEST_TMPDIR/tmp
}

# rebuild ARG...: cnt-rebuild of the board against ./live.
rebuild() {
	cnt-rebuild -d "$DEFS" -b "$BOARD" -w live/views --buckets live/buckets.avro "$@"
}

current() {
	readlink "live/views/$BOARD/global/current"
}

@test "a clean rebuild agrees: status 0, the report, and the scratch directory's files" {
	# shellcheck disable=SC2086
	run --separate-stderr rebuild --scratch s $SEGS
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "${lines[0]}" = "cnt-rebuild: board $BOARD, live view as of 2026-11-30T09:40:00Z (window taken at 2026-11-30T09:40:00Z)" ]
	[ "${lines[1]}" = "rebuilt from 3 segment(s) into s" ]
	[[ $output == *$'\nbuckets: agree (23 records)\n'* ]]
	[[ $output == *$'\nview global: agree (5 members)\n'* ]]
	[ "${lines[-1]}" = "result: the rebuild agrees with the live projection" ]
	# without --promote the live view is left alone
	[ "$(current)" = v000001 ]
	cnt-diff -q live/buckets.avro s/buckets.avro
	cnt-diff -q "live/views/$BOARD/global/current" "s/views/$BOARD/global/current"
	ls s/snapshots/seg1.avro.state s/snapshots/seg2.avro.state s/snapshots/seg3.avro.state
	jq -e '.equal' s/buckets.diff.json s/view.global.diff.json
	# a default scratch directory is removed when all agree
	# shellcheck disable=SC2086
	run -0 rebuild $SEGS
	[ -z "$(ls tmp)" ]
}

@test "the replay rate: events, event-time span over wall time, and the multiple at a 250000 events/s source" {
	# shellcheck disable=SC2086
	run -0 rebuild --scratch s $SEGS
	# the archive's events (26 read: the 27 admitted minus one retry
	# cnt-ingest itself dropped) and its event-time span, from the events
	jq -e '.events == 26 and .source_rate == 250000 and .wall_s > 0 and
		.event_time_min == 1795848069000 and .event_time_max == 1796024400000 and
		(.real_time_multiple - (176331 / .wall_s) | fabs) < 0.001 * .real_time_multiple and
		(.multiple_at_source_rate - (26 / .wall_s / 250000) | fabs) < 1e-9' s/replay.json
	[[ $output =~ $'\n'"replay: 26 events, event time spanning 176331 s, rebuilt in "[0-9.]+" s: "[0-9]+" events/s, "[0-9.]+"x real time"$'\n' ]]
	[[ $output == *$'\nreplay: against a 250000 events/s source (44082750000 events over the same span) that is '*$'x real time: BELOW the 10x required\n'* ]]
	# --source-rate changes the yardstick
	# shellcheck disable=SC2086
	run -0 rebuild --source-rate 1 $SEGS
	[[ $output == *"against a 1 events/s source (176331 events over the same span) that is "*"x real time: meets the 10x required"* ]]
}

@test "--promote: the rebuilt version is written beside the live ones, checked and published" {
	# shellcheck disable=SC2086
	run --separate-stderr rebuild --promote --stats st.json $SEGS
	[ "$status" -eq 0 ]
	jq -e '.equal and .promoted and .board == "acme-30d-distance" and .as_of == 1796031600000 and .differences == 0 and
		.buckets == {left: 23, right: 23, only_left: 0, only_right: 0, changed: 0}' st.json
	[ "${lines[-1]}" = "promoted: scope global, version 2 (live/views/$BOARD/global/v000002)" ]
	[ "$(current)" = v000002 ]
	run -0 cnt-diff "live/views/$BOARD/global/v000001" "live/views/$BOARD/global/v000002"
	[ -z "$output" ]
	cnt-rank -w live/views -b "$BOARD" --now "$NOW" verify
}

@test "a tampered live bucket file and view: the alert (status 1) names the member and by how much; no promotion" {
	cnt-accumulate -o t.avro live/buckets.avro "$F/forged.buckets.avro"
	mv t.avro live/buckets.avro
	cnt-project -d "$DEFS" -b "$BOARD" -w live/views --now "$NOW" live/buckets.avro
	[ "$(current)" = v000002 ]
	# shellcheck disable=SC2086
	run --separate-stderr rebuild --promote --scratch s --stats st.json $SEGS
	echo "$output"
	[ "$status" -eq 1 ]
	jq -e '.tool == "cnt-rebuild" and .in == 26 and (.equal | not) and (.promoted | not) and .differences == 2 and
		.buckets.changed == 1 and .views == [{scope: "global", left: 5, right: 5, only_left: 0,
		only_right: 0, changed: 1, fields: 0}] and .replay.events == 26' st.json
	[[ $output == *$'\nbuckets: DIFFER: 1 changed, 0 only live, 0 only rebuilt (23 live, 23 rebuilt)\n  m-1042 acme/distance_m v1 bucket 2026-11-29T08:00:00Z: count 2 live, 1 rebuilt (live +1); sum 5900 live, 5200 rebuilt (live +700)'* ]]
	[[ $output == *$'\nview global: DIFFER: 1 changed, 0 only live, 0 only rebuilt (5 live, 5 rebuilt)\n  m-1042: value 5900 live, 5200 rebuilt (live +700)\n'* ]]
	[ "${lines[-1]}" = "ALERT: the rebuild from the archive differs from the live projection (above); the rebuild is kept in s" ]
	[[ $output != *promoted* ]]
	[ "$(current)" = v000002 ]
	[ ! -e "live/views/$BOARD/global/v000003" ]
	# the differences, as cnt-diff's JSON lines, in the scratch directory
	jq -e -s 'length == 1 and .[0].member_ref == "m-1042" and .[0].left.value == 5900' s/view.global.diff.jsonl
	# a default scratch directory is kept for the inspection
	# shellcheck disable=SC2086
	run -1 rebuild $SEGS
	[ -n "$(ls tmp)" ]
	[[ ${lines[-1]} == "ALERT: "*"; the rebuild is kept in $TMPDIR/cnt-rebuild."* ]]
}

@test "a live bucket file with day roll-ups: the rebuild has them too, and a changed day record raises the alert" {
	h=$(cnt-cat --count live/buckets.avro)
	n=$(($(cnt-cat --count live/days.avro) - h))
	[ "$n" -gt 0 ]
	# shellcheck disable=SC2086
	run --separate-stderr cnt-rebuild -d "$DEFS" -b "$BOARD" -w live/views --buckets live/days.avro --scratch s $SEGS
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *$'\n'"buckets: agree ($((h + n)) records, $n of them day records)"$'\n'* ]]
	cnt-cat --meta s/buckets.avro | jq -s -e 'length == 2 and .[1].metadata["cnt.rollup"] == "day"'
	jq -e --argjson n "$n" '.days.left == $n and .days.right == $n' s/buckets.diff.json
	# one day record's count raised by one, its hours intact
	read -r m start < <(/usr/bin/python3 "$ROOT/tests/data/days/raise-day-count.py" live/days.avro live/tampered.avro 0)
	day=$(jq -rn --argjson s "$start" '$s / 1000 | todate')
	# shellcheck disable=SC2086
	run --separate-stderr cnt-rebuild -d "$DEFS" -b "$BOARD" -w live/views --buckets live/tampered.avro --scratch s2 $SEGS
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output == *$'\n'"buckets: DIFFER: 1 changed, 0 only live, 0 only rebuilt ($((h + n)) live, $((h + n)) rebuilt); in day records: 1 changed, 0 only live, 0 only rebuilt"$'\n'* ]]
	[[ $output == *$'\n'"  $m acme/"*" local day from $day: count "*" (live +1)"$'\n'* ]]
	[ "${lines[-1]}" = "ALERT: the rebuild from the archive differs from the live projection (above); the rebuild is kept in s2" ]
	# a live file without day roll-ups is rebuilt without them
	run -0 cnt-rebuild -d "$DEFS" -b "$BOARD" -w live/views --buckets live/buckets.avro --scratch s3 $SEGS
	[ "$(cnt-cat --meta s3/buckets.avro | jq -s length)" -eq 1 ]
}

@test "the report names a breakdown record's dimension and value (cnt-diff's key has them)" {
	# cnt-diff answering for the bucket files with one changed breakdown
	# record; the views are compared by the real one
	shim b-dim cnt-diff "for a; do :; done; [ -d \"\$a\" ] && exec $(command -v cnt-diff) \"\$@\"
s=; p=; for x; do [ \"\$p\" = --stats ] && s=\$x; p=\$x; done
echo '{\"left\":23,\"right\":23,\"only_left\":0,\"only_right\":0,\"changed\":1,\"equal\":false}' >\"\$s\"
echo '{\"key\":{\"tenant_id\":\"acme\",\"counter_id\":\"distance_m\",\"counter_version\":1,\"member_ref\":\"m-1042\",\"dim\":\"device\",\"dim_value\":\"ios\",\"bucket_start\":1795939200000,\"shard\":0},\"left\":{\"count\":2,\"sum\":10},\"right\":{\"count\":1,\"sum\":5}}'
exit 1"
	# shellcheck disable=SC2086
	run --separate-stderr b-dim/cnt-rebuild -d "$DEFS" -b "$BOARD" -w live/views --buckets live/buckets.avro $SEGS
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output == *$'\n'"  m-1042 acme/distance_m v1 device=ios bucket 2026-11-29T08:00:00Z: count 2 live, 1 rebuilt (live +1); sum 10 live, 5 rebuilt (live +5)"$'\n'* ]]
	[[ $output == *$'\n'"view global: agree (5 members)"$'\n'* ]]
}

@test "a tampered live view only (its bucket file intact): status 1, the member named" {
	cnt-accumulate -o t.avro live/buckets.avro "$F/forged.buckets.avro"
	cnt-project -d "$DEFS" -b "$BOARD" -w live/views --now "$NOW" t.avro
	# shellcheck disable=SC2086
	run rebuild $SEGS
	[ "$status" -eq 1 ]
	[[ $output == *$'\nbuckets: agree (23 records)\n'* ]]
	[[ $output == *$'\n  m-1042: value 5900 live, 5200 rebuilt (live +700)\n'* ]]
}

@test "more than --max-diffs differences: the first ones listed, all counted, all in the file" {
	cnt-accumulate -o t.avro live/buckets.avro live/buckets.avro
	mv t.avro live/buckets.avro
	# shellcheck disable=SC2086
	run rebuild --max-diffs 2 --scratch s $SEGS
	[ "$status" -eq 1 ]
	[[ $output == *$'\nbuckets: DIFFER: 23 changed, 0 only live, 0 only rebuilt (23 live, 23 rebuilt)\n  (the first 2; every one is in s/buckets.diff.jsonl)\n  m-1042 '*$'\n  m-1042 '*$'\nview global: agree'* ]]
	[ "$(wc -l <s/buckets.diff.jsonl)" -eq 23 ]
}

@test "a rebuild that starts at segment 2, from segment 1's dedup snapshot and buckets, agrees" {
	run -0 rebuild -s live/snapshots/seg1.avro.state --base live/seg1.buckets.avro log/seg2.avro log/seg3.avro
	[[ $output == *$'\nbuckets: agree (23 records)\n'* ]]
	# the snapshot given is read, not written
	cmp live/snapshots/seg1.avro.state "$F/live/snapshots/seg1.avro.state"
	# without segment 1's buckets its members' counts are missing
	run -1 rebuild -s live/snapshots/seg1.avro.state log/seg2.avro log/seg3.avro
	[[ $output == *$'\nbuckets: DIFFER: '* ]]
}

@test "an archive that ends before the live view's as-of: status 1, the as-of named" {
	run rebuild log/seg1.avro log/seg2.avro
	[ "$status" -eq 1 ]
	[[ $output == *$'\nas-of: DIFFER: the rebuild covers the log up to 1796030400000, the live view up to 1796031600000'* ]]
}

@test "a corrupt live view: status 2, the file named" {
	idx=live/views/$BOARD/global/v000001/index.bin
	size=$(stat -c %s "$idx")
	printf 'Z' | dd of="$idx" bs=1 seek=$((size - 2)) conv=notrunc status=none
	# shellcheck disable=SC2086
	run --separate-stderr rebuild --promote $SEGS
	[ "$status" -eq 2 ]
	[[ $output == *$'\nview global: cannot compare (cnt-diff status 2): cnt-diff: view '"'live/views/$BOARD/global/current/index.bin' is corrupt: data checksum mismatch"* ]]
	[[ ${lines[-1]} == "ALERT: the live projection could not be checked (above); the rebuild is kept in "* ]]
	[ "$(current)" = v000001 ]
}

# shim DIR TOOL SCRIPT: DIR holds cnt-rebuild and every tool it runs (links
# to the build's), with TOOL replaced by the sh SCRIPT.
shim() {
	local u
	mkdir -p "$1"
	for u in cnt-count cnt-project cnt-diff cnt-cat; do
		ln -sf "$(command -v $u)" "$1/$u"
	done
	cp "$(command -v cnt-rebuild)" "$1/cnt-rebuild"
	rm -f "$1/$2"
	printf '#!/bin/sh\n%s\n' "$3" >"$1/$2"
	chmod +x "$1/$2"
}

@test "a failing stage is never 0: every stage, dying with or without output" {
	# a segment that is not an archive
	# shellcheck disable=SC2086
	run --separate-stderr rebuild log/seg1.avro /etc/hostname
	[ "$status" -eq 2 ]
	[[ $stderr == *"cnt-rebuild: the rebuild failed: cnt-count exited with status 2"* ]]
	[ -z "$output" ]
	# the counting step dying at once, or after writing a whole bucket file
	# (the live one: it would agree)
	shim b-die cnt-count 'exit 3'
	shim b-wrote cnt-count 'o=; for a; do [ "$o" = -o ] && cp live/buckets.avro "$a"; o=$a; done; exit 1'
	for t in b-die:3 b-wrote:1; do
		# shellcheck disable=SC2086
		run --separate-stderr "${t%:*}/cnt-rebuild" -d "$DEFS" -b "$BOARD" -w live/views --buckets live/buckets.avro $SEGS
		echo "$t: $status $stderr"
		[ "$status" -eq 2 ]
		[[ $stderr == *"cnt-rebuild: the rebuild failed: cnt-count exited with status ${t#*:} (the scratch directory is "* ]]
		[ -z "$output" ]
	done
	# the projection, and the comparison
	shim b-proj cnt-project 'exit 4'
	# shellcheck disable=SC2086
	run --separate-stderr b-proj/cnt-rebuild -d "$DEFS" -b "$BOARD" -w live/views --buckets live/buckets.avro $SEGS
	[ "$status" -eq 2 ]
	[[ $stderr == *"cnt-rebuild: the rebuild failed: cnt-project exited with status 4"* ]]
	shim b-diff cnt-diff 'echo "cnt-diff: boom" >&2; exit 3'
	# shellcheck disable=SC2086
	run --separate-stderr b-diff/cnt-rebuild -d "$DEFS" -b "$BOARD" -w live/views --buckets live/buckets.avro --promote $SEGS
	[ "$status" -eq 2 ]
	[[ $output == *"buckets: cannot compare (cnt-diff status 3): cnt-diff: boom"* ]]
	[ "$(current)" = v000001 ]
}

@test "usage errors and unreadable inputs: status 2" {
	run -2 cnt-rebuild -b "$BOARD" -w live/views --buckets live/buckets.avro log/seg1.avro
	[[ ${lines[0]} == "cnt-rebuild: -d definitions is required" ]]
	run -2 rebuild
	[[ ${lines[0]} == "cnt-rebuild: no segment given"* ]]
	run -2 rebuild --frobnicate log/seg1.avro
	[[ ${lines[0]} == "cnt-rebuild: unrecognized option '--frobnicate'" ]]
	run -2 rebuild --max-diffs 2x log/seg1.avro
	run -2 rebuild log/nope.avro
	[[ ${lines[0]} == "cnt-rebuild: cannot read 'log/nope.avro'" ]]
	mkdir s && touch s/x
	run -2 rebuild --scratch s log/seg1.avro
	[[ ${lines[0]} == "cnt-rebuild: the scratch directory 's' is not empty; give a new or empty one" ]]
	run -2 cnt-rebuild -d "$DEFS" -b nope -w live/views --buckets live/buckets.avro log/seg1.avro
	[[ ${lines[0]} == "cnt-rebuild: board 'nope' has no published view under 'live/views'"* ]]
	run -0 cnt-rebuild --help
	[[ ${lines[0]} == "usage: cnt-rebuild "* ]]
	run -0 cnt-rebuild --version
	[ "$output" = "cnt-rebuild 0.1.0" ]
}
