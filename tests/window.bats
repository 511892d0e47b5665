#!/usr/bin/env bats
# cnt-window: bucket attribution in the tenant's zone (half- and
# quarter-hour offsets, DST in both directions, a 30-minute shift), the
# lateness boundary, late events kept, clock skew, shards, rejects.
#
# The bucket rule (lib/time/tz.h): the bucket of instant t is the set of instants
# in the same constant-offset interval AND the same local hour.  Expected
# values below are worked out by hand from that rule (each case says how),
# and data/core/zone-oracle.py checks ~175 more instants against Python's
# zoneinfo.  Times in comments: Z = UTC.

bats_require_minimum_version 1.5.0
load data/core/common

NOW=2026-12-31T00:00:00Z   # with --max-past 400d, every 2026 instant is admitted

setup() {
	set -o pipefail
	cd "$BATS_TEST_TMPDIR"
}

# ms RFC3339: epoch milliseconds, by date(1).
ms() {
	echo $(($(date -u -d "$1" +%s%N) / 1000000))
}

# bucket_of TENANT INSTANT: "start end" (both RFC 3339 Z, to the second or
# millisecond) of the bucket cnt-window gives an event at INSTANT.
bucket_of() {
	ev b dist m 1 '' "$(ms "$2")" "$1" | ingest "$NOW" e.avro
	cnt-window -d "$DEFS" e.avro | cnt-cat | jq -r '"\(.bucket_start) \(.bucket_end)"' |
		while read -r s e; do
			echo "$(date -u -d "@$((s / 1000))" +%FT%TZ) $(date -u -d "@$((e / 1000))" +%FT%TZ)"
		done
}

# expect TENANT INSTANT START END
expect() {
	local got
	got=$(bucket_of "$1" "$2")
	echo "$1 $2 -> $got (expected $3 $4)"
	[ "$got" = "$3 $4" ]
}

@test "UTC: buckets are UTC hours" {
	expect utc 2026-03-01T10:59:59.999Z 2026-03-01T10:00:00Z 2026-03-01T11:00:00Z
	expect utc 2026-03-01T11:00:00Z 2026-03-01T11:00:00Z 2026-03-01T12:00:00Z
}

@test "Asia/Kolkata (+05:30): 18:29:59.999Z and 18:30Z are different local days; buckets start at :30 UTC" {
	# 18:29:59.999Z = 23:59:59.999 IST: local hour 23:00-24:00 = 17:30Z-18:30Z
	expect kol 2026-03-01T18:29:59.999Z 2026-03-01T17:30:00Z 2026-03-01T18:30:00Z
	# 18:30Z = 00:00 IST on 03-02: the next day's first hour 18:30Z-19:30Z
	expect kol 2026-03-01T18:30:00Z 2026-03-01T18:30:00Z 2026-03-01T19:30:00Z
	# 10:00Z = 15:30 IST: local 15:00-16:00 = 09:30Z-10:30Z
	expect kol 2026-03-01T10:00:00Z 2026-03-01T09:30:00Z 2026-03-01T10:30:00Z
}

@test "Asia/Kathmandu (+05:45): buckets start at :15 UTC" {
	# 18:14:59.999Z = 23:59:59.999 NPT: 17:15Z-18:15Z; 18:15Z = 00:00 NPT
	expect ktm 2026-03-01T18:14:59.999Z 2026-03-01T17:15:00Z 2026-03-01T18:15:00Z
	expect ktm 2026-03-01T18:15:00Z 2026-03-01T18:15:00Z 2026-03-01T19:15:00Z
}

