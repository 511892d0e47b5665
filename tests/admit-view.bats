#!/usr/bin/env bats
# Admission of view beacons (issue 10, part 1): the watch-time gate of a
# counter version (min_watch_ms, watch_attr) and the inline invalid-traffic
# filters of a counter (user-agent list, address list, per-viewer rate).
# Every reason is checked on the reject stream (position, field, message),
# in the --stats counts and in the conservation in = out + rejected +
# duplicates; the definitions refusals, the list files' refusals, and
# cnt-defs check's verdicts on the new keys.

bats_require_minimum_version 1.5.0

NOW=2026-03-01T12:00:00Z

setup() {
	set -o pipefail
	cd "$BATS_TEST_TMPDIR"
	mkdir -p conf/lists
	cat >conf/defs.json <<'EOF'
{"format": "cnt-definitions/1",
 "tenants": [{"tenant_id": "tube", "timezone": "UTC"}],
 "counters": [{"tenant_id": "tube", "counter_id": "views",
   "filters": [{"rule": "user_agent", "list": "lists/bots.txt"},
               {"rule": "address", "list": "lists/ranges.txt"},
               {"rule": "rate", "max_events": 2, "span_s": 60}],
   "versions": [{"version": 1, "type": "unique", "dedup_key": "item_member",
                 "min_watch_ms": 3000}]}]}
EOF
	printf '# known bots\nGooglebot\n=curl/8.0\n  HeadlessChrome \n' >conf/lists/bots.txt
	printf '# data-centre ranges\n203.0.113.0/24\n2001:db8::/32\n198.51.100.7\n' >conf/lists/ranges.txt
}

# b KEY VIDEO VIEWER TIME ATTRS-JSON: one beacon as a JSON line
b() {
	jq -nc --arg k "$1" --arg v "$2" --arg u "$3" --arg t "$4" --argjson a "$5" \
		'{idempotency_key: $k, tenant_id: "tube", counter_id: "views", member_ref: $v,
		  item: $u, event_time: $t, attrs: $a}'
}

T=2026-03-01T11:00
W='{"ms_watched": "5000"}'

