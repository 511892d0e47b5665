#!/usr/bin/env bats
# Quarantine: cnt-ingest --holds (each signal, held events absent from the
# log, conservation, order independence) and cnt-hold (list, clear into the
# right window or the late columns, reject into a fraud retraction, deciding
# twice refused, hostile hold files and ledgers).

bats_require_minimum_version 1.5.0
load data/core/common

NOW=2026-03-01T10:20:00Z       # the run's ingest time: every 10:xx event on time
SOON=2026-03-01T10:40:00Z      # a decision within the horizon of the 10:00 bucket (ends 11:00 + 600 s)
LATE=2026-03-01T13:00:00Z      # a decision past it

setup() {
	set -o pipefail
	cd "$BATS_TEST_TMPDIR"
	# utc/pts: the three signals; utc/dist (from the core defs) declares none
	jq '.counters += [{tenant_id: "utc", counter_id: "pts",
		holds: [{signal: "rate", window_s: 600, ceiling: 100},
		        {signal: "lockstep", span_s: 60, members: 3},
		        {signal: "device", attr: "ip", span_s: 60, max_events: 2}],
		versions: [{version: 1, type: "exact", lateness_horizon_s: 600}]}]' "$DEFS" >defs.json
	DEFS=$PWD/defs.json
}

# dev KEY MEMBER DELTA TIME IP: a pts event carrying attrs.ip
dev() {
	printf '{"idempotency_key":"%s","tenant_id":"utc","counter_id":"pts","member_ref":"%s","delta":%s,"event_time":"%s","attrs":{"ip":"%s"}}\n' "$@"
}

# hold_in OUT HOLDS [OPTIONS]: ingest standard input at $NOW with a hold file
hold_in() {
	local out=$1 holds=$2
	shift 2
	cnt-ingest -d "$DEFS" --now "$NOW" --max-past 400d -o "$out" --holds "$holds" --stats st.json "$@" -
}

detail_of() { cnt-cat holds.avro | jq -r --arg k "$1" 'select(.idempotency_key == $k) | .detail'; }
held_keys() { cnt-cat "$1" | jq -r .idempotency_key | sort | paste -sd, -; }
log_keys() { cnt-cat "$1" | jq -r .idempotency_key | sort | paste -sd, -; }

# mixed: events matching each signal, and events matching none
mixed() {
	ev r1 pts m1 60 '' 2026-03-01T10:00:00Z     # rate: 60 in the window
	ev r2 pts m1 60 '' 2026-03-01T10:05:00Z     # 120 > 100: held
	ev r3 pts m1 60 '' 2026-03-01T10:16:00Z     # the window (10:06, 10:16] holds 60: admitted
	ev l1 pts a 7 '' 2026-03-01T10:01:00Z       # lockstep: a, b, c gain 7 within 60 s
	ev l2 pts b 7 '' 2026-03-01T10:01:30Z
	ev l3 pts c 7 '' 2026-03-01T10:02:00Z
	ev l4 pts d 7 '' 2026-03-01T10:04:00Z       # too late for the burst
	ev l5 pts e 8 '' 2026-03-01T10:01:10Z       # another delta
	dev d1 x1 1 2026-03-01T10:10:00Z 10.0.0.1   # device: three events of one ip in 60 s
	dev d2 x2 2 2026-03-01T10:10:20Z 10.0.0.1
	dev d3 x3 3 2026-03-01T10:11:00Z 10.0.0.1
	dev d4 x4 4 2026-03-01T10:10:30Z 10.0.0.2   # another ip
	ev p1 dist m1 500 '' 2026-03-01T10:00:00Z    # a counter without signals
}