@test "America/St_Johns (-03:30): buckets start at :30 UTC, and across its spring-forward" {
	# 2026-03-02T03:29:59.999Z = 03-01 23:59:59.999 NST: 02:30Z-03:30Z
	expect stj 2026-03-02T03:29:59.999Z 2026-03-02T02:30:00Z 2026-03-02T03:30:00Z
	expect stj 2026-03-02T03:30:00Z 2026-03-02T03:30:00Z 2026-03-02T04:30:00Z
	# 2026-03-08 02:00 NST (05:30Z) -> 03:00 NDT (-02:30): local 01:00-02:00
	# NST is 04:30Z-05:30Z, local 03:00-04:00 NDT is 05:30Z-06:30Z
	expect stj 2026-03-08T05:29:59.999Z 2026-03-08T04:30:00Z 2026-03-08T05:30:00Z
	expect stj 2026-03-08T05:30:00Z 2026-03-08T05:30:00Z 2026-03-08T06:30:00Z
}

@test "Europe/Berlin, spring forward 2026-03-29: no bucket for the skipped local hour" {
	# 01:00Z: 02:00 CET becomes 03:00 CEST.  00:59:59.999Z = 01:59:59.999 CET
	# (local hour 01, 00:00Z-01:00Z); 01:00Z = 03:00 CEST (01:00Z-02:00Z)
	expect ber 2026-03-29T00:59:59.999Z 2026-03-29T00:00:00Z 2026-03-29T01:00:00Z
	expect ber 2026-03-29T01:00:00Z 2026-03-29T01:00:00Z 2026-03-29T02:00:00Z
	# the local midnight before it: 2026-03-28T23:00Z = 00:00 CET
	expect ber 2026-03-28T22:59:59.999Z 2026-03-28T22:00:00Z 2026-03-28T23:00:00Z
	expect ber 2026-03-28T23:00:00Z 2026-03-28T23:00:00Z 2026-03-29T00:00:00Z
}

@test "Europe/Berlin, fall back 2026-10-25: the repeated local hour gives two buckets" {
	# 01:00Z: 03:00 CEST becomes 02:00 CET.  00:30Z = 02:30 CEST, 01:30Z =
	# 02:30 CET: the same wall time, two buckets; neither spans 01:00Z.
	expect ber 2026-10-25T00:30:00Z 2026-10-25T00:00:00Z 2026-10-25T01:00:00Z
	expect ber 2026-10-25T00:59:59.999Z 2026-10-25T00:00:00Z 2026-10-25T01:00:00Z
	expect ber 2026-10-25T01:00:00Z 2026-10-25T01:00:00Z 2026-10-25T02:00:00Z
	expect ber 2026-10-25T01:30:00Z 2026-10-25T01:00:00Z 2026-10-25T02:00:00Z
}

@test "Australia/Lord_Howe, 30-minute fall back 2026-04-05: a bucket of 30 minutes" {
	# 15:00Z: 02:00 LHDT (+11) becomes 01:30 LHST (+10:30).  Before: local
	# 01:00-02:00 +11 = 14:00Z-15:00Z.  After: local hour 01:00-02:00 +10:30
	# is 14:30Z-15:30Z, cut at the offset change: 15:00Z-15:30Z.
	expect lhi 2026-04-04T14:59:59.999Z 2026-04-04T14:00:00Z 2026-04-04T15:00:00Z
	expect lhi 2026-04-04T15:00:00Z 2026-04-04T15:00:00Z 2026-04-04T15:30:00Z
	expect lhi 2026-04-04T15:29:59.999Z 2026-04-04T15:00:00Z 2026-04-04T15:30:00Z
	expect lhi 2026-04-04T15:30:00Z 2026-04-04T15:30:00Z 2026-04-04T16:30:00Z
}

@test "every zone: ~175 instants around 2026's offset changes and local midnights agree with python zoneinfo" {
	"$PY" "$DATA/zone-oracle.py" cases.jsonl expected.jsonl
	[ "$(wc -l <cases.jsonl)" -gt 150 ]
	ingest "$NOW" cases.avro <cases.jsonl
	cnt-window -d "$DEFS" -o w.avro cases.avro
	cnt-cat w.avro | jq -c '{k: .event.idempotency_key, start: .bucket_start, end: .bucket_end}' >got.jsonl
	diff expected.jsonl got.jsonl
	# and buckets partition time: no bucket is longer than an hour, none is empty
	jq -e -s 'all(.[]; .end - .start > 0 and .end - .start <= 3600000)' got.jsonl
}