# one [jq options] FILTER FILE: FILE holds one JSON value and FILTER is true of it
one() {
	local opts=()
	while [ $# -gt 2 ]; do opts+=("$1" "$2" "$3"); shift 3; done
	jq -e -s "${opts[@]}" "length == 1 and (.[0] | $1)" "$2"
}

@test "every reason: position, field and message on the reject stream; stats balance" {
	{
		b k1 vid1 u1 "$T:00Z" '{"ms_watched": "5000", "user_agent": "Mozilla/5.0", "ip_prefix": "192.0.2.0/24"}'
		b k2 vid1 u2 "$T:00Z" '{"ms_watched": "2999"}'
		b k3 vid1 u3 "$T:00Z" '{"ms_watched": "5s"}'
		b k4 vid1 u4 "$T:00Z" '{"country": "PT"}'
		b k5 vid1 u5 "$T:00Z" '{"ms_watched": "5000", "user_agent": "Mozilla/5.0 (compatible; googlebot/2.1)"}'
		b k6 vid1 u6 "$T:00Z" '{"ms_watched": "5000", "user_agent": "curl/8.0"}'
		b k7 vid1 u7 "$T:00Z" '{"ms_watched": "5000", "ip_prefix": "203.0.113.0/25"}'
		b k8 vid1 u8 "$T:00Z" '{"ms_watched": "5000", "ip_prefix": "2001:db8:1::1"}'
		b k9 vid2 u1 "$T:10Z" "$W"
		b k10 vid3 u1 "$T:20Z" "$W"
		b k9 vid2 u1 "$T:10Z" "$W"
		b k11 vid4 u1 "$T:30Z" "$W"
		b k12 vid1 u9 "$T:00Z" '{"ms_watched": "3000", "user_agent": "curl/8.0 (not exact)", "ip_prefix": "198.51.100.8"}'
	} >in.jsonl
	run -0 cnt-ingest -d conf/defs.json --now "$NOW" -o out.avro -r rej.jsonl --stats st.json in.jsonl
	[ -z "$output" ]
	[ "$(cnt-cat out.avro | jq -r .idempotency_key | paste -sd, -)" = k1,k9,k12 ]
	[ "$(jq -c '[.line, .reason, (.field // "-")]' rej.jsonl | paste -sd' ' -)" = \
		'[2,"below_watch_time","attrs"] [3,"bad_watch_time","attrs"] [4,"bad_watch_time","attrs"] [5,"ivt_user_agent","attrs"] [6,"ivt_user_agent","attrs"] [7,"ivt_address","attrs"] [8,"ivt_address","attrs"] [10,"ivt_rate","-"] [12,"ivt_rate","-"]' ]
	[ "$(jq -r 'select(.line == 2) | .message' rej.jsonl)" = "attrs 'ms_watched' 2999 ms is below the 3000 ms counter 'tube/views' v1 counts" ]
	[ "$(jq -r 'select(.line == 3) | .message' rej.jsonl)" = "attrs 'ms_watched' '5s' is not a decimal number of milliseconds" ]
	[ "$(jq -r 'select(.line == 4) | .message' rej.jsonl)" = "counter 'tube/views' v1 counts views of at least 3000 ms: attrs 'ms_watched' is required" ]
	[ "$(jq -r 'select(.line == 5) | .message' rej.jsonl)" = "attrs 'user_agent' 'Mozilla/5.0 (compatible; googlebot/2.1)' matches the user-agent list 'lists/bots.txt'" ]
	[ "$(jq -r 'select(.line == 7) | .message' rej.jsonl)" = "attrs 'ip_prefix' '203.0.113.0/25' is in the address list 'lists/ranges.txt'" ]
	[ "$(jq -r 'select(.line == 10) | .message' rej.jsonl)" = "item 'u1' already has 2 events within 60 s of this one (at most 2 per 60 s)" ]
	# line 11 repeats k9, which was admitted: a duplicate, never more traffic
	one '.in == 13 and .out == 3 and .rejected == 9 and .duplicates == 1 and .held == 0 and .balanced
		and .in == .out + .rejected + .duplicates + .held + .sampled_out
		and .rejected_by_reason == {malformed: 0, missing_field: 0, bad_field: 0, unknown_tenant: 0,
			unknown_counter: 0, client_not_writable: 0, subject_mismatch: 0, item_required: 0,
			delta_out_of_bounds: 0, too_old: 0, in_future: 0, quota_exceeded: 0,
			bad_watch_time: 2, below_watch_time: 1, ivt_user_agent: 2, ivt_address: 2, ivt_rate: 2,
			not_monotonic: 0, member_cap: 0,
			unsigned: 0, bad_signature: 0, unknown_key: 0, expired_key: 0, revoked_key: 0, reserved_attr: 0}' st.json
	# without -r the messages name the reason too
	run -0 cnt-ingest -d conf/defs.json --now "$NOW" -o out2.avro in.jsonl
	[[ $output == *"'in.jsonl' line 2: rejected (below_watch_time): attrs 'ms_watched' 2999 ms"* ]]
	[[ $output == *"line 8: rejected (ivt_address)"* ]]
}

@test "the gate: a version's own threshold and attribute; a version without one admits every beacon" {
	jq '.counters[0].filters = [] | .counters[0].versions = [
		{version: 1, type: "unique"},
		{version: 2, effective_from: "2026-03-01T00:00:00Z", type: "unique", min_watch_ms: 10000,
		 watch_attr: "watched"}]' conf/defs.json >conf/gate.json
	{
		b a1 v u1 "$T:00Z" '{}'
		b a2 v u2 "$T:00Z" '{"watched": "9999", "ms_watched": "99999"}'
		b a3 v u3 "$T:00Z" '{"watched": "10000"}'
		b a4 v u4 "$T:00Z" '{"watched": "99999999999999999999999"}'
		b a5 v u5 "$T:00Z" '{"watched": "-1"}'
		b a6 v u6 "$T:00Z" '{"watched": ""}'
	} >in.jsonl
	# at ingest time 2026-02-28 version 1 (no gate) is in force
	run -0 cnt-ingest -d conf/gate.json --now 2026-02-28T12:00:00Z --max-future 2d -o old.avro --stats st1.json in.jsonl
	one '.out == 6 and .rejected == 0' st1.json
	run -0 cnt-ingest -d conf/gate.json --now "$NOW" -o new.avro -r rej.jsonl --stats st2.json in.jsonl
	[ "$(cnt-cat new.avro | jq -r .idempotency_key | paste -sd, -)" = a3,a4 ]
	[ "$(jq -c '[.line, .reason]' rej.jsonl | paste -sd' ' -)" = \
		'[1,"bad_watch_time"] [2,"below_watch_time"] [5,"bad_watch_time"] [6,"bad_watch_time"]' ]
	[ "$(jq -r 'select(.line == 2) | .message' rej.jsonl)" = "attrs 'watched' 9999 ms is below the 10000 ms counter 'tube/views' v2 counts" ]
	one '.in == 6 and .out == 2 and .balanced and .rejected_by_reason.bad_watch_time == 3 and
		.rejected_by_reason.below_watch_time == 1' st2.json
}

