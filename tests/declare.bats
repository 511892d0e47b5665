#!/usr/bin/env bats
# Issue 11, part 4: monotonic counters (refused at admission, lowered only
# by a retraction, refused again in an archive), the member cap (enforced
# at cnt-ingest, kept between runs in --members FILE), and unit costs
# (unit_costs, cnt-ingest --stats, cnt-cost with figures checked by hand).

bats_require_minimum_version 1.5.0
load data/core/common

NOW=2026-03-01T10:00:05Z

setup() {
	set -o pipefail
	cd "$BATS_TEST_TMPDIR"
	# steps: monotonic exact; views: unique; tenant capped: member_cap 2;
	# a tenant whose id holds a quote and a backslash, capped at 1.
	jq '.unit_costs = {exact: 4, unique: 10, min: 1, max: 1}
	    | .tenants += [{tenant_id: "capped", timezone: "UTC", member_cap: 2},
	                   {tenant_id: "q\"t\\x", timezone: "UTC", member_cap: 1}]
	    | .counters += [{tenant_id: "utc", counter_id: "steps", versions: [{version: 1, type: "exact", monotonic: true}]},
	                    {tenant_id: "utc", counter_id: "cheap", versions: [{version: 1, type: "exact", unit_cost_per_m: 0.5}]},
	                    {tenant_id: "capped", counter_id: "c", versions: [{version: 1, type: "exact"}]},
	                    {tenant_id: "q\"t\\x", counter_id: "c", versions: [{version: 1, type: "exact"}]}]' \
		"$DEFS" >defs.json
	DEFS=$PWD/defs.json
	# the same without the caps, for runs that need no --members
	jq 'del(.tenants[] | select(.member_cap) | .member_cap)' defs.json >nocap.json
}

# defs_error FILTER: the message cnt-defs check gives for defs.json through FILTER
defs_error() {
	jq "$1" "$DEFS" >bad.json
	run -2 cnt-defs check bad.json bad.json
}

# ---- monotonic --------------------------------------------------------------

@test "monotonic: refused for unique, min and max, and with a negative bounds_lo; only when declared in the fingerprint" {
	local t
	for t in unique min max; do
		defs_error ".counters[0].versions[0] += {type: \"$t\", monotonic: true}"
		[[ $output == *"\$.counters[0].versions[0].monotonic: a $t counter cannot be monotonic (only a counter that sums deltas can: exact, approx)"* ]]
	done
	defs_error '.counters[0].versions[0] += {monotonic: true, bounds_lo: -1}'
	[[ $output == *'$.counters[0].versions[0].bounds_lo: -1 contradicts "monotonic": true'* ]]
	defs_error '.counters[0].versions[0].monotonic = 1'
	[[ $output == *'monotonic: expected true or false, got an integer'* || $output == *'monotonic: expected true or false'* ]]
	# false written out is the default: same fingerprint, nothing to report
	jq '.counters[0].versions[0].monotonic = false' "$DEFS" >f.json
	run -0 cnt-defs check "$DEFS" f.json
	[ -z "$output" ]
	# declaring it under counted data is refused (the fingerprint changes)
	jq '.counters[0].versions[0].monotonic = true' "$DEFS" >t.json
	run -1 cnt-defs check "$DEFS" t.json
	[[ $output == *"utc/dist v1: monotonic (none) → true: refused, it reinterprets counted events; declare the change as version 2"* ]]
}

@test "monotonic: cnt-ingest rejects a negative delta (not_monotonic, before the bounds), admits the rest" {
	{ ev s1 steps m1 5; ev s2 steps m1 -3; ev s3 steps m1 0; ev s4 dist m1 -3; } >in.jsonl
	run -0 --separate-stderr cnt-ingest -d nocap.json --now "$NOW" -o log.avro -r rej.jsonl --stats st.json in.jsonl
	one '.in == 4 and .out == 3 and .rejected == 1 and .rejected_by_reason.not_monotonic == 1
		and .rejected_by_reason.delta_out_of_bounds == 0 and .balanced' st.json
	one '.reason == "not_monotonic" and .field == "delta" and .line == 2
		and .message == "delta -3 would lower monotonic counter '"'utc/steps'"' v1; only a retraction (cnt-retract) may"' rej.jsonl
	[ "$(keys_of log.avro)" = "s1,s3,s4" ]
}