# ---- lateness ------------------------------------------------------------

@test "lateness: at the horizon exactly and just inside are on time, 1 ms past is late" {
	# utc/dist: lateness 600 s.  An event at 10:00Z is in 10:00Z-11:00Z, so
	# it is late when ingested after 11:10:00.000Z.
	ev in dist m1 1 | ingest 2026-03-01T11:09:59.999Z a.avro
	ev at dist m1 2 | ingest 2026-03-01T11:10:00Z b.avro
	ev past dist m1 4 | ingest 2026-03-01T11:10:00.001Z c.avro
	# kol/dist: default lateness 3600 s; 09:30Z-10:30Z closes at 11:30Z
	ev kin dist m1 1 '' "$T0" kol | ingest 2026-03-01T11:30:00Z d.avro
	ev kpast dist m1 1 '' "$T0" kol | ingest 2026-03-01T11:30:00.001Z e.avro
	run cnt-window -d "$DEFS" -o w.avro --stats st.json a.avro b.avro c.avro d.avro e.avro
	[ "$status" -eq 0 ]
	[ "$(cnt-cat w.avro | jq -r '"\(.event.idempotency_key)=\(.late)"' | paste -sd, -)" = \
		in=false,at=false,past=true,kin=false,kpast=true ]
	# late events are kept, not dropped
	one '.in == 5 and .out == 5 and .late == 2 and .rejected == 0 and .late_ratio == 0.4' st.json
	one '[.counters[] | {tenant_id, in, late, late_ratio}] == [
		{tenant_id: "utc", in: 3, late: 1, late_ratio: 0.333333},
		{tenant_id: "kol", in: 2, late: 1, late_ratio: 0.5}]' st.json
}

@test "late events keep every field of the event, and the bucket they belong to" {
	ev a dist m1 7 '' 2026-03-01T10:20:00Z | ingest 2026-03-02T00:00:00Z a.avro
	cnt-window -d "$DEFS" -o w.avro a.avro
	cnt-cat w.avro | jq -e --argjson t0 "$T0_MS" '.late and .bucket_start == $t0 and
		.bucket_end == $t0 + 3600000 and .shard == 0'
	diff <(cnt-cat w.avro | jq -c .event) <(cnt-cat a.avro)
}

@test "clock skew stays visible: ingest time beside event time, ahead and lag in --stats" {
	{
		ev ahead dist m1 1 '' 2026-03-01T10:00:30Z   # client clock 30 s ahead
		ev lag dist m1 1 '' 2026-03-01T09:00:00Z     # an hour behind
		ev same clicks m1 1 '' "$T0"
	} | ingest "$T0" s.avro
	cnt-window -d "$DEFS" -o w.avro --stats st.json s.avro
	[ "$(windowed w.avro | jq -r '"\(.k):\(.et - .it)"' | paste -sd, -)" = ahead:30000,lag:-3600000,same:0 ]
	one '.counters[0] | .counter_id == "dist" and .clock_ahead == 1 and .max_clock_ahead_ms == 30000 and
		.max_lag_ms == 3600000' st.json
	one '.counters[1] | .counter_id == "clicks" and .clock_ahead == 0 and .max_lag_ms == 0' st.json
}

# ---- shards --------------------------------------------------------------