@test "rate: the events beyond the rate are rejected, in event-time order; each run judges its own input" {
	jq '.counters[0].filters = [{rule: "rate", max_events: 3, span_s: 10, attr: "device"}]' \
		conf/defs.json >conf/rate.json
	# one device: 5 beacons within 10 s, then one 10 s after the first let through
	for i in 0 1 2 3 4; do b r$i v$i u$i "$T:0${i}Z" '{"ms_watched": "5000", "device": "d1"}'; done >in.jsonl
	b r5 v5 u5 "$T:10Z" '{"ms_watched": "5000", "device": "d1"}' >>in.jsonl
	b r6 v6 u6 "$T:04Z" '{"ms_watched": "5000", "device": "d2"}' >>in.jsonl
	b r7 v7 u7 "$T:04Z" '{"ms_watched": "5000"}' >>in.jsonl
	run -0 cnt-ingest -d conf/rate.json --now "$NOW" -o out.avro -r rej.jsonl --stats st.json in.jsonl
	[ "$(cnt-cat out.avro | jq -r .idempotency_key | paste -sd, -)" = r0,r1,r2,r5,r6,r7 ]
	[ "$(jq -c '[.line, .reason]' rej.jsonl | paste -sd' ' -)" = '[4,"ivt_rate"] [5,"ivt_rate"]' ]
	[ "$(jq -r 'select(.line == 4) | .message' rej.jsonl)" = "device 'd1' already has 3 events within 10 s of this one (at most 3 per 10 s)" ]
	one '.rejected_by_reason.ivt_rate == 2 and .balanced' st.json
	# the same input, twice: the same verdicts (no clock, no randomness)
	run -0 cnt-ingest -d conf/rate.json --now "$NOW" -o out2.avro -r rej2.jsonl in.jsonl
	cmp out.avro out2.avro
	cmp rej.jsonl rej2.jsonl
	# split across two runs, each run judges its own events: a burst split
	# in two is seen by neither (cnt-definitions(5), FILTERS)
	head -n 2 in.jsonl >a.jsonl
	sed -n 3,5p in.jsonl >b.jsonl
	run -0 cnt-ingest -d conf/rate.json --now "$NOW" -o a.avro --stats sa.json a.jsonl
	run -0 cnt-ingest -d conf/rate.json --now "$NOW" -o b.avro --stats sb.json b.jsonl
	one '.out == 2' sa.json
	one '.out == 3' sb.json
}

@test "lists are found beside the definitions, whatever the working directory; absolute paths as written" {
	b k1 v u1 "$T:00Z" '{"ms_watched": "5000", "user_agent": "HeadlessChrome/1"}' >in.jsonl
	mkdir elsewhere
	(cd elsewhere && cnt-ingest -d ../conf/defs.json --now "$NOW" -o out.avro --stats st.json ../in.jsonl)
	one '.rejected_by_reason.ivt_user_agent == 1' elsewhere/st.json
	jq --arg p "$PWD/conf/lists/" '.counters[0].filters[0].list = $p + "bots.txt" |
		.counters[0].filters[1].list = $p + "ranges.txt"' conf/defs.json >abs.json
	run -0 cnt-ingest -d abs.json --now "$NOW" -o out.avro --stats st.json in.jsonl
	one '.rejected_by_reason.ivt_user_agent == 1' st.json
}