@test "monotonic: only a retraction lowers it, recorded as such (ledger with authority, compensation naming it)" {
	DEFS=$PWD/nocap.json
	{ ev s1 steps m1 5; ev s2 steps m1 7; } | ingest "$NOW" log.avro
	run -0 cnt-retract --event s2 --tenant utc --counter steps --cause fraud --requester ana \
		--authority case-9 --ledger ledger.jsonl --now 2026-03-02T00:00:00Z -o comp.avro log.avro
	one '.authority == "case-9" and .cause == "fraud" and (.event_ids | length) == 1' ledger.jsonl
	id=$(jq -r .retraction_id ledger.jsonl)
	cnt-cat comp.avro | one --arg id "$id" '.delta == -7 and .retraction_id == $id and .retracts != null' -
	# the counting chain takes the compensation: the sum is lowered to 5
	cnt-window -d "$DEFS" log.avro comp.avro | cnt-accumulate -o b.avro
	cnt-cat b.avro | jq -s -e 'map(select(.counter_id == "steps")) | length == 1 and .[0].sum == 5'
}

@test "monotonic: an archived negative delta that is not a compensation is rejected by cnt-dedup and cnt-window" {
	# another producer's container: admitted under definitions without
	# monotonic, its fingerprint table renamed away (same length) so that
	# nothing records what it was counted under.
	jq '.counters |= map(if .counter_id == "steps" then .versions[0].monotonic = false else . end)' nocap.json >plain.json
	{ ev s1 steps m1 5; ev s2 steps m1 -3; } | ingest "$NOW" p.avro plain.json
	cnt-cat p.avro >/dev/null
	"$PY" -c 'import sys; b = open("p.avro", "rb").read(); open("other.avro", "wb").write(b.replace(b"cnt.fingerprints", b"cnt.fingerprintX"))'
	run -0 --separate-stderr cnt-window -d "$DEFS" -o w.avro --stats wst.json other.avro
	one '.in == 2 and .out == 1 and .rejected == 1 and .rejected_by_reason.not_monotonic == 1 and .balanced' wst.json
	[[ $stderr == *"'other.avro' record 2: rejected (not_monotonic): delta -3 would lower monotonic counter 'utc/steps' v1, and the event is not a retraction's compensation"* ]]
	run -0 --separate-stderr cnt-dedup -d "$DEFS" -o d.avro --stats dst.json other.avro
	one '.rejected == 1 and .rejected_by_reason.not_monotonic == 1' dst.json
	[ "$(keys_of d.avro)" = "s1" ]
}

# ---- member cap ---------------------------------------------------------------

@test "member cap: a capped tenant without --members refuses to start (status 2, one line)" {
	ev k1 c m1 1 "" "$T0" capped >in.jsonl
	run -2 --separate-stderr cnt-ingest -d "$DEFS" --now "$NOW" -o log.avro in.jsonl
	[ "$stderr" = "cnt-ingest: tenant 'capped' declares a member_cap: give --members FILE (a cap that forgets its members between runs enforces nothing)" ]
	[ ! -e log.avro ]
	run -2 cnt-ingest -d "$DEFS" --now "$NOW" --members - -o log.avro in.jsonl
	[[ $output == *"--members needs a file name"* ]]
}