@test "definitions: hold signals are checked (kind, keys, ranges)" {
	jq '.counters[-1].holds = [{signal: "rate", window_s: 600}]' defs.json >bad.json
	run -2 cnt-ingest -d bad.json --holds h.avro -o l.avro /dev/null
	[ "$output" = "cnt-ingest: definitions 'bad.json': \$.counters[10].holds[0].ceiling: required key is missing" ]
	jq '.counters[-1].holds = [{signal: "speed", span_s: 1}]' defs.json >bad.json
	run -2 cnt-ingest -d bad.json --holds h.avro -o l.avro /dev/null
	[[ $output == *"holds[0].signal: unknown value 'speed' (expected one of rate, lockstep, device)" ]]
	jq '.counters[-1].holds = [{signal: "lockstep", span_s: 60, members: 3, attr: "ip"}]' defs.json >bad.json
	run -2 cnt-ingest -d bad.json --holds h.avro -o l.avro /dev/null
	[[ $output == *"holds[0].attr: unknown key" ]]
	jq '.counters[-1].holds = [{signal: "lockstep", span_s: 60, members: 1}]' defs.json >bad.json
	run -2 cnt-ingest -d bad.json --holds h.avro -o l.avro /dev/null
	[[ $output == *"holds[0].members: 1 is out of range [2, 1000000000]" ]]
	jq '.counters[-1].holds = [{signal: "device", attr: "", span_s: 60, max_events: 2}]' defs.json >bad.json
	run -2 cnt-ingest -d bad.json --holds h.avro -o l.avro /dev/null
	[[ $output == *"holds[0].attr: must be 1 to 64 bytes" ]]
	[ ! -e h.avro ] && [ ! -e l.avro ]
}

@test "signals declared: without --holds the run is refused, --no-holds admits everything" {
	mixed >in.jsonl
	run -2 --separate-stderr cnt-ingest -d "$DEFS" --now "$NOW" --max-past 400d -o log.avro in.jsonl
	[ "$stderr" = "cnt-ingest: counter 'utc/pts' declares hold signals: give --holds FILE, or --no-holds to admit every event" ]
	[ ! -e log.avro ]
	run -0 cnt-ingest -d "$DEFS" --now "$NOW" --max-past 400d -o log.avro --no-holds --stats st.json in.jsonl
	[ "$(cnt-cat --count log.avro)" -eq 13 ]
	one '.held == 0 and .out == 13 and .balanced' st.json
	run -2 cnt-ingest -d "$DEFS" --holds h.avro --no-holds -o log.avro in.jsonl
	[[ $output == "cnt-ingest: --holds and --no-holds exclude each other"* ]]
	# a definitions file without signals needs neither
	run -0 cnt-ingest -d "$DATA/defs.json" --now "$NOW" --max-past 400d -o plain.avro <(ev p1 dist m1 1)
}

@test "each signal holds its events, and only them; held events are never in the log" {
	mixed | hold_in log.avro holds.avro
	[ "$(held_keys holds.avro)" = "d1,d2,d3,l1,l2,l3,r2" ]
	[ "$(log_keys log.avro)" = "d4,l4,l5,p1,r1,r3" ]
	cnt-cat holds.avro | jq -c '[.idempotency_key, .signal]' | sort >sig.txt
	[ "$(cat sig.txt | paste -sd' ' -)" = '["d1","device"] ["d2","device"] ["d3","device"] ["l1","lockstep"] ["l2","lockstep"] ["l3","lockstep"] ["r2","rate"]' ]
	# the hold record: the event as admitted, hold id, detail, held_at
	cnt-cat holds.avro | jq -e -s 'all(.[]; (.hold_id | test("^h-[0-9a-f]{32}$")) and .held_at == .ingest_time
		and .ingest_time == 1772360400000 and .retracts == null)'
	[ "$(detail_of r2)" = "member's deltas over 600s up to its event_time sum to 120, above the ceiling 100" ]
	[ "$(detail_of l1)" = "3 members gained delta 7 within 60s (lockstep at 3)" ]
	[ "$(detail_of d1)" = "3 events with one value of attrs.ip within 60s (more than 2)" ]
	# hold ids are derived from the event id: the same in every run
	mixed | hold_in log2.avro holds2.avro
	cmp holds.avro holds2.avro
	[ "$(cnt-cat holds.avro | jq -r .hold_id | sort -u | wc -l)" -eq 7 ]
}

@test "rate: the events that take a member over the ceiling are held, the ones before are not; sums include held events" {
	{
		ev a1 pts m1 100 '' 2026-03-01T10:00:00Z   # 100: not above
		ev a2 pts m1 1 '' 2026-03-01T10:09:59Z     # 101: held
		ev a3 pts m1 1 '' 2026-03-01T10:10:00Z     # (10:00, 10:10]: 2 ... a1 left the window
		ev a4 pts m2 50 '' 2026-03-01T10:00:00Z    # two at the same instant: both see 101
		ev a5 pts m2 51 '' 2026-03-01T10:00:00Z
		ev a6 pts m3 -50 '' 2026-03-01T10:00:00Z   # negative deltas lower the sum
		ev a7 pts m3 140 '' 2026-03-01T10:01:00Z
	} | hold_in log.avro holds.avro
	[ "$(held_keys holds.avro)" = "a2,a4,a5" ]
	one '.held == 3 and .held_by_signal == {"rate": 3, "lockstep": 0, "device": 0}' st.json
}