@test "ids and values holding quotes, backslashes and control characters: streams and stats stay JSON" {
	jq '.tenants[0].tenant_id = "t\"\\u" | .counters[0].tenant_id = "t\"\\u"' conf/defs.json >conf/q.json
	printf '%s\n' 'q"\' >>conf/lists/bots.txt
	jq -nc '{idempotency_key: "k\"1", tenant_id: "t\"\\u", counter_id: "views", member_ref: "v",
		item: "u", event_time: "2026-03-01T11:00:00Z",
		attrs: {ms_watched: "5000", user_agent: "x q\"\\ \t\u0001y"}}' >in.jsonl
	jq -nc '{idempotency_key: "k\"2", tenant_id: "t\"\\u", counter_id: "views", member_ref: "v",
		item: "u\"\t", event_time: "2026-03-01T11:00:00Z", attrs: {ms_watched: "1\t"}}' >>in.jsonl
	run -0 cnt-ingest -d conf/q.json --now "$NOW" -o out.avro -r rej.jsonl --stats st.json in.jsonl
	jq -e -s 'map(.reason) == ["ivt_user_agent", "bad_watch_time"]' rej.jsonl
	one '.balanced and .counters[0].tenant_id == "t\"\\u" and .rejected == 2' st.json
}

@test "a list file missing, unreadable or garbled stops the run: one line naming file and line, nothing written" {
	b k1 v u1 "$T:00Z" "$W" >in.jsonl
	rm conf/lists/ranges.txt
	run -2 cnt-ingest -d conf/defs.json --now "$NOW" -o out.avro in.jsonl
	[ "$output" = "cnt-ingest: list 'conf/lists/ranges.txt': No such file or directory (filters[1] of counter 'tube/views')" ]
	[ ! -e out.avro ]
	[ -z "$(ls -A . | grep -v '^conf$\|^in.jsonl$')" ]
	printf '10.0.0.0/8\n# fine so far\n10.0.0.0/33\n' >conf/lists/ranges.txt
	run -2 cnt-ingest -d conf/defs.json --now "$NOW" -o out.avro in.jsonl
	[ "$output" = "cnt-ingest: list 'conf/lists/ranges.txt': line 3: '10.0.0.0/33' is not an IPv4 or IPv6 address or CIDR range (filters[1] of counter 'tube/views')" ]
	printf '10.0.0.1/8\n' >conf/lists/ranges.txt
	run -2 cnt-ingest -d conf/defs.json --now "$NOW" -o out.avro in.jsonl
	[ "$output" = "cnt-ingest: list 'conf/lists/ranges.txt': line 1: '10.0.0.1/8' has bits set beyond its /8 prefix (filters[1] of counter 'tube/views')" ]
	printf '10.0.0.0/8\n' >conf/lists/ranges.txt
	printf 'ok\n\nbad\001bot\n' >conf/lists/bots.txt
	run -2 cnt-ingest -d conf/defs.json --now "$NOW" -o out.avro in.jsonl
	[ "$output" = "cnt-ingest: list 'conf/lists/bots.txt': line 3: 'bad?bot' holds a control character (filters[0] of counter 'tube/views')" ]
	mkdir conf/lists/dir.txt
	jq '.counters[0].filters[0].list = "lists/dir.txt"' conf/defs.json >conf/d.json
	run -2 cnt-ingest -d conf/d.json --now "$NOW" -o out.avro in.jsonl
	[[ $output == "cnt-ingest: list 'conf/lists/dir.txt': "*"(filters[0] of counter 'tube/views')" ]]
	[ ! -e out.avro ]
}