@test "member cap: a new member beyond the cap is rejected (member_cap), counted members keep being admitted, across runs" {
	{ ev k1 c m1 1 "" "$T0" capped; ev k2 c m2 1 "" "$T0" capped; ev k3 c m3 1 "" "$T0" capped
	  ev k4 c m1 1 "" "$T0" capped; ev k5 dist m9 1; } >day1.jsonl
	run -0 --separate-stderr cnt-ingest -d "$DEFS" --now "$NOW" --members members -o l1.avro -r rej.jsonl --stats st.json day1.jsonl
	[ "$(keys_of l1.avro)" = "k1,k2,k4,k5" ]
	one '.reason == "member_cap" and .field == "member_ref" and .line == 3
		and .message == "member '"'m3'"' is new and tenant '"'capped'"' already has its member_cap of 2 members"' rej.jsonl
	one '.rejected_by_reason.member_cap == 1 and .member_cap.capped == {members: 2, cap: 2, rejected: 1}
		and .member_cap["q\"t\\x"] == {members: 0, cap: 1, rejected: 0} and .balanced' st.json
	# the next run remembers m1 and m2: m2 admitted, m3 and m4 still rejected
	{ ev k6 c m2 1 "" "$T0" capped; ev k7 c m3 1 "" "$T0" capped; ev k8 c m4 1 "" "$T0" capped; } >day2.jsonl
	run -0 cnt-ingest -d "$DEFS" --now "$NOW" --members members -o l2.avro -r rej2.jsonl --stats st2.json day2.jsonl
	[ "$(keys_of l2.avro)" = "k6" ]
	one '.member_cap.capped == {members: 2, cap: 2, rejected: 2}' st2.json
	# a raised cap admits the next member; the file is rewritten with it
	jq '.tenants |= map(if .tenant_id == "capped" then .member_cap = 3 else . end)' "$DEFS" >raised.json
	run -0 cnt-ingest -d raised.json --now "$NOW" --members members -o l3.avro --stats st3.json day2.jsonl
	[ "$(keys_of l3.avro)" = "k6,k7" ]
	one '.member_cap.capped == {members: 3, cap: 3, rejected: 1}' st3.json
}

@test "member cap: the ids of the tenant in --stats are escaped (quote, backslash)" {
	printf '%s\n' '{"idempotency_key":"w1","tenant_id":"q\"t\\x","counter_id":"c","member_ref":"a","delta":1,"event_time":"2026-03-01T10:00:00Z"}' \
		'{"idempotency_key":"w2","tenant_id":"q\"t\\x","counter_id":"c","member_ref":"b","delta":1,"event_time":"2026-03-01T10:00:00Z"}' >w.jsonl
	run -0 cnt-ingest -d "$DEFS" --now "$NOW" --members m -o l.avro -r /dev/null --stats st.json w.jsonl
	one '.member_cap["q\"t\\x"] == {members: 1, cap: 1, rejected: 1}' st.json
}

@test "member cap: a corrupt members file is refused (status 2, one line), nothing written; a missing one starts empty" {
	ev k1 c m1 1 "" "$T0" capped >in.jsonl
	cnt-ingest -d "$DEFS" --now "$NOW" --members members -o l.avro in.jsonl
	[ "$(head -c 14 members)" = "cnt-members/1" ]
	cp members good
	# one bit flipped in a member: the checksum says so
	"$PY" -c 'import sys; b = bytearray(open("good", "rb").read()); b[30] ^= 1; open("members", "wb").write(b)'
	run -2 --separate-stderr cnt-ingest -d "$DEFS" --now "$NOW" --members members -o l2.avro in.jsonl
	[ "$stderr" = "cnt-ingest: members 'members': its checksum does not match; the file is corrupt (restore it from a backup or rebuild it from the event log)" ]
	[ ! -e l2.avro ]
	head -c 20 good >members
	run -2 --separate-stderr cnt-ingest -d "$DEFS" --now "$NOW" --members members -o l2.avro in.jsonl
	[[ $stderr == "cnt-ingest: members 'members': "* ]] && [ "${#lines[@]}" -le 1 ]
	printf 'hello' >members
	run -2 --separate-stderr cnt-ingest -d "$DEFS" --now "$NOW" --members members -o l2.avro in.jsonl
	[ "$stderr" = "cnt-ingest: members 'members': not a members file (it does not begin with 'cnt-members/1')" ]
	# a count that claims more members than the file holds, checksum fixed
	"$PY" -c '
import struct, sys
b = bytearray(open("good", "rb").read())
# magic 14, tenants u32, id len u16, id "capped" (6), then the member count u64
off = 14 + 4 + 2 + 6
b[off:off + 8] = struct.pack("<Q", 1 << 40)
open("members", "wb").write(b)' 
	run -2 --separate-stderr cnt-ingest -d "$DEFS" --now "$NOW" --members members -o l2.avro in.jsonl
	[[ $stderr == "cnt-ingest: members 'members': "*"the file is corrupt"* ]]
	# a file that forgets is refused
	run -2 --separate-stderr cnt-ingest -d "$DEFS" --now "$NOW" --members /dev/null -o l2.avro in.jsonl
	[ "$stderr" = "cnt-ingest: members '/dev/null': not a regular file (the members must be kept between runs)" ]
	# a missing file is an empty set
	rm members
	run -0 cnt-ingest -d "$DEFS" --now "$NOW" --members members -o l2.avro in.jsonl
	cmp members good
}