@test "lockstep: the whole burst is held; fewer members, or members spread wider than the span, are not" {
	{
		ev b1 pts a 5 '' 2026-03-01T10:00:00Z
		ev b2 pts b 5 '' 2026-03-01T10:01:00Z      # span 60 s, both ends included
		ev b3 pts c 5 '' 2026-03-01T10:00:30Z
		ev b4 pts a 5 '' 2026-03-01T10:00:10Z      # a again: still three members
		ev c1 pts a 6 '' 2026-03-01T10:00:00Z
		ev c2 pts a 6 '' 2026-03-01T10:00:05Z      # one member three times is not lockstep
		ev c3 pts a 6 '' 2026-03-01T10:00:06Z
		ev c4 pts b 6 '' 2026-03-01T10:00:07Z
		ev e1 pts x 9 '' 2026-03-01T10:00:00Z
		ev e2 pts y 9 '' 2026-03-01T10:01:00.001Z  # 60.001 s after e1
		ev e3 pts z 9 '' 2026-03-01T10:02:00.002Z
	} | hold_in log.avro holds.avro
	[ "$(held_keys holds.avro)" = "b1,b2,b3,b4" ]
	one '.held_by_signal.lockstep == 4' st.json
}

@test "device: more than max_events events of one attrs value within the span; other values and events without the key are not" {
	{
		dev f1 m1 21 2026-03-01T10:00:00Z 1.1.1.1
		dev f2 m2 22 2026-03-01T10:00:30Z 1.1.1.1
		dev f3 m3 23 2026-03-01T10:00:59Z 1.1.1.1
		dev g1 m1 2 2026-03-01T10:00:00Z 2.2.2.2
		dev g2 m1 3 2026-03-01T10:00:30Z 2.2.2.2  # only two: not more than 2
		dev g3 m1 4 2026-03-01T10:02:00Z 2.2.2.2
		ev h1 pts m1 11 '' 2026-03-01T10:00:00Z   # no ip at all
		ev h2 pts m2 12 '' 2026-03-01T10:00:01Z
		ev h3 pts m3 13 '' 2026-03-01T10:00:02Z
	} | hold_in log.avro holds.avro
	[ "$(held_keys holds.avro)" = "f1,f2,f3" ]
	one '.held_by_signal.device == 3' st.json
}

@test "a held event records the first declared signal it matched" {
	# r-events that are also a lockstep burst of deltas 101
	{
		ev k1 pts a 101 '' 2026-03-01T10:00:00Z
		ev k2 pts b 101 '' 2026-03-01T10:00:01Z
		ev k3 pts c 101 '' 2026-03-01T10:00:02Z
	} | hold_in log.avro holds.avro
	[ "$(cnt-cat holds.avro | jq -r .signal | sort -u)" = rate ]
	jq '.counters[-1].holds |= [.[1], .[0]]' defs.json >swapped.json
	{
		ev k1 pts a 101 '' 2026-03-01T10:00:00Z
		ev k2 pts b 101 '' 2026-03-01T10:00:01Z
		ev k3 pts c 101 '' 2026-03-01T10:00:02Z
	} | cnt-ingest -d swapped.json --now "$NOW" --max-past 400d -o log2.avro --holds holds2.avro -
	[ "$(cnt-cat holds2.avro | jq -r .signal | sort -u)" = lockstep ]
}

