#!/usr/bin/env bats
# cnt-retract: compensating events and the ledger (each scope and cause,
# idempotence, unknown events, the hash chain), and the two ways back to a
# full rebuild for every counter type: merging the compensations (exact
# columns) and rebuilding the touched buckets (every column, byte for
# byte).  The reference is always the log ingested again without the
# retracted events (same --now, so the same event ids and ingest times).

bats_require_minimum_version 1.5.0
load data/core/common

NOW=2026-03-01T11:10:00Z     # on time for 10:xx and 11:xx events (lateness 600 s)
LATE=2026-03-01T13:00:00Z    # late for them
WHO=(--requester ts-analyst-7 --authority "case-4412" --ledger ledger.jsonl --now 2026-03-04T09:00:00Z)

setup() {
	set -o pipefail
	cd "$BATS_TEST_TMPDIR"
	# one counter of each type, lateness 600 s
	jq '.counters += [
		{tenant_id: "utc", counter_id: "lo", versions: [{version: 1, type: "min", lateness_horizon_s: 600}]},
		{tenant_id: "utc", counter_id: "hi", versions: [{version: 1, type: "max", lateness_horizon_s: 600}]}]' \
		"$DEFS" >defs.json
	DEFS=$PWD/defs.json
}

# log: on-time and late events of every counter type for members m1, m2.
make_log() {
	for c in dist uniq lo hi; do
		ev "$c-1" "$c" m1 10 v1 2026-03-01T10:00:00Z
		ev "$c-2" "$c" m1 3 v2 2026-03-01T10:10:00Z
		ev "$c-3" "$c" m2 7 v1 2026-03-01T10:20:00Z
		ev "$c-4" "$c" m2 5 v3 2026-03-01T11:05:00Z
	done >ontime.jsonl
	for c in dist uniq lo hi; do
		ev "$c-5" "$c" m1 4 v4 2026-03-01T10:40:00Z
		ev "$c-6" "$c" m2 2 v5 2026-03-01T10:50:00Z
	done >late.jsonl
	ingest "$NOW" log1.avro <ontime.jsonl
	ingest "$LATE" log2.avro <late.jsonl
}

# buckets OUT LOG...: window and accumulate (extra options in WOPT)
buckets() {
	local out=$1
	shift
	cnt-window -d "$DEFS" ${WOPT:-} "$@" | cnt-accumulate -o "$out"
}

# reference OUT KEY...: the full rebuild of the log without those keys
reference() {
	local out=$1 pat
	shift
	pat=$(printf '"%s",|' "$@")
	grep -vE "\"idempotency_key\":(${pat%|})" ontime.jsonl | ingest "$NOW" r1.avro
	grep -vE "\"idempotency_key\":(${pat%|})" late.jsonl | ingest "$LATE" r2.avro
	buckets "$out" r1.avro r2.avro
}

# exact_cols FILE: the additive columns of every record
exact_cols() {
	cnt-cat "$1" | jq -c '{counter_id, member_ref, bucket_start, shard, count, sum, late_count, late_sum}'
}

@test "by event: a compensation per event names its original, negates its delta and keeps its times; one ledger record" {
	make_log
	run --separate-stderr cnt-retract --event dist-1 --event dist-5 --tenant utc --counter dist --cause fraud "${WHO[@]}" \
		-o comp.avro --stats st.json log1.avro log2.avro
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	one '.tool == "cnt-retract" and .in == 24 and .out == 2 and .already_retracted == 0 and .not_found == 0 and .ledger_records == 1' st.json
	rid=$(jq -r .retraction_id st.json)
	[[ $rid =~ ^r-[0-9a-f]{32}$ ]]
	cnt-cat log1.avro log2.avro | jq -c 'select(.idempotency_key == "dist-1" or .idempotency_key == "dist-5")' >orig.jsonl
	cnt-cat comp.avro >comp.jsonl
	[ "$(wc -l <comp.jsonl)" -eq 2 ]
	"$PY" - orig.jsonl comp.jsonl "$rid" <<'EOF'
import json, sys
orig = [json.loads(l) for l in open(sys.argv[1])]
comp = {c["retracts"]: c for c in map(json.loads, open(sys.argv[2]))}
for o in orig:
    c = comp[o["event_id"]]
    assert c["delta"] == -o["delta"]
    assert c["retraction_id"] == sys.argv[3]
    assert c["idempotency_key"] == "retract:" + o["event_id"]
    assert c["event_id"] != o["event_id"] and len(c["event_id"]) == 32
    for k in ("tenant_id", "counter_id", "counter_version", "member_ref", "item", "event_time", "ingest_time", "attrs"):
        assert c[k] == o[k], k
EOF
	one --arg rid "$rid" '.retraction_id == $rid and .cause == "fraud" and .requested_by == "ts-analyst-7"
		and .authority == "case-4412" and .scope == "event" and (.event_ids | length) == 2
		and .created_at == "2026-03-04T09:00:00.000Z" and .prev == "00000000000000000000000000000000"' ledger.jsonl
}