# ---- unit cost ------------------------------------------------------------------

@test "unit_costs: refused for an unknown type or a negative price; a version's price defaults to its type's" {
	defs_error '.unit_costs = {exact: 1, approxx: 2}'
	[[ $output == *"\$.unit_costs.approxx: 'approxx' is not a counter type"* ]]
	defs_error '.unit_costs.exact = -1'
	[[ $output == *'$.unit_costs.exact: must be a price from 0 to 1e12'* ]]
	defs_error '.unit_costs = [1]'
	[[ $output == *'$.unit_costs: expected an object'* ]]
	# a published price is a note: changing it is compatible (no fingerprint
	# changes); the versions that take their type's price say so
	jq '.unit_costs.exact = 9' "$DEFS" >p.json
	run -0 cnt-defs check "$DEFS" p.json
	[[ ${lines[0]} == "utc/dist v1: unit_cost_per_m 4.0 → 9.0: compatible" ]]
	[[ $output != *"utc/cheap"* ]]
}

@test "cnt-ingest --stats: per counter admitted, unit_cost_per_m (declared or the type's) and cost" {
	{ ev a1 dist m1 1; ev a2 dist m2 1; ev a3 cheap m1 1; ev a4 uniq m1 1 i1; } | ingest "$NOW" log.avro nocap.json
	st=$BATS_TEST_TMPDIR/ingest-stats.json
	# dist: 2 events at the exact price 4 per million = 0.000008;
	# cheap: 1 at its own 0.5 = 0.0000005; uniq: 1 at the unique price 10 = 0.00001
	jq -e 'def near($x): (. - $x | fabs) < 1e-12;
		.counters | map(select(.tenant_id == "utc") | {key: .counter_id, value: .}) | from_entries
		| (.dist | .admitted == 2 and .unit_cost_per_m == 4 and (.cost | near(0.000008)))
		and (.cheap | .admitted == 1 and .unit_cost_per_m == 0.5 and (.cost | near(0.0000005)))
		and (.uniq | .admitted == 1 and .unit_cost_per_m == 10 and (.cost | near(0.00001)))
		and (.clicks | .admitted == 0 and .cost == 0)' "$st"
}

# sampled LEVEL...: events of utc/dist, one per level, archived as an
# approximate counter archives them (attrs cnt.sample = LEVEL; "-" leaves
# it out).  cnt-ingest will refuse a raw cnt.* key (reserved_attr), so the
# key is admitted as xxx.sample (same length, null codec) and renamed in
# the container's bytes.
sampled() {
	local i=0 l
	for l in "$@"; do
		i=$((i + 1))
		if [ "$l" = - ]; then ev "e$i" dist "m$i" 1
		else printf '{"idempotency_key":"e%s","tenant_id":"utc","counter_id":"dist","member_ref":"m%s","delta":1,"event_time":"%s","attrs":{"xxx.sample":"%s"}}\n' "$i" "$i" "$T0" "$l"
		fi
	done | cnt-ingest -d nocap.json --now "$NOW" -c null -o raw.avro
	"$PY" -c 'import sys; b = open("raw.avro", "rb").read(); open(sys.argv[1], "wb").write(b.replace(b"xxx.sample", b"cnt.sample"))' "$1.avro"
}