@test "verdicts do not depend on input order; a run that holds nothing writes the log of a run without holds" {
	mixed >in.jsonl
	hold_in a.avro ha.avro <in.jsonl
	tac in.jsonl | hold_in b.avro hb.avro
	[ "$(held_keys ha.avro)" = "$(held_keys hb.avro)" ]
	[ "$(log_keys a.avro)" = "$(log_keys b.avro)" ]
	# nothing held: the same bytes as --no-holds, events in input order
	grep -v '"r2"\|"l[123]"\|"d[123]"' in.jsonl | grep -v '"r1"' >calm.jsonl
	hold_in calm.avro calmholds.avro <calm.jsonl
	cnt-ingest -d "$DEFS" --now "$NOW" --max-past 400d -o nohold.avro --no-holds calm.jsonl
	cmp calm.avro nohold.avro
	[ "$(cnt-cat --count calmholds.avro)" -eq 0 ]
	[ "$(keys_of calm.avro)" = "$(jq -r .idempotency_key calm.jsonl | paste -sd, -)" ]
}

@test "--stats: in == out + rejected + duplicates + held, with held_by_signal and per-counter held" {
	{
		mixed
		ev r2 pts m1 60 '' 2026-03-01T10:05:00Z     # a duplicate of a held event
		ev p1 dist m1 500 '' 2026-03-01T10:00:00Z   # a duplicate of an admitted one
		ev z1 pts m1 1 '' 2020-01-01T00:00:00Z      # too old (--max-past 400d): rejected
		echo '{"broken'
	} | hold_in log.avro holds.avro -r rej.jsonl -D dup.jsonl
	one '.in == 17 and .out == 6 and .rejected == 2 and .duplicates == 2 and .held == 7 and .balanced
		and .in == .out + .rejected + .duplicates + .held
		and .held_by_signal == {"rate": 1, "lockstep": 3, "device": 3}' st.json
	one '[.counters[] | select(.tenant_id == "utc" and (.counter_id == "dist" or .counter_id == "pts"))
		| {counter_id, accepted, held}] == [{"counter_id": "dist", "accepted": 1, "held": 0},
		{"counter_id": "pts", "accepted": 5, "held": 7}]' st.json
	[ "$(cnt-cat --count log.avro)" -eq 6 ]
	[ "$(cnt-cat --count holds.avro)" -eq 7 ]
	[ "$(wc -l <dup.jsonl)" -eq 2 ]
	# the hottest keys are those of the events written, held ones not
	# counted: the same list as cnt-window's over the log
	one '([.top_keys[].events] | add) == 6 and .top_key.member_ref == "m1" and .top_key.counter_id == "pts"
		and .top_key.events == 2 and .top_key_share == 0.333333' st.json
	cnt-window -d "$DEFS" --stats w.json log.avro >/dev/null
	jq -e -s '.[0].top_keys == .[1].top_keys and .[0].top_key == .[1].top_key' st.json w.json
	run -0 --separate-stderr cnt-ingest -d "$DEFS" --now "$NOW" --max-past 400d -o l2.avro --holds h2.avro -v < <(mixed)
	[ "$stderr" = "cnt-ingest: in 13, out 6, rejected 0, duplicate 0, held 7 (dedup hit rate 0.00%)" ]
}

@test "--holds: the hold file is an output like the others (no standard output, none left on failure)" {
	run -2 cnt-ingest -d "$DEFS" --now "$NOW" -o log.avro --holds - /dev/null
	[[ $output == "cnt-ingest: --holds needs a file name"* ]]
	echo '{"broken' >in.jsonl
	run -3 cnt-ingest -d "$DEFS" --now "$NOW" -o log.avro --holds /dev/full in.jsonl
	[ ! -e log.avro ]
	[ -z "$(ls -A | grep -v in.jsonl | grep -v defs.json)" ]
}

# clear_one KEY NOW: clears the hold of KEY at NOW into rel.avro
hold_of() { cnt-cat holds.avro | jq -r --arg k "$1" 'select(.idempotency_key == $k) | .hold_id'; }