@test "events not in the log are reported one by one, on standard error and as not_found" {
	make_log
	printf 'dist-2\nno-such-key\n\n1234\n' >keys.txt
	run --separate-stderr cnt-retract --events keys.txt --event also-missing --tenant utc --counter dist --cause deleted \
		"${WHO[@]}" -o comp.avro --stats st.json log1.avro
	[ "$status" -eq 0 ]
	[ "$(printf '%s\n' "$stderr" | sort)" = "$(printf '%s\n' "cnt-retract: '1234': not in the log" \
		"cnt-retract: 'also-missing': not in the log" "cnt-retract: 'no-such-key': not in the log" | sort)" ]
	one '.out == 1 and .not_found == 3' st.json
	[ "$(cnt-cat --count comp.avro)" -eq 1 ]
}

@test "idempotent: retracting again writes nothing and appends nothing; a compensation in the archive counts too" {
	make_log
	cnt-retract --event dist-1 --tenant utc --counter dist --cause fraud "${WHO[@]}" -o c1.avro log1.avro
	cp ledger.jsonl before.jsonl
	cnt-retract --event dist-1 --tenant utc --counter dist --cause fraud "${WHO[@]}" -o c2.avro --stats st.json log1.avro
	one '.out == 0 and .already_retracted == 1 and .ledger_records == 0' st.json
	[ "$(cnt-cat --count c2.avro)" -eq 0 ]
	cmp ledger.jsonl before.jsonl
	# a fresh ledger, but the compensation is in the archive
	rm ledger.jsonl
	cnt-retract --event dist-1 --tenant utc --counter dist --cause fraud "${WHO[@]}" -o c3.avro --stats st.json log1.avro c1.avro
	one '.out == 0 and .already_retracted == 1' st.json
	[ ! -s ledger.jsonl ]
	# the event id names it as well as the key; a second event is new
	id=$(cnt-cat log1.avro | jq -r 'select(.idempotency_key == "dist-2") | .event_id')
	cnt-retract --event "$id" --event dist-1 --tenant utc --counter dist --cause fraud "${WHO[@]}" -o c4.avro --stats st.json log1.avro c1.avro
	one '.out == 1 and .already_retracted == 1' st.json
	[ "$(cnt-cat c4.avro | jq -r .retracts)" = "$id" ]
}

@test "by member (banned): every event of the member in that counter, on time and late" {
	make_log
	cnt-retract --member m1 --tenant utc --counter dist --cause banned "${WHO[@]}" -o comp.avro --stats st.json log1.avro log2.avro
	one '.out == 3' st.json
	[ "$(cnt-cat comp.avro | jq -r '.member_ref + "/" + .counter_id' | sort -u)" = "m1/dist" ]
	one '.scope == "member" and .cause == "banned" and .selector.member_ref == "m1"' ledger.jsonl
	run cnt-retract --member m1 --cause banned "${WHO[@]}" -o x.avro log1.avro
	[ "$status" -eq 2 ]
	[[ "$output" == *"--member needs --tenant and --counter"* ]]
}

@test "by campaign (dq): a filter over event time, counter and attributes; or a list with --scope campaign" {
	make_log
	{ ev camp-1 dist m3 9 '' 2026-03-01T10:01:00Z | jq -c '.attrs = {source: "bot"}'
	  ev camp-2 dist m4 9 '' 2026-03-01T10:02:00Z | jq -c '.attrs = {source: "bot"}'
	  ev camp-3 dist m5 9 '' 2026-03-01T09:30:00Z | jq -c '.attrs = {source: "bot"}'
	  ev camp-4 dist m6 9 '' 2026-03-01T10:03:00Z | jq -c '.attrs = {source: "app"}'; } | ingest "$NOW" camp.avro
	cnt-retract --tenant utc --counter dist --from 2026-03-01T10:00:00Z --to 2026-03-01T11:00:00Z --attr source=bot \
		--cause dq "${WHO[@]}" -o comp.avro --stats st.json camp.avro log1.avro
	one '.out == 2' st.json
	[ "$(cnt-cat comp.avro | jq -r .member_ref | sort | paste -sd,)" = "m3,m4" ]
	one '.scope == "campaign" and .cause == "dq" and .selector.attrs.source == "bot" and .selector.from == 1772359200000' ledger.jsonl
	cnt-retract --event camp-3 --event camp-4 --tenant utc --counter dist --scope campaign --cause fraud "${WHO[@]}" -o c2.avro camp.avro
	[ "$(sed -n 2p ledger.jsonl | jq -r '.scope + " " + (.event_ids | length | tostring)')" = "campaign 2" ]
	# a given retraction id is used as it is, in the record and the events
	cnt-retract --event camp-1 --event camp-2 --event camp-3 --event camp-4 --tenant utc --counter dist --cause fraud \
		--retraction-id camp-2026-03 "${WHO[@]}" -o c3.avro camp.avro comp.avro c2.avro
	[ "$(cnt-cat c3.avro | jq -r .retraction_id)" = "" ]
	cnt-retract --member m1 --tenant utc --counter dist --cause fraud --retraction-id camp-2026-03 "${WHO[@]}" -o c4.avro log1.avro
	[ "$(cnt-cat c4.avro | jq -r .retraction_id | sort -u)" = camp-2026-03 ]
	[ "$(tail -n 1 ledger.jsonl | jq -r .retraction_id)" = camp-2026-03 ]
}