@test "--shards N: every event in [0, N), several used, the same shard whatever else is in the input" {
	for k in $(seq 64); do ev "k$k" dist "m$((k % 4))" 1; done | ingest "$T0" s.avro
	cnt-window -d "$DEFS" --shards 4 -o w1.avro s.avro
	cnt-window -d "$DEFS" --shards 4 -o w2.avro s.avro
	cmp w1.avro w2.avro
	windowed w1.avro | jq -s -e 'all(.[]; .shard >= 0 and .shard < 4) and
		([.[].shard] | unique | length) == 4'
	# an event's shard depends on the event alone: a second run over the
	# reversed second half gives each of those events the same shard
	windowed w1.avro | jq -r '"\(.k) \(.shard)"' | sort >all.txt
	cnt-cat s.avro | tail -n 32 | tac | jq -c '{idempotency_key, tenant_id, counter_id, member_ref, delta, event_time}' |
		ingest "$T0" half.avro
	cnt-window -d "$DEFS" --shards 4 half.avro | cnt-cat | jq -r '"\(.event.idempotency_key) \(.shard)"' | sort >half.txt
	[ "$(join all.txt half.txt | awk '$2 != $3' | wc -l)" -eq 0 ]
	[ "$(wc -l <half.txt)" -eq 32 ]
	# --shards 1 (the default) puts everything in shard 0
	[ "$(cnt-window -d "$DEFS" s.avro | cnt-cat | jq -s '[.[].shard] | unique')" = "$(printf '[\n  0\n]')" ]
	run cnt-window -d "$DEFS" --shards 0 -o x.avro s.avro
	[ "$status" -eq 2 ]
	[[ "$output" == *"--shards: '0'"* ]]
}

# ---- rejects -----------------------------------------------------------

@test "an undeclared tenant or counter version is rejected with a line; the others pass" {
	jq '.tenants += [{tenant_id: "ghost", timezone: "UTC"}]
		| .counters += [{tenant_id: "ghost", counter_id: "dist", versions: [{version: 1, type: "exact"}]},
		                {tenant_id: "utc", counter_id: "gone", versions: [{version: 1, type: "exact"}]}]' \
		"$DEFS" >defs2.json
	{ ev a dist m1 1; ev b dist m1 1 '' "$T0" ghost; ev c gone m1 1; ev d clicks m1 1; } |
		ingest "$T0" s.avro defs2.json
	run cnt-window -d "$DEFS" -o w.avro -r rej.jsonl --stats st.json s.avro
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ "$(windowed w.avro | jq -r .k | paste -sd, -)" = a,d ]
	jq -e -s 'length == 2 and
		.[0].reason == "unknown_tenant" and .[0].field == "tenant_id" and .[0].record == 2 and
		(.[0].message | contains("ghost")) and
		.[1].reason == "unknown_counter" and .[1].field == "counter_version" and .[1].record == 3 and
		(.[1].message | contains("utc/gone"))' rej.jsonl
	one '.in == 4 and .out == 2 and .rejected == 2 and .in == .out + .rejected' st.json
	run --separate-stderr cnt-window -d "$DEFS" -o w2.avro s.avro
	[ "$status" -eq 0 ]
	[ "$(echo "$stderr" | wc -l)" -eq 2 ]
	[[ "$stderr" == *"rejected (unknown_tenant): tenant 'ghost'"* ]]
}

@test "the output is deterministic and its schema is cnt.WindowedEvent" {
	for k in $(seq 20); do ev "k$k" dist m1 "$k"; done | ingest "$T0" s.avro
	cnt-window -d "$DEFS" -o w1.avro s.avro
	cnt-window -d "$DEFS" -o w2.avro s.avro
	cmp w1.avro w2.avro
	cnt-cat --schema w1.avro | jq -e '.name == "WindowedEvent" and .namespace == "cnt" and
		([.fields[].name] == ["bucket_start", "bucket_end", "late", "shard", "exact", "dimensions", "sample", "hll_precision", "event"])'
	# exact: the event's counter version is of type exact (dist is, uniq is not)
	cnt-cat w1.avro | jq -e -s 'length == 20 and all(.[]; .exact == true and .sample == -1 and .hll_precision == 14)' >/dev/null
	ev u1 uniq m1 1 i1 | ingest "$T0" u.avro
	cnt-window -d "$DEFS" u.avro | cnt-cat | one '.exact == false and .hll_precision == 14'
	# hll_precision: the version's, from its tolerated_error (0.05: 11)
	jq '.counters[3].versions[0].tolerated_error = 0.05' "$DEFS" >loose.json
	ev u1 uniq m1 1 i1 | ingest "$T0" u11.avro loose.json
	cnt-window -d loose.json u11.avro | cnt-cat | one '.hll_precision == 11'
}