@test "clear: the event is released with its own id, key and times, ingest time the decision's; it counts in its window" {
	mixed | hold_in log.avro holds.avro
	h=$(hold_of r2)
	run -0 --separate-stderr cnt-hold clear --decisions dec.jsonl --by ana --now "$SOON" -o rel.avro --hold "$h" \
		--stats st2.json holds.avro
	[ -z "$stderr" ]
	one '.tool == "cnt-hold" and .in == 7 and .out == 1 and .decided == 1 and .retraction_id == null' st2.json
	cnt-cat holds.avro | jq -c 'select(.idempotency_key == "r2") | del(.hold_id, .signal, .detail, .held_at, .ingest_time)' >want.json
	cnt-cat rel.avro | jq -c 'del(.ingest_time)' >got.json
	cmp want.json got.json
	one '.ingest_time == 1772361600000' <(cnt-cat rel.avro)
	# the decision: one chained line
	one --arg h "$h" '.hold_id == $h and .decision == "cleared" and .decided_by == "ana"
		and .decided_at == "2026-03-01T10:40:00.000Z" and .held_at == "2026-03-01T10:20:00.000Z"
		and .signal == "rate" and .idempotency_key == null and .retraction_id == null
		and .prev == "00000000000000000000000000000000"' dec.jsonl
	# counted: the 10:00 bucket of m1 holds r1, r2 and r3 on time
	cnt-window -d "$DEFS" log.avro rel.avro | cnt-accumulate -o b.avro
	one '.count == 3 and .sum == 180 and .late_count == 0' <(cnt-cat b.avro | jq -c 'select(.counter_id == "pts" and .member_ref == "m1")')
	# the same as if r2 had been admitted in the first place
	mixed | cnt-ingest -d "$DEFS" --now "$NOW" --max-past 400d -o all.avro --no-holds -
	cnt-window -d "$DEFS" all.avro | cnt-accumulate -o ball.avro
	# (but for when the released event was ingested, and so how many events
	# share the latest ingest time)
	diff <(cnt-cat b.avro | jq -c 'select(.member_ref == "m1") | del(.max_ingest_time, .max_ingest_count)') \
		<(cnt-cat ball.avro | jq -c 'select(.member_ref == "m1") | del(.max_ingest_time, .max_ingest_count)')
}

@test "clear past the lateness horizon: the released events land in their bucket's late columns" {
	mixed | hold_in log.avro holds.avro
	run -0 cnt-hold clear --decisions dec.jsonl --by ana --now "$LATE" -o rel.avro --signal lockstep holds.avro
	[ "$(keys_of rel.avro)" = "l1,l2,l3" ]
	cnt-window -d "$DEFS" log.avro rel.avro | cnt-accumulate -o b.avro
	cnt-cat b.avro | jq -c 'select(.counter_id == "pts" and (.member_ref == "a" or .member_ref == "b" or .member_ref == "c"))
		| [.member_ref, .bucket_start, .count, .sum, .late_count, .late_sum]' | paste -sd' ' - >got.txt
	[ "$(cat got.txt)" = '["a",1772359200000,0,0,1,7] ["b",1772359200000,0,0,1,7] ["c",1772359200000,0,0,1,7]' ]
	[ "$(wc -l <dec.jsonl)" -eq 3 ]
	[ "$(jq -r .decision dec.jsonl | sort -u)" = cleared ]
}

@test "reject: a retraction record with cause fraud in the retraction ledger; nothing to the log" {
	mixed | hold_in log.avro holds.avro
	run -0 --separate-stderr cnt-hold reject --decisions dec.jsonl --ledger ret.jsonl --by ts-7 --authority case-9 \
		--now "$SOON" --signal device --stats st2.json holds.avro
	[ -z "$output" ]
	rid=$(jq -r .retraction_id st2.json)
	[[ $rid =~ ^r-[0-9a-f]{32}$ ]]
	one '.decided == 3 and .retracted == 3 and .out == 0' st2.json
	ids=$(cnt-cat holds.avro | jq -c -s '[.[] | select(.signal == "device") | .event_id]')
	# no counters: the held events were never counted, so no board changed
	one --argjson ids "$ids" --arg r "$rid" '.retraction_id == $r and .cause == "fraud"
		and .requested_by == "ts-7" and .authority == "case-9" and .scope == "event" and .event_ids == $ids
		and .counters == []
		and .created_at == "2026-03-01T10:40:00.000Z" and .prev == "00000000000000000000000000000000"' ret.jsonl
	[ "$(jq -r .retraction_id dec.jsonl | sort -u)" = "$rid" ]
	[ "$(jq -r .decision dec.jsonl | sort -u)" = rejected ]
	# the chain holds (cnt-hold checks it) and later decisions extend it
	[ "$(jq -r .prev dec.jsonl | sort -u | wc -l)" -eq 3 ]
	cnt-hold clear --decisions dec.jsonl --by ana --now "$LATE" -o rel.avro --signal rate holds.avro
	[ "$(cnt-hold list --decisions dec.jsonl -F json holds.avro | jq -r .state | sort | uniq -c | tr -s ' ' | paste -sd, -)" = \
		" 1 cleared, 3 pending, 3 rejected" ]
	# cnt-retract reads the ledger and appends after the record
	cnt-retract --cause dq --requester r --authority a --ledger ret.jsonl --now "$LATE" --event p1 \
		--tenant utc --counter dist -o comp.avro log.avro
	[ "$(wc -l <ret.jsonl)" -eq 2 ]
	cnt-hold list --decisions dec.jsonl --hold-state rejected -F json holds.avro | jq -e -s 'length == 3 and all(.[]; .retraction_id != null)'
}