@test "usage: cause, requester, authority, ledger and a selection are required; causes are a closed list" {
	make_log
	for args in "--cause theft --requester a --authority b --ledger l" "--requester a --authority b --ledger l" \
		"--cause dq --authority b --ledger l" "--cause dq --requester a --ledger l" "--cause dq --requester a --authority b" \
		"--cause dq --requester a --authority b --ledger l --scope planet --event x"; do
		run cnt-retract $args --event dist-1 -o x.avro log1.avro
		[ "$status" -eq 2 ]
	done
	run cnt-retract --cause dq --requester a --authority b --ledger l -o x.avro log1.avro
	[ "$status" -eq 2 ]
	[[ "$output" == *"nothing selected"* ]]
	run cnt-retract --cause dq --requester a --authority b --ledger l --event x --retraction-id "$(printf 'r%.0s' {1..40})" -o x.avro log1.avro
	[ "$status" -eq 2 ]
	[[ "$output" == *"--retraction-id: from 1 to 39 bytes"* ]]
	# what the ledger keeps as JSON text must be UTF-8 (it was "out of memory")
	for o in --requester --authority --member --tenant --counter --attr --retraction-id; do
		run -2 --separate-stderr cnt-retract --cause dq --requester a --authority b --ledger l --event x \
			"$o" $'v=\xff' -o x.avro log1.avro
		[ "${stderr%%$'\n'*}" = "cnt-retract: $o: not UTF-8 text, which the ledger (JSON) cannot keep" ]
	done
	[ ! -e x.avro ] && [ ! -e l ]
}

@test "the ledger is a hash chain: a changed byte in an earlier record is refused (status 2)" {
	make_log
	cnt-retract --event dist-1 --tenant utc --counter dist --cause fraud "${WHO[@]}" -o c1.avro log1.avro
	cnt-retract --event dist-2 --tenant utc --counter dist --cause fraud "${WHO[@]}" -o c2.avro log1.avro
	[ "$(wc -l <ledger.jsonl)" -eq 2 ]
	[[ "$(sed -n 2p ledger.jsonl | jq -r .prev)" =~ ^[0-9a-f]{32}$ ]]
	[ "$(sed -n 2p ledger.jsonl | jq -r .prev)" != 00000000000000000000000000000000 ]
	sed -i '1s/case-4412/case-4413/' ledger.jsonl
	run cnt-retract --event dist-3 --tenant utc --counter dist --cause fraud "${WHO[@]}" -o c3.avro log1.avro
	[ "$status" -eq 2 ]
	[[ "$output" == *"line 2: the hash chain is broken"* ]]
	[ ! -e c3.avro ]
	printf '{"half":' >>ledger.jsonl
	sed -i '1s/case-4413/case-4412/' ledger.jsonl
	run cnt-retract --event dist-3 --tenant utc --counter dist --cause fraud "${WHO[@]}" -o c3.avro log1.avro
	[ "$status" -eq 2 ]
	[[ "$output" == *"line 3: no newline at the end"* ]]
}

@test "ledger strings with quotes, backslashes and control characters stay valid JSON" {
	make_log
	cnt-retract --event dist-1 --tenant utc --counter dist --cause fraud --requester $'a"b\\c\x01' --authority $'x\ty' \
		--ledger ledger.jsonl --now 2026-03-04T09:00:00Z -o c.avro --stats st.json log1.avro
	one '.requested_by == "a\"b\\c\u0001" and .authority == "x\ty"' ledger.jsonl
	jq -e . st.json >/dev/null
}

@test "a delta of -2^63 has no negation: that event is refused and named, the others retracted" {
	{ ev big-1 big m1 -9223372036854775808; ev big-2 big m1 5; } | ingest "$NOW" big.avro
	run --separate-stderr cnt-retract --member m1 --tenant utc --counter big --cause fraud "${WHO[@]}" -o c.avro --stats st.json big.avro
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"cannot be negated"* ]]
	one '.out == 1 and .refused == 1' st.json
}

@test "an event id, tenant or counter the ledger cannot name (NUL, not UTF-8) is refused and named; the ledger stays readable" {
	{ ev n-1 dist m1 10; ev n-2 dist m1 20; ev n-3 dist m1 30; ev n-4 dist m1 40; } |
		cnt-ingest -d "$DEFS" --now "$NOW" -c deflate -o clean.avro -
	# Debian's python3-avro writes the segment again (a segment no tool
	# admitted) with a NUL in the event_id of n-1, a byte 0xff in the
	# tenant_id of n-2 (written as bytes, which readers take as a string)
	# and a NUL in the counter_id of n-3
	"$PY" "$DATA/avro-poke.py" clean.avro bad.avro --bytes tenant_id \
		n-1 event_id 'v[:8] + "\0" + v[9:]' n-2 tenant_id 'b"utc\xff"' n-3 counter_id '"dist\0"'
	run --separate-stderr cnt-retract --event n-1 --event n-2 --event n-3 --event n-4 --cause fraud "${WHO[@]}" \
		-o c.avro --stats st.json bad.avro
	[ "$status" -eq 0 ]
	# the id is named whole, its NUL as \x00
	id=$(cnt-cat clean.avro | jq -r 'select(.idempotency_key == "n-1") | .event_id')
	[[ "$stderr" == *"cnt-retract: '${id:0:8}\x00${id:9}': its event_id is not UTF-8 text without NUL bytes, which the ledger cannot name; not retracted"* ]]
	[[ "$stderr" == *"its tenant_id is not UTF-8 text without NUL bytes"* ]]
	[[ "$stderr" == *"its counter_id is not UTF-8 text without NUL bytes"* ]]
	one '.out == 1 and .refused == 3' st.json
	[ "$(cnt-cat c.avro | jq -r .retracts)" = "$(cnt-cat clean.avro | jq -r 'select(.idempotency_key == "n-4") | .event_id')" ]
	# the record names n-4 alone, and the next run reads the ledger again
	one '.event_ids | length == 1' ledger.jsonl
	run -0 cnt-retract --event n-1 --event n-2 --event n-3 --event n-4 --cause fraud "${WHO[@]}" \
		-o c2.avro --stats st2.json bad.avro
	one '.out == 0 and .already_retracted == 1 and .refused == 3' st2.json
}