@test "a windowed file written without the exact field (older cnt-window) reads as not exact" {
	# tests/fuzz/corpus/fuzz_windowed/windowed.null.avro was written before the field existed
	cnt-cat --schema "$BATS_TEST_DIRNAME/fuzz/corpus/fuzz_windowed/windowed.null.avro" | jq -e '[.fields[].name] | index("exact") == null'
	cnt-accumulate -o b.avro "$BATS_TEST_DIRNAME/fuzz/corpus/fuzz_windowed/windowed.null.avro"
	cnt-cat b.avro | jq -e -s 'length > 0 and any(.[]; .min != null)' >/dev/null
}

# ---- ids, statistics, faults -------------------------------------------

@test "ids holding quotes, backslashes and control characters: --stats, -r and the reject lines stay well-formed" {
	weird_ids defs2.json w.avro
	run --separate-stderr cnt-window -d defs2.json -o out.avro --stats st.json w.avro
	[ "$status" -eq 0 ]
	# the control characters reach standard error escaped, on one line
	[ "$stderr" = "cnt-window: 'w.avro' record 3: rejected (unknown_tenant): tenant 'ctl\\x01\\x1b' is not declared in 'defs2.json'" ]
	one '.in == 3 and .out == 2 and .rejected == 1 and .rejected_by_reason == {unknown_tenant: 1, unknown_counter: 0, not_monotonic: 0}' st.json
	one '[.counters[] | [.tenant_id, .counter_id, .in]] == [["utc", "dist", 1], ["q\"t\\x", "c\"1\\", 1]]' st.json
	cnt-window -d defs2.json -o out.avro -r rej.jsonl --stats - w.avro 2>st2.json
	one '.tool == "cnt-window" and .counters[1].tenant_id == "q\"t\\x"' st2.json
	one '.reason == "unknown_tenant" and .message == "tenant '\''ctl\u0001\u001b'\'' is not declared in '\''defs2.json'\''"' rej.jsonl
}

@test "--stats keys: the common ones of cnt(7), duplicates and held 0, late and balanced" {
	{ ev a dist m1 1; ev b dist m1 1 '' 2026-03-01T08:00:00Z; } | ingest "$T0" s.avro
	cnt-window -d "$DEFS" -o w.avro --stats st.json s.avro
	one 'keys_unsorted == ["tool", "in", "out", "rejected", "duplicates", "held", "late", "balanced",
		"rejected_by_reason", "late_ratio", "shards", "top_key_share", "top_key", "top_keys", "counters"]' st.json
	one '.duplicates == 0 and .held == 0 and .late == 1 and .balanced == true and .late_ratio == 0.5' st.json
	# both events are of one key: it takes every write
	one '.top_key_share == 1 and .top_key == {"tenant_id": "utc", "counter_id": "dist", "member_ref": "m1",
		"events": 2, "exact": true}' st.json
	one '.top_keys == [{"tenant_id": "utc", "counter_id": "dist", "member_ref": "m1", "events": 2, "share": 1}]' st.json
}

@test "an output that cannot be written (/dev/full): status 3, one message, no file left" {
	for k in $(seq 50); do ev "k$k" dist m1 1; done | ingest "$T0" s.avro
	run cnt-window -d "$DEFS" -o /dev/full s.avro
	[ "$status" -eq 3 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == "cnt-window: '/dev/full': "*"No space left on device"* ]]
	run bash -c 'cnt-window -d "$1" s.avro >/dev/full' _ "$DEFS"
	[ "$status" -eq 3 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == "cnt-window: "*"No space left on device"* ]]
	weird_ids defs2.json w.avro
	run cnt-window -d defs2.json -o out.avro -r /dev/full w.avro
	[ "$status" -eq 3 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == "cnt-window: cannot write '/dev/full': No space left on device" ]]
	run cnt-window -d "$DEFS" -o out2.avro --stats /dev/full s.avro
	[ "$status" -eq 3 ]
	[ "${#lines[@]}" -eq 1 ]
	[ "$(ls -A | grep -c '^\.')" -eq 0 ]   # no temporary file
	[ ! -e out.avro ]
}