@test "deciding twice is refused: status 2 naming the hold and its decision; nothing written" {
	mixed | hold_in log.avro holds.avro
	h=$(hold_of r2)
	cnt-hold clear --decisions dec.jsonl --by ana --now "$SOON" -o rel.avro --hold "$h" holds.avro
	cp dec.jsonl dec.before
	run -2 --separate-stderr cnt-hold clear --decisions dec.jsonl --by bob --now "$LATE" -o rel2.avro --hold "$h" holds.avro
	[ "$stderr" = "cnt-hold: hold '$h' was already cleared by ana at 2026-03-01T10:40:00.000Z: a hold is decided once" ]
	[ ! -e rel2.avro ]
	run -2 --separate-stderr cnt-hold reject --decisions dec.jsonl --ledger ret.jsonl --by bob --hold "$h" holds.avro
	[ "$stderr" = "cnt-hold: hold '$h' was already cleared by ana at 2026-03-01T10:40:00.000Z: a hold is decided once" ]
	[ ! -s ret.jsonl ]
	cmp dec.jsonl dec.before
	# a filter takes only pending holds; none left is refused too
	cnt-hold clear --decisions dec.jsonl --by bob --now "$LATE" -o rel3.avro --signal rate holds.avro 2>err || :
	[ "$(cat err)" = "cnt-hold: no pending hold matches the selection" ]
	run -2 cnt-hold clear --decisions dec.jsonl --by bob -o rel4.avro --hold h-00000000000000000000000000000000 holds.avro
	[ "$output" = "cnt-hold: hold 'h-00000000000000000000000000000000' is in no hold file given" ]
	cmp dec.jsonl dec.before
	# (a ledger naming a hold twice is refused as corrupt: tests/unit/test_hold_decide.c)
}