@test "the issue's bucket: count 1 sum 10, retracted and merged, is gone, as in the rebuild" {
	ev one-1 dist m9 10 | ingest "$NOW" one.avro
	buckets old.avro one.avro
	cnt-retract --event one-1 --tenant utc --counter dist --cause fraud "${WHO[@]}" -o comp.avro one.avro
	cnt-window -d "$DEFS" comp.avro | cnt-accumulate -o cb.avro --stats cst.json
	# a bucket of compensations alone: negative counts, its times at count -1
	one '.count == -1 and .sum == -10 and .min == null and .max == null and .sketch == null and
		.last_event_count == -1 and .max_ingest_count == -1' <(cnt-cat cb.avro)
	one '.events == 1 and .compensations == 1 and .events_out == -1 and .emptied == 0 and .stale == 0' cst.json
	cnt-accumulate -o merged.avro old.avro cb.avro --stats st.json
	[ "$(cnt-cat --count merged.avro)" -eq 0 ]
	one '.balanced == true and .events_in_buckets == 0 and .events_out == 0 and .emptied == 1 and .out == 0 and .stale == 0' st.json
	ingest "$NOW" empty.avro </dev/null
	buckets ref.avro empty.avro
	cmp merged.avro ref.avro
}

# both paths for one selection: merged compensations equal the reference
# in the additive columns; the rebuild of the touched buckets equals it
# byte for byte (cmp and cnt-diff), whatever the counter type.
both_paths() {
	buckets old.avro log1.avro log2.avro
	buckets cb.avro comp.avro
	cnt-accumulate -o merged.avro --stats mst.json old.avro cb.avro
	[ "$(exact_cols merged.avro)" = "$(exact_cols ref.avro)" ]
	cnt-retract --rebuild merged.avro -d "$DEFS" ${WOPT:-} -o rebuilt.avro --stats rb.json log1.avro log2.avro comp.avro
	cmp rebuilt.avro ref.avro
	cnt-diff rebuilt.avro ref.avro
	# the rebuild also works from the bucket file before the merge
	cnt-retract --rebuild old.avro -d "$DEFS" ${WOPT:-} -o rebuilt2.avro log1.avro log2.avro comp.avro
	cmp rebuilt2.avro ref.avro
}

@test "every counter type (exact, unique, min, max): both paths equal the full rebuild" {
	make_log
	for c in dist uniq lo hi; do
		rm -f ledger.jsonl
		# the min (3) of m1's 10:00 bucket, the max (7) of m2's, a late event
		cnt-retract --event "$c-2" --event "$c-3" --event "$c-6" --tenant utc --counter "$c" --cause fraud "${WHO[@]}" \
			-o comp.avro log1.avro log2.avro
		reference ref.avro "$c-2" "$c-3" "$c-6"
		both_paths
		# c-2 was m1's latest on-time event at 10:xx: which one is latest
		# now is not in the merged file (stale), so it is not the rebuild;
		# for min, max and unique the minima, maxima and sketches differ too
		! cmp -s merged.avro ref.avro
		one '.stale == 1' mst.json
		# dist-3 and dist-6 are all of m2's 10:00 bucket: the merge removed it already
		one '.touched == 2 and .dropped == 1 and .rebuilt_events == 2' rb.json
	done
}

# merged OLD COMP...: the bucket files of the compensation segments,
# merged into OLD, to merged.avro (stats in mst.json)
merged() {
	local old=$1 i=0 cbs=()
	shift
	for c in "$@"; do
		i=$((i + 1))
		buckets "cb$i.avro" "$c"
		cbs+=("cb$i.avro")
	done
	cnt-accumulate -o merged.avro --stats mst.json "$old" "${cbs[@]}"
}