@test "definitions refuse bad gate and filter declarations, one line each" {
	refuse() {
		jq "$1" conf/defs.json >conf/bad.json
		run -2 cnt-ingest -d conf/bad.json --now "$NOW" -o out.avro /dev/null
		[ "$output" = "cnt-ingest: definitions 'conf/bad.json': $2" ] || { echo "got: $output"; return 1; }
	}
	V='.counters[0].versions[0]'
	F='.counters[0].filters'
	refuse "$V.min_watch_ms = 0" '$.counters[0].versions[0].min_watch_ms: 0 is out of range [1, 9223372036854775807]'
	refuse "$V.min_watch_ms = \"3s\"" '$.counters[0].versions[0].min_watch_ms: expected an integer, got string'
	refuse "$V |= del(.min_watch_ms) | $V.watch_attr = \"w\"" '$.counters[0].versions[0].watch_attr: only allowed with min_watch_ms (the gate it names the attribute of)'
	refuse "$V.watch_attr = \"\"" '$.counters[0].versions[0].watch_attr: must be 1 to 64 bytes (an attrs key)'
	refuse "$V.min_wach_ms = 5" '$.counters[0].versions[0].min_wach_ms: unknown key (did you mean '"'"'min_watch_ms'"'"'?)'
	refuse "$F[0].rule = \"bot\"" '$.counters[0].filters[0].rule: unknown value '"'"'bot'"'"' (expected one of user_agent, address, rate)'
	refuse "$F[0].lists = \"x\"" '$.counters[0].filters[0].lists: unknown key (did you mean '"'"'list'"'"'?)'
	refuse "$F[1] |= del(.list)" '$.counters[0].filters[1].list: required key is missing'
	refuse "$F[1].list = \"\"" '$.counters[0].filters[1].list: must not be empty (a list file)'
	refuse "$F[1].attr = \"\"" '$.counters[0].filters[1].attr: must be 1 to 64 bytes (an attrs key)'
	refuse "$F[2].max_events = 0" '$.counters[0].filters[2].max_events: 0 is out of range [1, 2147483647]'
	refuse "$F[2] |= del(.span_s)" '$.counters[0].filters[2].span_s: required key is missing'
	refuse "$F[2].list = \"x\"" '$.counters[0].filters[2].list: unknown key'
	refuse "$F = {}" '$.counters[0].filters: expected an array, got object'
}

@test "cnt-defs check: the gate is part of the version, the filters are not; a proposed list must be readable" {
	cp conf/defs.json conf/cur.json
	jq '.counters[0].versions[0].min_watch_ms = 5000' conf/cur.json >conf/p1.json
	run -1 cnt-defs check conf/cur.json conf/p1.json
	[ "$output" = "tube/views v1: min_watch_ms 3000 → 5000: refused, it reinterprets counted events; declare the change as version 2" ]
	jq '.counters[0].versions[0].watch_attr = "watched"' conf/cur.json >conf/p2.json
	run -1 cnt-defs check conf/cur.json conf/p2.json
	[ "$output" = "tube/views v1: watch_attr ms_watched → watched: refused, it reinterprets counted events; declare the change as version 2" ]
	jq '.counters[0].versions[0] |= del(.min_watch_ms)' conf/cur.json >conf/p3.json
	run -1 cnt-defs check conf/cur.json conf/p3.json
	[[ $output == *"tube/views v1: min_watch_ms 3000 → (none): refused"* ]]
	[[ $output == *"tube/views v1: watch_attr ms_watched → (none): refused"* ]]
	# admission policy: changing the filters is no change of meaning
	jq '.counters[0].filters = [{rule: "rate", max_events: 9, span_s: 1}]' conf/cur.json >conf/p4.json
	run -0 cnt-defs check conf/cur.json conf/p4.json
	[ -z "$output" ]
	jq '.counters[0].filters[0].list = "lists/none.txt"' conf/cur.json >conf/p5.json
	run -2 cnt-defs check conf/cur.json conf/p5.json
	[ "$output" = "cnt-defs: list 'conf/lists/none.txt': No such file or directory (filters[0] of counter 'tube/views')" ]
}

@test "out of memory while loading lists or judging: exit 4 and one line, or the same output" {
	for i in 0 1 2 3; do b k$i v$i u$i "$T:0${i}Z" '{"ms_watched": "5000", "user_agent": "Mozilla"}'; done >in.jsonl
	cnt-ingest -d conf/defs.json --now "$NOW" -o want.avro in.jsonl
	n=1 ok=0
	while [ $n -lt 400 ]; do
		run env CNT_FAIL_ALLOC=$n cnt-ingest -d conf/defs.json --now "$NOW" -o out.avro in.jsonl
		if [ "$status" -eq 0 ]; then ok=1; cmp want.avro out.avro; break; fi
		[ "$status" -eq 4 ] || { echo "allocation $n: status $status: $output"; return 1; }
		[ "$output" = "cnt-ingest: out of memory" ] || [[ $output == "cnt-ingest: "*"out of memory"* ]]
		[ "$(echo "$output" | wc -l)" -eq 1 ]
		[ ! -e out.avro ]
		n=$((n + 1))
	done
	[ "$ok" -eq 1 ]
}