@test "list: table and JSON lines, filtered by signal, tenant, counter, member and state" {
	mixed | hold_in log.avro holds.avro
	run -0 cnt-hold list holds.avro
	[ "${#lines[@]}" -eq 8 ]
	[[ ${lines[0]} == "HOLD_ID "*"STATE "*"SIGNAL "*"DETAIL OR DECISION" ]]
	[[ ${lines[1]} =~ ^h-[0-9a-f]{32}\ \ pending\ \ \ rate\ \ \ \ \ \ utc\ .*\ 60\ .*2026-03-01T10:05:00.000Z\ \ member\'s ]]
	[ "$(cnt-hold list --signal lockstep -F json holds.avro | jq -r .idempotency_key | paste -sd, -)" = l1,l2,l3 ]
	[ "$(cnt-hold list --member x2 -F json holds.avro | jq -r .idempotency_key)" = d2 ]
	[ "$(cnt-hold list --tenant utc --counter pts -F json holds.avro | wc -l)" -eq 7 ]
	[ "$(cnt-hold list --counter dist -F json holds.avro | wc -l)" -eq 0 ]
	cnt-hold clear --decisions dec.jsonl --by ana --now "$SOON" -o rel.avro --member x2 holds.avro
	[ "$(cnt-hold list --decisions dec.jsonl --hold-state cleared -F json holds.avro | jq -r '[.idempotency_key, .state, .decided_by, .decided_at] | join(" ")')" = \
		"d2 cleared ana 2026-03-01T10:40:00.000Z" ]
	[ "$(cnt-hold list --decisions dec.jsonl --hold-state pending -F json holds.avro | wc -l)" -eq 6 ]
	# without a decisions ledger (or one not made yet) every hold is pending
	[ "$(cnt-hold list --decisions none.jsonl --hold-state pending -F json holds.avro | wc -l)" -eq 7 ]
	[ ! -e none.jsonl ]
	# the same hold in two hold files is one hold
	[ "$(cnt-hold list -F json holds.avro holds.avro | wc -l)" -eq 7 ]
	run -2 cnt-hold list --hold-state open holds.avro
	[[ $output == "cnt-hold: --hold-state: 'open' is not pending, cleared or rejected"* ]]
	run -2 cnt-hold list --signal speed holds.avro
	run -2 cnt-hold frobnicate holds.avro
	[[ $output == "cnt-hold: 'frobnicate' is not a command: list, clear or reject"* ]]
	run -2 cnt-hold clear --by ana holds.avro --hold x
	[[ $output == "cnt-hold: clear needs --decisions and --by"* ]]
	run -2 cnt-hold clear --decisions d.jsonl --by ana holds.avro
	[[ $output == "cnt-hold: nothing selected: "* ]]
	run -2 cnt-hold reject --decisions d.jsonl --by ana --hold x holds.avro
	[[ $output == "cnt-hold: reject needs --ledger (the retraction ledger)"* ]]
	# what the ledgers keep as JSON text must be UTF-8 (it was "out of memory")
	for o in --by --authority --tenant --counter --member; do
		run -2 --separate-stderr cnt-hold reject --decisions d.jsonl --ledger r.jsonl --by ana --authority a \
			"$o" $'v\xff' --signal rate holds.avro
		[ "${stderr%%$'\n'*}" = "cnt-hold: $o: not UTF-8 text, which the ledger (JSON) cannot keep" ]
	done
	[ ! -e d.jsonl ] && [ ! -e r.jsonl ]
	# list keeps nothing: any bytes select
	run -0 cnt-hold list -F json --member $'v\xff' holds.avro
	[ -z "$output" ]
}

@test "list: a member of wide characters takes two columns each, and the table stays aligned" {
	{ ev l1 pts 中文名 7 '' 2026-03-01T10:01:00Z; ev l2 pts b 7 '' 2026-03-01T10:01:30Z
	  ev l3 pts é 7 '' 2026-03-01T10:02:00Z; } | hold_in log.avro holds.avro
	run -0 cnt-hold list holds.avro
	[ "${#lines[@]}" -eq 4 ]
	# where the event time starts, in terminal columns (Python's Unicode
	# tables: East Asian wide takes two)
	printf '%s\n' "${lines[@]:1}" | "$PY" -c '
import sys, unicodedata
cols = set()
for l in sys.stdin.read().splitlines():
    pre = l[:l.index("2026-03-01T")]
    cols.add(sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in pre))
assert len(cols) == 1, cols'
}

@test "ids holding quotes, backslashes and control characters: JSON lines parse, the table shows \\xNN" {
	jq '.counters[-1].versions[0].client_writable = false' defs.json >/dev/null
	printf '%s\n' '{"idempotency_key":"q\"1\\","tenant_id":"utc","counter_id":"pts","member_ref":"m\"\\\u0001x","delta":500,"event_time":"2026-03-01T10:00:00Z","attrs":{"k\"":"v\\\u001b"}}' |
		hold_in log.avro holds.avro
	[ "$(cnt-cat --count holds.avro)" -eq 1 ]
	cnt-hold list -F json holds.avro >l.json
	"$PY" -c 'import json, sys; r = json.loads(open(sys.argv[1]).read())
assert r["member_ref"] == "m\"\\\x01x" and r["idempotency_key"] == "q\"1\\" and r["attrs"] == {"k\"": "v\\\x1b"}, r' l.json
	cnt-hold list holds.avro >t.txt
	grep -q 'm"\\x5c\\x01x' t.txt
	! grep -q $'\x01' t.txt
	jq -e . st.json >/dev/null
}

@test "hostile hold files and ledgers: a clear error, status 2, nothing decided" {
	mixed | hold_in log.avro holds.avro
	size=$(stat -c %s holds.avro)
	head -c $((size - 20)) holds.avro >trunc.avro
	run -2 --separate-stderr cnt-hold list trunc.avro
	[[ $stderr == "cnt-hold: 'trunc.avro'"* ]]
	run -2 --separate-stderr cnt-hold clear --decisions dec.jsonl --by ana -o rel.avro --signal rate trunc.avro
	[[ $stderr == "cnt-hold: 'trunc.avro'"* ]]
	[ ! -s dec.jsonl ] && [ ! -e rel.avro ]
	# a flipped byte inside the (uncompressed) block
	cnt-ingest -d "$DEFS" --now "$NOW" --max-past 400d -o l2.avro --holds h0.avro -c null < <(mixed)
	"$PY" - h0.avro bad.avro <<'PYEOF'
import re, sys
b = bytearray(open(sys.argv[1], "rb").read())
i = re.search(rb"h-[0-9a-f]{32}", b).start() - 1   # the length of the first hold_id
b[i] = 0x7f
open(sys.argv[2], "wb").write(b)
PYEOF
	run -2 --separate-stderr cnt-hold list bad.avro
	[ -z "$output" ]
	[[ $stderr == "cnt-hold: 'bad.avro' record 1 (block 1): "*"corrupt file" ]]
	# not a hold file: an event log, a text file
	run -2 --separate-stderr cnt-hold list log.avro
	[[ $stderr == "cnt-hold: 'log.avro'"* ]]
	echo hello >text.avro
	run -2 --separate-stderr cnt-hold list text.avro
	[[ $stderr == "cnt-hold: 'text.avro'"*"not an Avro"* ]]
	# a hold id that is not its event's
	"$PY" - h0.avro forged.avro <<'PYEOF'
import re, sys
b = bytearray(open(sys.argv[1], "rb").read())
i = re.search(rb"h-[0-9a-f]{32}", b).start() + 2
b[i] = ord("0") if b[i] != ord("0") else ord("1")
open(sys.argv[2], "wb").write(b)
PYEOF
	run -2 --separate-stderr cnt-hold list forged.avro
	[[ $stderr == *"hold_id is not the one of its event_id"*"corrupt file" ]]
	# a held event whose member_ref is not UTF-8 (hold id still its
	# event's): no decision can name it, so nothing is decided
	"$PY" - h0.avro notutf8.avro <<'PYEOF'
import sys
b = open(sys.argv[1], "rb").read()
assert b.count(b"\x04x1") == 1
open(sys.argv[2], "wb").write(b.replace(b"\x04x1", b"\x04\xff1"))
PYEOF
	run -0 cnt-hold list notutf8.avro
	for verb in "reject --ledger ret.jsonl --authority case-9" "clear -o rel8.avro"; do
		run -2 --separate-stderr cnt-hold $verb --decisions dec8.jsonl --by ana --now "$SOON" --signal device notutf8.avro
		[[ $stderr == "cnt-hold: hold 'h-"*"': its event's member_ref '\\xff1' is not UTF-8 text without NUL bytes, which no decision can name (a damaged hold file?); nothing decided" ]]
		[ ! -s dec8.jsonl ] && [ ! -e ret.jsonl ] && [ ! -e rel8.avro ]
	done
	# decisions ledgers: a broken chain, a line cut short, not a decision
	cnt-hold clear --decisions dec.jsonl --by ana --now "$SOON" -o rel.avro --signal lockstep holds.avro
	sed '2s/"ana"/"eve"/' dec.jsonl >edited.jsonl
	run -2 cnt-hold list --decisions edited.jsonl holds.avro
	[ "$output" = "cnt-hold: decisions ledger 'edited.jsonl' line 3: the hash chain is broken (\"prev\" is not the hash of line 2)" ]
	head -c -1 dec.jsonl >cut.jsonl
	run -2 cnt-hold clear --decisions cut.jsonl --by ana -o r.avro --signal rate holds.avro
	[ "$output" = "cnt-hold: decisions ledger 'cut.jsonl' line 3: no newline at the end (an interrupted append?)" ]
	echo '[1]' >notdec.jsonl
	run -2 cnt-hold list --decisions notdec.jsonl holds.avro
	[ "$output" = "cnt-hold: decisions ledger 'notdec.jsonl' line 1: not a decision record" ]
	[ ! -e r.avro ]
}

@test "clear writes the segment, then the decision; a segment that cannot be written decides nothing" {
	mixed | hold_in log.avro holds.avro
	run -3 cnt-hold clear --decisions dec.jsonl --by ana --now "$SOON" -o /dev/full --signal rate holds.avro
	[[ $output == "cnt-hold: "* ]]
	[ ! -s dec.jsonl ]
	[ -z "$(ls -A | grep '^\.')" ]
}