@test "exact counters: merged compensations alone are the full rebuild, byte for byte, when nothing is stale" {
	make_log
	# each selection leaves every touched key provable: an earlier event of
	# a bucket whose latest stays (dist-1), an event alone in its bucket
	# (dist-4: the key goes), every on-time event of a bucket with a later
	# late one (dist-3: last_event_time null, max_ingest_time kept), one
	# of two events ingested at the bucket's latest ingest time (a second
	# late event of m1 joins dist-5 at $LATE)
	ev dist-7 dist m1 8 v6 2026-03-01T10:05:00Z >late3.jsonl
	ingest "$LATE" log3.avro <late3.jsonl
	buckets old.avro log1.avro log2.avro log3.avro
	for sel in "dist-1" "dist-4" "dist-3" "dist-1 dist-4 dist-3" "dist-5" "dist-7 dist-1"; do
		rm -f ledger.jsonl
		args=()
		for k in $sel; do args+=(--event "$k"); done
		cnt-retract "${args[@]}" --tenant utc --counter dist --cause fraud "${WHO[@]}" -o comp.avro log1.avro log2.avro log3.avro
		grep -vE "\"idempotency_key\":\"($(echo $sel | tr ' ' '|'))\"" ontime.jsonl | ingest "$NOW" r1.avro
		grep -vE "\"idempotency_key\":\"($(echo $sel | tr ' ' '|'))\"" late.jsonl | ingest "$LATE" r2.avro
		{ grep -vE "\"idempotency_key\":\"($(echo $sel | tr ' ' '|'))\"" late3.jsonl || true; } | ingest "$LATE" r3.avro
		buckets ref.avro r1.avro r2.avro r3.avro
		merged old.avro comp.avro
		echo "selection: $sel"
		one '.stale == 0 and .compensations == 0' mst.json
		cmp merged.avro ref.avro
		# --strict accepts it
		cnt-accumulate --strict -o strict.avro old.avro cb1.avro
		cmp strict.avro ref.avro
	done
	# the exact records have no min, max or sketch, though the events carry items
	cnt-cat old.avro | jq -e -s 'map(select(.counter_id == "dist")) | length > 0 and
		all(.[]; .min == null and .max == null and .sketch == null and .late_sketch == null)' >/dev/null
}

@test "exact counters: retractions in several runs merge in any order and grouping to the full rebuild" {
	make_log
	buckets old.avro log1.avro log2.avro
	cnt-retract --event dist-1 --tenant utc --counter dist --cause fraud "${WHO[@]}" -o c1.avro log1.avro log2.avro
	cnt-retract --event dist-3 --tenant utc --counter dist --cause dq "${WHO[@]}" -o c2.avro log1.avro log2.avro c1.avro
	cnt-retract --event dist-4 --tenant utc --counter dist --cause deleted "${WHO[@]}" -o c3.avro log1.avro log2.avro c1.avro c2.avro
	reference ref.avro dist-1 dist-3 dist-4
	buckets b1.avro c1.avro
	buckets b2.avro c2.avro
	buckets b3.avro c3.avro
	# the compensations merged first: a bucket file of compensations alone
	cnt-accumulate -o comps.avro b3.avro b1.avro b2.avro
	cnt-cat comps.avro | jq -e -s 'all(.[]; .count + .late_count < 0)' >/dev/null
	cnt-accumulate -o m1.avro --stats s1.json old.avro comps.avro
	cnt-accumulate -o step.avro old.avro b2.avro
	cnt-accumulate -o m2.avro --stats s2.json step.avro b3.avro b1.avro
	cnt-accumulate -o m3.avro b1.avro b2.avro old.avro b3.avro
	cmp m1.avro ref.avro
	cmp m2.avro ref.avro
	cmp m3.avro ref.avro
	one '.stale == 0' s1.json
	one '.stale == 0' s2.json
}

@test "cnt-count: compensations counted with their originals leave the same stale records as the pipe; --strict refuses them and writes nothing" {
	make_log
	cnt-retract --event dist-2 --event dist-6 --tenant utc --counter dist --cause fraud "${WHO[@]}" -o comp.avro log1.avro log2.avro
	cnt-dedup -d "$DEFS" log1.avro log2.avro comp.avro | cnt-window -d "$DEFS" | cnt-accumulate -d "$DEFS" --stats pst.json -o pipe.avro
	one '.stale == 2' pst.json
	cnt-count -d "$DEFS" -s count.state --stats cst.json -o counted.avro log1.avro log2.avro comp.avro
	one '.accumulate.stale == 2' cst.json
	cmp counted.avro pipe.avro
	# refused with a state of another log: nothing written (the state as it
	# was, no bucket, duplicates or rejects file)
	ev x-1 dist m9 1 v1 2026-03-01T10:00:00Z | ingest "$NOW" other.avro
	cnt-count -d "$DEFS" -s other.state -o other-buckets.avro other.avro
	cp other.state before.state
	run cnt-count --strict -d "$DEFS" -s other.state -D dups.avro -r rej.jsonl -o strict.avro log1.avro log2.avro comp.avro
	[ "$status" -eq 2 ]
	[ "$output" = "cnt-count: 2 stale records: compensations counted with their originals left their latest times unknown (cnt-retract --rebuild recounts them)" ]
	[ ! -e strict.avro ] && [ ! -e dups.avro ] && [ ! -e rej.jsonl ]
	cmp other.state before.state
	[ -z "$(ls -A | grep -v '\.\(avro\|json\|jsonl\|state\)$' || true)" ]
	# one thread gives the same refusal; without the compensations --strict passes
	run cnt-count --strict --threads 1 -d "$DEFS" -o strict.avro log1.avro log2.avro comp.avro
	[ "$status" -eq 2 ] && [ ! -e strict.avro ]
	cnt-count --strict -d "$DEFS" --stats ok.json -o ok.avro log1.avro log2.avro
	one '.accumulate.stale == 0' ok.json
}