@test "cnt-cost: archived, represented and costs checked by hand on a small archive" {
	sampled 20 20 3 - 1
	ev u1 uniq m1 1 i1 | ingest "$NOW" u.avro nocap.json
	run -0 --separate-stderr cnt-cost -d nocap.json -F json --stats st.json 20.avro u.avro
	# dist: 5 archived; represented = 2^20 + 2^20 + 2^3 + 1 + 2^1 = 2097163;
	# its price is the exact price 4 per million: 2097163 / 1e6 * 4 = 8.388652;
	# at the unique price 10: 20.97163, at min and max 1: 2.097163.
	# uniq: 1 event at 10 per million = 0.00001 (exact: 0.000004).
	[ "${#lines[@]}" -eq 2 ]
	echo "${lines[0]}" | one '.tenant_id == "utc" and .counter_id == "dist" and .version == 1 and .type == "exact"
		and .archived == 5 and .represented == 2097163 and .compensations == 0 and .unit_cost_per_m == 4
		and .cost == 8.388652 and .at == {exact: 8.388652, unique: 20.97163, min: 2.097163, max: 2.097163}' -
	echo "${lines[1]}" | one '.counter_id == "uniq" and .represented == 1 and .cost == 0.00001 and .at.exact == 0.000004' -
	one '.tool == "cnt-cost" and .in == 6 and .out == 2 and .rejected == 0 and .archived == 6
		and .represented == 2097164 and .cost == 8.388662' st.json
	# the table: a header, then the same figures
	run -0 cnt-cost -d nocap.json 20.avro
	[[ ${lines[0]} == "TENANT "*" COUNTER "*"REPRESENTED"*"PRICE/M"*"COST"*" exact "*" unique "*" min "*" max" ]]
	read -r -a f <<<"${lines[1]}"
	[ "${f[*]}" = "utc dist 1 exact 5 2097163 4.0000 8.388652 8.388652 20.971630 2.097163 2.097163" ]
}

@test "cnt-cost: a bad cnt.sample is not counted (a line, rejected in --stats), compensations cost nothing" {
	sampled 21 0 01 x 2
	run -0 --separate-stderr cnt-cost -d nocap.json -F json --stats st.json 21.avro
	[ "$(printf '%s\n' "$stderr" | grep -c 'not counted (bad_sample)')" -eq 4 ]
	[[ $stderr == *"'21.avro' record 1: not counted (bad_sample): attrs 'cnt.sample' '21' is not a sampling level (1 to 20)"* ]]
	one '.in == 5 and .rejected == 4 and .archived == 1 and .represented == 4' st.json
	# a compensation: counted apart, no cost
	ev d1 dist m1 5 | ingest "$NOW" l.avro nocap.json
	cnt-retract --event d1 --tenant utc --counter dist --cause fraud --requester a --authority b \
		--ledger led.jsonl --now 2026-03-02T00:00:00Z -o comp.avro l.avro
	run -0 cnt-cost -d nocap.json -F json l.avro comp.avro
	echo "$output" | one '.archived == 1 and .compensations == 1 and .represented == 1 and .cost == 0.000004' -
}

@test "cnt-cost --tenant: another tenant's data is refused (status 5) before anything is printed; own data only" {
	{ ev a1 dist m1 1; } | ingest "$NOW" utc.avro nocap.json
	{ ev b1 dist m1 1 "" "$T0" kol; } | ingest "$NOW" kol.avro nocap.json
	run -5 --separate-stderr cnt-cost -d nocap.json --tenant kol utc.avro kol.avro
	[ -z "$output" ]
	[[ $stderr == "cnt-cost: 'utc.avro': "*"refused for tenant 'kol'" ]]
	run -0 cnt-cost -d nocap.json --tenant kol -F json kol.avro
	echo "$output" | one '.tenant_id == "kol" and .archived == 1' -
	CNT_TENANT=kol run -5 cnt-cost -d nocap.json utc.avro
	run -2 cnt-cost -d nocap.json -F xml kol.avro
	[[ $output == *"--output-format: 'xml' is not table or json"* ]]
}