@test "a closed pipe ends the run quietly by SIGPIPE, also when SIGPIPE is ignored" {
	many_events 3000 big.avro
	run bash -c 'set -o pipefail; cnt-window -d "$1" big.avro | head -c 100 >/dev/null' _ "$DEFS"
	[ "$status" -eq 141 ]
	[ -z "$output" ]
	run bash -c 'trap "" PIPE; set -o pipefail; cnt-window -d "$1" -c null big.avro | head -c 100 >/dev/null' _ "$DEFS"
	[ "$status" -eq 141 ]
	[ -z "$output" ]
}

@test "--progress draws on standard error when asked; nothing when it is not a terminal" {
	many_events 17000 p.avro
	run --separate-stderr bash -c '{ cat p.avro; sleep 0.6; cat p.avro; } | cnt-window -d "$1" --progress -o w.avro' _ "$DEFS"
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"cnt-window: "*"records, "*"records/s"* ]]
	[[ "$stderr" == *$'\r'* ]]
	run --separate-stderr bash -c '{ cat p.avro; sleep 0.6; cat p.avro; } | cnt-window -d "$1" -o w.avro' _ "$DEFS"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$(cnt-cat --count w.avro)" = 34000 ]
}

@test "options: strict numbers, --version, --help and the usage on errors" {
	ev a dist m1 1 | ingest "$T0" s.avro
	for bad in 2x -1 65537 ''; do
		run cnt-window -d "$DEFS" --shards "$bad" -o x.avro s.avro
		[ "$status" -eq 2 ]
		[[ "${lines[0]}" == "cnt-window: --shards: '$bad' is not a whole number from 1 to 65536" ]]
		[[ "${lines[1]}" == "usage: cnt-window "* ]]
	done
	run cnt-window -d "$DEFS" --level 7x -o x.avro s.avro
	[ "$status" -eq 2 ]
	[[ "$output" == *"--level: '7x'"* ]]
	run cnt-window -d "$DEFS" -c lz4 -o x.avro s.avro
	[ "$status" -eq 2 ]
	[[ "$output" == *"--codec: 'lz4'"* ]]
	run cnt-window -o x.avro s.avro
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "cnt-window: -d definitions is required" ]
	[ ! -e x.avro ]
	run cnt-window --version
	[ "$status" -eq 0 ]
	[[ "$output" == "cnt-window "[0-9]* ]]
	run cnt-window --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"--progress"* && "$output" == *"--shards N"* ]]
	# options may follow the operands
	cnt-window s.avro -d "$DEFS" --shards 2 -o y.avro
	[ "$(cnt-cat y.avro | jq .shard)" -lt 2 ]
}

@test "out of memory at any allocation: status 4, one message, no output left" {
	# two timezones to load, and a reject
	jq '.tenants += [{tenant_id: "ghost", timezone: "UTC"}]
		| .counters += [{tenant_id: "ghost", counter_id: "dist", versions: [{version: 1, type: "exact"}]}]' \
		"$DEFS" >defs2.json
	{ ev a dist m1 1; ev b dist m1 1 '' "$T0" kol; ev c dist m1 1 '' "$T0" ghost; } | ingest "$T0" s.avro defs2.json
	n=1
	while :; do
		run env CNT_FAIL_ALLOC=$n cnt-window -d "$DEFS" -o out.avro -r rej.jsonl --stats st.json s.avro
		[ "$status" -eq 0 ] && break
		echo "allocation $n: status $status: $output"
		[ "$status" -eq 4 ]
		[ "${#lines[@]}" -eq 1 ]
		[[ "$output" == "cnt-window: "*"out of memory"* ]]
		[ ! -e out.avro ] && [ ! -e rej.jsonl ] && [ ! -e st.json ]
		[ "$(ls -A | grep -c '^\.')" -eq 0 ]
		n=$((n + 1))
	done
	[ "$n" -gt 20 ]
	one '.out == 2 and .rejected == 1' st.json
}