@test "cnt-count --base: bucket files merged in as cnt-accumulate merges them with the events, before anything is finished" {
	make_log
	cnt-retract --event dist-2 --event dist-6 --tenant utc --counter dist --cause fraud "${WHO[@]}" -o comp.avro log1.avro log2.avro
	# the base: segment 1 counted; then the rest, with the base, in one step
	cnt-count -d "$DEFS" -s s1.state -o base.avro log1.avro
	cp s1.state p.state
	cnt-dedup -d "$DEFS" -s p.state log2.avro comp.avro | cnt-window -d "$DEFS" |
		cnt-accumulate -d "$DEFS" --stats pst.json -o pipe.avro - base.avro
	for th in 1 2; do
		cp s1.state c.state
		cnt-count -d "$DEFS" -s c.state --threads $th --base base.avro --stats cst.json -o c.avro log2.avro comp.avro
		cmp c.avro pipe.avro
		cmp c.state p.state
		[ "$(jq -c '[.stale, .buckets_in, .events_in_buckets]' pst.json)" = "$(jq -c '.accumulate | [.stale, .buckets_in, .events_in_buckets]' cst.json)" ]
	done
	# dist-6 and its compensation cancel within the rest; the base holds the
	# same key's on-time event: merged in one step the key's latest ingest
	# time is the compensated one, so unknown (stale)
	one '.stale == 2' pst.json
	# counting the rest to a finished file and merging after is not the
	# same: finishing drops the cancelled record with its latest time
	cp s1.state t.state
	cnt-count -d "$DEFS" -s t.state -o rest.avro log2.avro comp.avro
	cnt-accumulate -d "$DEFS" -o two-step.avro rest.avro base.avro
	! cmp -s two-step.avro pipe.avro
	# bucket files only, named
	run --separate-stderr cnt-count -d "$DEFS" --base log1.avro -o x.avro log2.avro
	[ "$status" -eq 2 ]
	[ "$stderr" = "cnt-count: 'log1.avro' holds cnt.CountingEvent records, not cnt.BucketAggregate: it is not a bucket file" ]
	[ ! -e x.avro ]
	run --separate-stderr cnt-count -d "$DEFS" --base - -o x.avro log2.avro
	[ "$status" -eq 2 ]
	[[ $stderr == "cnt-count: --base needs a bucket file, not standard input"* ]]
}

@test "exact counters: a stale record is counted, named with -v, refused with --strict, and recounted by --rebuild" {
	make_log
	buckets old.avro log1.avro log2.avro
	# dist-2 is the latest on-time event of m1 at 10:xx; dist-6 the only
	# event of m2 at 10:xx ingested at $LATE
	cnt-retract --event dist-2 --event dist-6 --tenant utc --counter dist --cause fraud "${WHO[@]}" -o comp.avro log1.avro log2.avro
	reference ref.avro dist-2 dist-6
	buckets cb.avro comp.avro
	run --separate-stderr cnt-accumulate -v -o merged.avro --stats st.json old.avro cb.avro
	[ "$status" -eq 0 ]
	one '.stale == 2 and .out == 12' st.json
	[ "$(printf '%s\n' "$stderr" | grep stale)" = "cnt-accumulate: stale: 'utc' 'dist' v1 'm1' 2026-03-01T10:00:00.000Z shard 0: last_event_time not known
cnt-accumulate: stale: 'utc' 'dist' v1 'm2' 2026-03-01T10:00:00.000Z shard 0: max_ingest_time not known" ]
	# the counts and sums are right; the stale records hold a count of 0 at the unknown time
	[ "$(exact_cols merged.avro)" = "$(exact_cols ref.avro)" ]
	cnt-cat merged.avro | jq -e -s 'map(select(.counter_id == "dist")) |
		(.[0] | .member_ref == "m1" and .last_event_count == 0) and
		(.[1] | .member_ref == "m2" and .max_ingest_count == 0)' >/dev/null
	! cmp -s merged.avro ref.avro
	run cnt-accumulate --strict -o strict.avro old.avro cb.avro
	[ "$status" -eq 2 ]
	[ "$output" = "cnt-accumulate: 2 stale records: compensations merged in left their latest times unknown (cnt-retract --rebuild recounts them)" ]
	[ ! -e strict.avro ]
	cnt-retract --rebuild merged.avro -d "$DEFS" -o rebuilt.avro --stats rb.json log1.avro log2.avro comp.avro
	cmp rebuilt.avro ref.avro
	cnt-accumulate --strict --stats st2.json -o again.avro rebuilt.avro
	one '.stale == 0' st2.json
	# a member holding a quote, a backslash and a control byte: escaped in the name
	printf '%s\n' '{"idempotency_key":"q-1","tenant_id":"utc","counter_id":"dist","member_ref":"q\"\\\u0001","delta":1,"event_time":"2026-03-01T10:00:00Z"}' \
		'{"idempotency_key":"q-2","tenant_id":"utc","counter_id":"dist","member_ref":"q\"\\\u0001","delta":2,"event_time":"2026-03-01T10:30:00Z"}' |
		ingest "$NOW" q.avro
	buckets qold.avro q.avro
	rm -f ledger.jsonl
	cnt-retract --event q-2 --tenant utc --counter dist --cause fraud "${WHO[@]}" -o qc.avro q.avro
	buckets qcb.avro qc.avro
	run --separate-stderr cnt-accumulate -v -o qm.avro --stats qst.json qold.avro qcb.avro
	[ "$status" -eq 0 ]
	[ "$(printf '%s\n' "$stderr" | grep stale)" = "cnt-accumulate: stale: 'utc' 'dist' v1 'q\"\x5c\x01' 2026-03-01T10:00:00.000Z shard 0: last_event_time not known" ]
	one '.stale == 1' qst.json
}

@test "every counter type over 4 shards: a compensation lands in its original's shard" {
	make_log
	WOPT="--shards 4"
	for c in dist uniq lo hi; do
		rm -f ledger.jsonl
		cnt-retract --member m1 --tenant utc --counter "$c" --cause banned "${WHO[@]}" -o comp.avro log1.avro log2.avro
		reference ref.avro "$c-1" "$c-2" "$c-5"
		both_paths
	done
	# all of m1's events retracted: the merge alone is already the rebuild
	cmp merged.avro ref.avro
}

@test "cnt-dedup keeps a compensation of an item_member counter (views) and drops it when resent" {
	{ ev v-1 views vid1 1 viewer1; ev v-2 views vid1 1 viewer2; } | ingest "$NOW" views.avro
	cnt-retract --event v-1 --tenant utc --counter views --cause fraud "${WHO[@]}" -o comp.avro views.avro
	cnt-dedup -d "$DEFS" -s state -o d1.avro --stats st1.json views.avro comp.avro
	one '.out == 3 and .duplicates == 0' st1.json
	cnt-dedup -d "$DEFS" -s state -o d2.avro --stats st2.json comp.avro
	one '.out == 0 and .duplicates == 1' st2.json
}

@test "views rebuilt after a retraction: a new version, the cheater gone, ranks contiguous, as a fresh build" {
	local V=$BATS_TEST_DIRNAME/data/views vnow=2026-03-01T12:00:00Z
	cnt-ingest -d "$V/defs.json" --now "$vnow" -o log.avro "$V/ranking.jsonl"
	cnt-window -d "$V/defs.json" log.avro | cnt-accumulate -o old.avro
	for b in rk_ord rk_comp; do cnt-project -d "$V/defs.json" -b $b -w v --now "$vnow" old.avro; done
	cnt-cat v/rk_ord/global/current/view.avro | jq -r '"\(.member_ref):\(.rank)"' | paste -sd' ' - | grep -qx 'a:1 b:2 d:3 c:4 e:5'
	# member a is proved a cheater
	cnt-retract --member a --tenant utc --counter pts --cause dq "${WHO[@]}" -o comp.avro log.avro
	cnt-window -d "$V/defs.json" comp.avro | cnt-accumulate -o cb.avro
	cnt-accumulate -o merged.avro old.avro cb.avro
	cnt-retract --rebuild merged.avro -d "$V/defs.json" -o new.avro log.avro comp.avro
	grep -v '"member_ref":"a"' "$V/ranking.jsonl" | cnt-ingest -d "$V/defs.json" --now "$vnow" -o ref.log -
	cnt-window -d "$V/defs.json" ref.log | cnt-accumulate -o ref.avro
	cmp new.avro ref.avro
	for b in rk_ord rk_comp; do
		cnt-project -d "$V/defs.json" -b $b -w v --now "$vnow" new.avro
		cnt-project -d "$V/defs.json" -b $b -w fresh --now "$vnow" ref.avro
		[ "$(readlink v/$b/global/current)" = v000002 ]
		cnt-rank -w v -b $b top 10 | one '.version == 2'
		[ "$(cnt-cat v/$b/global/current/view.avro | jq -c '[.member_ref, .rank, .value]')" = \
		  "$(cnt-cat fresh/$b/global/current/view.avro | jq -c '[.member_ref, .rank, .value]')" ]
	done
	cnt-cat v/rk_ord/global/current/view.avro | jq -r '"\(.member_ref):\(.rank)"' | paste -sd' ' - | grep -qx 'b:1 d:2 c:3 e:4'
	cnt-cat v/rk_comp/global/current/view.avro | jq -r '"\(.member_ref):\(.rank)"' | paste -sd' ' - | grep -qx 'b:1 d:1 c:3 e:4'
	# the version before the retraction is kept, unchanged
	cnt-cat v/rk_ord/global/v000001/view.avro | jq -r .member_ref | paste -sd' ' - | grep -qx 'a b d c e'
}

@test "cnt-retract(1) EXAMPLES: every '\$ ' line runs in the demo's directory" {
	local src=$BATS_TEST_DIRNAME/..
	CNT_DEMO_DIR=$PWD/demo sh "$src/examples/demo.sh" >/dev/null 2>&1
	cd demo
	[ -e examples ] || ln -s "$src/examples" examples
	sed -n '/^\.Sh EXAMPLES/,/^\.Sh /p' "$src/man/cnt-retract.1" | sed -n 's/^\$ //p' | sed 's/\\e/\\/g' >cmds.sh
	[ "$(wc -l <cmds.sh)" -eq 9 ]
	while IFS= read -r cmd; do
		echo "\$ $cmd"
		eval "$cmd" >>out.txt 2>&1
	done <cmds.sh
	# the second ban retracted nothing; the campaign found the two strava rides
	grep -q '"out":0,.*"already_retracted":2' out.txt
	[ "$(cnt-cat --count retract-4.avro)" -eq 2 ]
	[ "$(wc -l <retractions.jsonl)" -eq 3 ]
	# the ride was alone in its hour: the merge is already the rebuild
	# (nothing stale, --strict passed), which has one record fewer than before
	grep -q '"tool":"cnt-accumulate".*"emptied":1,"stale":0' out.txt
	cmp buckets-merged.avro buckets-retracted.avro
	[ "$(cnt-cat --count buckets-retracted.avro)" -eq $(($(cnt-cat --count buckets.avro) - 1)) ]
}

@test "a key that is not in the log is named with its control bytes escaped" {
	make_log
	run --separate-stderr cnt-retract --event $'ev\x1b[2Jil\\' --cause fraud "${WHO[@]}" -o c.avro --stats st.json log1.avro
	[ "$status" -eq 0 ]
	[ "$stderr" = "cnt-retract: 'ev\\x1b[2Jil\\x5c': not in the log" ]
	one '.not_found == 1 and .out == 0 and .ledger_records == 0' st.json
}

@test "out of memory at any allocation: status 4, one line, no segment, the ledger unchanged" {
	make_log
	cnt-retract --event dist-1 --tenant utc --counter dist --cause fraud "${WHO[@]}" -o c1.avro log1.avro
	cp ledger.jsonl before.jsonl
	buckets old.avro log1.avro
	local n=1 rc
	while :; do
		rc=0
		# no worker threads: their allocations (whose place in the count
		# varies) would end the walk early, before the last of the run's
		CNT_READ_THREADS=0 CNT_WRITE_THREADS=0 CNT_FAIL_ALLOC=$n cnt-retract --member m2 --tenant utc --counter dist --cause banned "${WHO[@]}" \
			-o out.avro --stats st.json log1.avro c1.avro 2>err || rc=$?
		[ "$rc" -eq 0 ] && break
		echo "allocation $n: status $rc: $(cat err)"
		[ "$rc" -eq 4 ]
		[ "$(wc -l <err)" -eq 1 ] && [[ "$(cat err)" == "cnt-retract: "*"out of memory"* ]]
		[ ! -e out.avro ] && [ ! -e st.json ]
		cmp ledger.jsonl before.jsonl
		[ -z "$(ls -A | grep -E '^\.|tmp' || true)" ]
		n=$((n + 1))
	done
	[ "$n" -gt 10 ]
	[ "$(wc -l <ledger.jsonl)" -eq 2 ]
	n=1
	while :; do
		rc=0
		CNT_FAIL_ALLOC=$n cnt-retract --rebuild old.avro -d "$DEFS" -o rb.avro log1.avro c1.avro 2>err || rc=$?
		[ "$rc" -eq 0 ] && break
		[ "$rc" -eq 4 ] && [ ! -e rb.avro ]
		n=$((n + 1))
	done
	[ "$n" -gt 10 ]
}

@test "-o /dev/null (not a regular file) is written without an fsync error" {
	make_log
	run --separate-stderr cnt-retract --member m1 --tenant utc --counter dist --cause banned "${WHO[@]}" -o /dev/null log1.avro
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$(wc -l <ledger.jsonl)" -eq 1 ]
}

@test "a rebuild makes a unique counter's sketches at the precision its tolerated_error sets" {
	jq '(.counters[] | select(.counter_id == "uniq") | .versions[0].tolerated_error) = 0.1' "$DEFS" >loose.json
	DEFS=$PWD/loose.json
	make_log
	cnt-retract --event uniq-2 --tenant utc --counter uniq --cause fraud "${WHO[@]}" -o comp.avro log1.avro log2.avro
	reference ref.avro uniq-2
	both_paths
	# precision 9 (0.1 at 95 %): every sketch's header says so
	cnt-cat rebuilt.avro | jq -c 'select(.counter_id == "uniq" and .sketch != null) | .sketch | explode[0:3]' | sort -u >hdr.txt
	[ "$(cat hdr.txt)" = "[1,1,9]" ]
	cnt-cat rebuilt.avro | jq -c 'select(.counter_id == "uniq" and .late_sketch != null) | .late_sketch | explode[2]' | sort -u >late.txt
	[ "$(cat late.txt)" = 9 ]
	# the other counters' sketches (min, max: no tolerated_error) stay at 14
	cnt-cat rebuilt.avro | jq -c 'select(.counter_id == "lo" and .sketch != null) | .sketch | explode[2]' | sort -u | grep -qx 14
}
