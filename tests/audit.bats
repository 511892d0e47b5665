#!/usr/bin/env bats
# cnt-audit: the batch invalid-traffic audit.  Each heuristic finds its
# planted ring and leaves the honest viewers alone; the flagged views are
# retracted (cause fraud) and counting the log with the compensations
# lowers each video by exactly its flagged views; reruns are idempotent;
# the watermark never goes back; a dry run writes nothing; the inflation
# ratio on a hand-checked case; the same archive in any order of inputs
# gives the same bytes.  Data: tests/data/audit (gen.py says what is
# planted).

bats_require_minimum_version 1.5.0

ADATA="$BATS_TEST_DIRNAME/data/audit"
DEFS="$ADATA/defs.json"
NOW=2026-06-10T00:00:00Z
THROUGH=2026-06-09T00:00:00Z
WHO=(--requester ivt-team --authority "ivt-audit v1" --ledger ledger.jsonl --audits audits.jsonl --now 2026-06-09T03:00:00Z)
AUD=(-d "$DEFS" --tenant tube --counter views --through "$THROUGH")
command -v cnt-audit >/dev/null 2>&1 || PATH="$BATS_TEST_DIRNAME/../build/bin:$PATH"

setup() {
	set -o pipefail
	cd "$BATS_TEST_TMPDIR"
}

# log OUT [PART...]: the beacons of gen.py admitted into the events file OUT
log() {
	local out=$1
	shift
	"$ADATA/gen.py" "$@" | cnt-ingest -d "$DEFS" --now "$NOW" --max-past 400d -o "$out" -
}

# counts LOG...: {video: view count} of the counting pipeline over LOG...
counts() {
	cnt-dedup -d "$DEFS" "$@" | cnt-window -d "$DEFS" | cnt-accumulate |
		cnt-cat | jq -s -c 'group_by(.member_ref) | map({(.[0].member_ref): (map(.count) | add)}) | add'
}

# findings REPORT: "heuristic:key" of each finding line, sorted
findings() {
	jq -r 'select(.kind == "finding") | "\(.heuristic):\(.item // .value)"' "$1" | sort | paste -sd' ' -
}

@test "each heuristic finds its planted ring and nothing of the honest viewers" {
	log all.avro
	cnt-audit "${AUD[@]}" --dry-run -F json all.avro >rep.json
	[ "$(findings rep.json)" = "burst:203.0.113.0/24 lockstep:L1 lockstep:L2 lockstep:L3 watch_time:W1 watch_time:W2" ]
	# evidence: lockstep names the distinct videos, burst the events, watch_time the value
	jq -e -s 'map(select(.kind == "finding")) |
		(map(select(.heuristic == "lockstep")) | all(.videos == 5 and .threshold == 4 and .span_s == 60 and .views == 5)) and
		(map(select(.heuristic == "burst"))[0] | .events == 12 and .max_events == 10 and .attr == "ip_prefix"
			and .from == "2026-06-08T18:00:02.000Z" and .views == 12) and
		(map(select(.heuristic == "watch_time")) | all(.watch_value == "30000" and .same == 4 and .of == 4 and .views == 4))' rep.json
	one_audit='select(.kind == "audit") | .examined == 76 and .duplicates == 11 and .flagged == 35 and .findings == 6 and .dry_run and .retraction_id == null'
	jq -e "$one_audit" rep.json
	# one part at a time: each ring alone is found by its heuristic only
	for part in lockstep burst watch; do
		log "$part.avro" honest "$part"
		cnt-audit "${AUD[@]}" --dry-run -F json "$part.avro" >"$part.json"
	done
	[ "$(findings lockstep.json)" = "lockstep:L1 lockstep:L2 lockstep:L3" ]
	[ "$(findings burst.json)" = "burst:203.0.113.0/24" ]
	[ "$(findings watch.json)" = "watch_time:W1 watch_time:W2" ]
	# the honest day alone: nothing
	log honest.avro honest
	cnt-audit "${AUD[@]}" --dry-run -F json honest.avro >h.json
	[ "$(findings h.json)" = "" ]
	jq -e 'select(.kind == "audit") | .flagged == 0 and .examined == 41' h.json
	# a counter without heuristics finds nothing
	cnt-audit -d "$DEFS" --tenant tube --counter plain --through "$THROUGH" --dry-run -F json all.avro >p.json
	jq -e 'select(.kind == "audit") | .examined == 0 and .flagged == 0' p.json
}

@test "a just-below-threshold ring is left alone (rules are strict about their bounds)" {
	# 3 videos within 60 s (rule: 4); 10 events from one prefix (rule: more than 10); 2 equal watch times (rule: 3)
	python3 - >few.jsonl <<'PY'
import json
D = 1780876800000
def ev(k, who, vid, t, ms, ip):
    print(json.dumps({"idempotency_key": k, "tenant_id": "tube", "counter_id": "views", "member_ref": vid,
        "item": who, "delta": 1, "event_time": t, "attrs": {"ms_watched": str(ms), "ip_prefix": ip}}))
for v in range(3): ev("l%d" % v, "L", "v%d" % v, D + v * 20000, 1000 + v, "a")
for n in range(10): ev("b%d" % n, "B%d" % n, "v9", D + 3600000 + n * 6000, 2000 + n, "net")
for v in range(2): ev("w%d" % v, "W", "w%d" % v, D + 7200000 + v * 3600000, 30000, "c%d" % v)
# one past the bounds: a 4th video 60 s after the first (ends included) for L2
for v in range(4): ev("m%d" % v, "L2", "v%d" % v, D + 9000000 + v * 20000, 3000 + v, "d")
PY
	cnt-ingest -d "$DEFS" --now "$NOW" --max-past 400d -o few.avro few.jsonl
	cnt-audit "${AUD[@]}" --dry-run -F json few.avro >rep.json
	[ "$(findings rep.json)" = "lockstep:L2" ]
}

@test "the audit retracts the flagged views: compensations, ledgers, and counts lower by exactly the flagged views" {
	log log.avro
	before=$(counts log.avro)
	[ "$before" = '{"v1":16,"v2":13,"v3":9,"v4":15,"v5":10,"v6":15}' ]
	run --separate-stderr cnt-audit "${AUD[@]}" "${WHO[@]}" -o comp.avro -F json --stats st.json log.avro
	[ "$status" -eq 0 ] && [ -z "$stderr" ]
	printf '%s\n' "$output" >rep.json
	jq -e '.tool == "cnt-audit" and .in == 89 and .examined == 76 and .duplicates == 11 and .skipped == 2
		and .compensations == 0 and .flagged == 35 and .out == 35 and .already_retracted == 0 and .rejected == 0
		and .balanced and .ledger_records == 1 and .audit_records == 1 and (.retraction_id | test("^r-[0-9a-f]{32}$"))
		and (.audit_id | test("^a-[0-9a-f]{32}$")) and .counters == [{"tenant_id":"tube","counter_id":"views","examined":76,"flagged":35}]' st.json
	rid=$(jq -r .retraction_id st.json)
	# every compensation names a flagged view, cause fraud in the ledger
	[ "$(cnt-cat comp.avro | jq -s 'length')" -eq 35 ]
	cnt-cat comp.avro | jq -e --arg rid "$rid" 'select(.retraction_id != $rid or .delta != -1 or (.retracts | length) != 32)' && false
	jq -e --arg rid "$rid" '.retraction_id == $rid and .cause == "fraud" and .authority == "ivt-audit v1"
		and .requested_by == "ivt-team" and (.event_ids | length) == 35' ledger.jsonl
	# the audit ledger: one line, with the watermark and the retraction
	jq -e --arg rid "$rid" '.tenant_id == "tube" and .counter_id == "views" and .through_ms == 1780963200000
		and .examined == 76 and .flagged == 35 and .retraction_id == $rid and .audited_at == "2026-06-09T03:00:00.000Z"' audits.jsonl
	[ "$(wc -l <audits.jsonl)" -eq 1 ]
	# the honest viewers keep every view: no compensation names one
	[ "$(cnt-cat comp.avro | jq -r .item | sort -u | paste -sd' ' -)" = "B01 B02 B03 B04 B05 B06 B07 B08 B09 B10 B11 B12 L1 L2 L3 W1 W2" ]
	# per video: flagged in the report == the drop in the count
	after=$(counts log.avro comp.avro)
	[ "$after" = '{"v1":11,"v2":8,"v3":4,"v4":10,"v5":7,"v6":3}' ]
	jq -r 'select(.kind == "video") | "\(.member_ref) \(.flagged)"' rep.json >flagged.txt
	while read -r v n; do
		[ $(( $(jq -r ".$v" <<<"$before") - $(jq -r ".$v" <<<"$after") )) -eq "$n" ]
	done <flagged.txt
}

@test "a flagged view that cannot be retracted (delta -2^63) is named on standard error and counted as rejected" {
	"$ADATA/gen.py" burst | sed '/"bb-3"/s/"delta":1/"delta":-9223372036854775808/' |
		cnt-ingest -d "$DEFS" --now "$NOW" --max-past 400d -o log.avro -
	id=$(cnt-cat log.avro | jq -r 'select(.idempotency_key == "bb-3") | .event_id')
	run -0 --separate-stderr cnt-audit "${AUD[@]}" "${WHO[@]}" -o comp.avro -F json --stats st.json log.avro
	[ "$stderr" = "cnt-audit: '$id': delta -9223372036854775808 cannot be negated; not retracted" ]
	jq -e '.flagged == 12 and .out == 11 and .rejected == 1 and .balanced and .ledger_records == 1' st.json
	# the other eleven are retracted, and the ledger does not name the refused one
	[ "$(cnt-cat comp.avro | jq -r .item | sort | paste -sd' ' -)" = "B01 B02 B04 B05 B06 B07 B08 B09 B10 B11 B12" ]
	jq -e --arg id "$id" '(.event_ids | length) == 11 and (.event_ids | index($id)) == null' ledger.jsonl
}

@test "idempotent: the same audit again writes no compensation and no ledger line" {
	log log.avro
	cnt-audit "${AUD[@]}" "${WHO[@]}" -o comp.avro -F json log.avro >rep1.json
	cp ledger.jsonl l1; cp audits.jsonl a1
	cnt-audit "${AUD[@]}" "${WHO[@]}" -o comp2.avro -F json --stats st.json log.avro >rep2.json
	jq -e '.out == 0 and .already_retracted == 35 and .ledger_records == 0 and .audit_records == 0 and .flagged == 35' st.json
	cmp ledger.jsonl l1 && cmp audits.jsonl a1
	[ "$(cnt-cat --count comp2.avro)" -eq 0 ]
	# the same findings; the audit line names the retraction and the audit already recorded
	[ "$(findings rep1.json)" = "$(findings rep2.json)" ]
	[ "$(jq -c 'select(.kind == "audit") | [.retraction_id, .audit_id]' rep1.json)" = \
	  "$(jq -c 'select(.kind == "audit") | [.retraction_id, .audit_id]' rep2.json)" ]
	# with the compensations in the archive too, and a later clock: still nothing new
	cnt-audit "${AUD[@]}" "${WHO[@]/2026-06-09T03:00:00Z/2026-06-09T05:00:00Z}" -o comp3.avro --stats st.json log.avro comp.avro >/dev/null
	jq -e '.out == 0 and .compensations == 35 and .balanced and .audit_records == 0' st.json
	cmp ledger.jsonl l1 && cmp audits.jsonl a1
	# counting the log with every compensation file: each view taken out once
	[ "$(counts log.avro comp.avro comp2.avro comp3.avro)" = '{"v1":11,"v2":8,"v3":4,"v4":10,"v5":7,"v6":3}' ]
}

@test "a later watermark appends a chained line; a watermark going back is refused and writes nothing" {
	log log.avro
	cnt-audit "${AUD[@]}" "${WHO[@]}" -o comp.avro log.avro >/dev/null
	cnt-audit "${AUD[@]/$THROUGH/2026-06-10T00:00:00Z}" "${WHO[@]}" -o comp2.avro --stats st.json log.avro comp.avro >/dev/null
	# the two views of 2026-06-09 are examined now; nothing new flagged: no retraction
	jq -e '.examined == 78 and .skipped == 0 and .out == 0 and .audit_records == 1' st.json
	[ "$(wc -l <audits.jsonl)" -eq 2 ]
	rid=$(head -n 1 audits.jsonl | jq -r .retraction_id)
	# the retraction of the first audit is named again: all the flagged views were retracted by it
	tail -n 1 audits.jsonl | jq -e --arg rid "$rid" '.through_ms == 1781049600000 and .flagged == 35 and .retraction_id == null'
	[ "$(tail -n 1 audits.jsonl | jq -r .prev)" != 00000000000000000000000000000000 ]
	cp ledger.jsonl l1; cp audits.jsonl a1
	run --separate-stderr cnt-audit "${AUD[@]}" "${WHO[@]}" -o back.avro log.avro
	[ "$status" -eq 2 ]
	[[ "$stderr" == "cnt-audit: --through is before the last audit of 'tube/views' (a-"*"): the watermark never goes back" ]]
	[ ! -e back.avro ] && cmp ledger.jsonl l1 && cmp audits.jsonl a1
	[ "$(ls -A | grep -v '^separate-stderr' | paste -sd' ' -)" = "a1 audits.jsonl comp.avro comp2.avro l1 ledger.jsonl log.avro st.json" ]
}

@test "a dry run reports and writes nothing" {
	log log.avro
	run --separate-stderr cnt-audit "${AUD[@]}" --dry-run "${WHO[@]}" -o comp.avro --stats st.json log.avro
	[ "$status" -eq 0 ]
	[[ "$output" == *"audit tube views through 2026-06-09T00:00:00.000Z: 76 examined, 35 flagged, 0 retracted (0 already), dry run"* ]]
	[[ "$output" == *"lockstep    L1                       5  5 videos within 60 s from 2026-06-08T15:01:08.000Z"* ]]
	[[ "$output" == *"watch_time  W1                       4  4 of 4 views with ms_watched=30000"* ]]
	[ ! -e comp.avro ] && [ ! -e ledger.jsonl ] && [ ! -e audits.jsonl ]
	jq -e '.dry_run and .flagged == 35 and .out == 0 and .retraction_id == null and .audit_id == null' st.json
}

@test "inflation ratio: beacons over unique viewers per video, flagged above the baseline (hand-checked)" {
	# x: viewer a sends 4 beacons (one view a day), b 1: 5 beacons / 2 viewers = 2.5
	# y: c and d once each: 2 / 2 = 1.0
	for k in 1 2 3 4; do
		printf '{"idempotency_key":"a%s","tenant_id":"tube","counter_id":"views","member_ref":"x","item":"a","delta":1,"event_time":"2026-06-08T10:0%s:00Z"}\n' "$k" "$k"
	done >i.jsonl
	printf '{"idempotency_key":"%s","tenant_id":"tube","counter_id":"views","member_ref":"%s","item":"%s","delta":1,"event_time":"2026-06-08T11:00:00Z"}\n' \
		b1 x b c1 y c d1 y d >>i.jsonl
	cnt-ingest -d "$DEFS" --now "$NOW" --max-past 400d -o i.avro i.jsonl
	cnt-audit "${AUD[@]}" --dry-run -F json --stats st.json i.avro >rep.json
	jq -e -s 'map(select(.kind == "video")) == [
		{"kind":"video","member_ref":"x","beacons":5,"views":2,"unique_viewers":2,"inflation":2.5,"baseline":1.5,"inflated":true,"flagged":0},
		{"kind":"video","member_ref":"y","beacons":2,"views":2,"unique_viewers":2,"inflation":1,"baseline":1.5,"inflated":false,"flagged":0}]' rep.json
	jq -e '.inflated == 1 and .duplicates == 3 and .examined == 4' st.json
	cnt-audit "${AUD[@]}" --dry-run i.avro >rep.txt
	grep -qE '^x +5 +2 +2 +2\.50 +0  inflated$' rep.txt
	grep -qE '^y +2 +2 +2 +1\.00 +0$' rep.txt
	grep -q '(inflation = beacons / unique viewers; baseline 1.5)' rep.txt
	# --baseline overrides the declared one
	cnt-audit "${AUD[@]}" --dry-run -F json --baseline 3 i.avro | jq -e -s 'map(select(.kind == "video" and .inflated)) == []'
}

@test "deterministic: the same archive in any order of inputs gives the same bytes" {
	"$ADATA/gen.py" >all.jsonl
	head -n 40 all.jsonl | cnt-ingest -d "$DEFS" --now "$NOW" --max-past 400d -o p1.avro -
	tail -n +41 all.jsonl | cnt-ingest -d "$DEFS" --now "$NOW" --max-past 400d -o p2.avro -
	mkdir A B
	(cd A && cnt-audit "${AUD[@]}" "${WHO[@]}" -o comp.avro -F json ../p1.avro ../p2.avro >rep.json)
	(cd B && cnt-audit "${AUD[@]}" "${WHO[@]}" -o comp.avro -F json ../p2.avro ../p1.avro >rep.json)
	for f in comp.avro ledger.jsonl audits.jsonl rep.json; do cmp "A/$f" "B/$f"; done
	# and the retraction id does not depend on the clock
	mkdir C
	(cd C && cnt-audit "${AUD[@]}" "${WHO[@]/2026-06-09T03:00:00Z/2026-07-01T00:00:00Z}" -o comp.avro -F json ../p2.avro ../p1.avro >rep.json)
	[ "$(jq -r .retraction_id A/ledger.jsonl)" = "$(jq -r .retraction_id C/ledger.jsonl)" ]
}

@test "ids holding quotes, backslashes and control characters: the report and --stats are valid JSON" {
	jq '.counters[0].counter_id = "vi\"e\\ws"' "$DEFS" >d.json
	python3 - >q.jsonl <<'PY'
import json
for v in range(5):
    print(json.dumps({"idempotency_key": "q%d" % v, "tenant_id": "tube", "counter_id": "vi\"e\\ws",
        "member_ref": "v\"%d\\\u0001" % v, "item": "bot\"\\\u0002", "delta": 1,
        "event_time": 1780876800000 + v * 1000, "attrs": {"ms_watched": "1\"\u0003", "ip_prefix": "n\\"}}))
PY
	cnt-ingest -d d.json --now "$NOW" --max-past 400d -o q.avro q.jsonl
	cnt-audit -d d.json --tenant tube --counter 'vi"e\ws' --through "$THROUGH" --dry-run -F json --stats st.json q.avro >rep.json
	jq -e -s 'length == 8' rep.json
	jq -e -s 'map(select(.kind == "finding" and .item == "bot\"\\\u0002")) | length == 2' rep.json
	jq -e '.counters[0].counter_id == "vi\"e\\ws" and .flagged == 5' st.json
	cnt-audit -d d.json --tenant tube --counter 'vi"e\ws' --through "$THROUGH" --dry-run q.avro >rep.txt
	grep -qF 'lockstep    bot"\x5c\x02' rep.txt
}

@test "usage errors and refusals" {
	log log.avro
	run cnt-audit -d "$DEFS" --tenant tube --counter views log.avro
	[ "$status" -eq 2 ] && [[ "$output" == *"--through are required"* ]]
	run cnt-audit "${AUD[@]}" -o c.avro log.avro
	[ "$status" -eq 2 ] && [[ "$output" == *"(or --dry-run)"* ]]
	run cnt-audit "${AUD[@]}" --dry-run - <log.avro
	[ "$status" -eq 2 ] && [[ "$output" == *"give files, not standard input"* ]]
	run cnt-audit -d "$DEFS" --tenant tube --counter nope --through "$THROUGH" --dry-run log.avro
	[ "$status" -eq 2 ] && [[ "$output" == "cnt-audit: counter 'tube/nope' is not declared in '$DEFS'" ]]
	run cnt-audit "${AUD[@]}" --dry-run -F csv log.avro
	[ "$status" -eq 2 ] && [[ "$output" == *"--output-format: 'csv' is not table or json"* ]]
	run cnt-audit "${AUD[@]}" --dry-run --baseline 0.5 log.avro
	[ "$status" -eq 2 ]
	# the ledgers are JSON: an authority that is not UTF-8 is refused, not "out of memory"
	run cnt-audit "${AUD[@]}" "${WHO[@]}" --authority $'case\xff' -o c.avro log.avro
	[ "$status" -eq 2 ] && [[ "$output" == *"--requester and --authority must be UTF-8 text"* ]] && [ ! -e ledger.jsonl ]
	# a broken audit ledger is refused before anything is written
	echo '{"audit_id":"x"}' >audits.jsonl
	run cnt-audit "${AUD[@]}" "${WHO[@]}" -o c.avro log.avro
	[ "$status" -eq 2 ] && [ ! -e c.avro ] && [ ! -e ledger.jsonl ]
}

@test "definitions: the audit array is checked" {
	bad() {
		jq --argjson a "$1" '.counters[0].audit = $a' "$DEFS" >b.json
		run cnt-audit -d b.json --tenant tube --counter views --through 2026-06-09T00:00:00Z --dry-run none.avro
		[ "$status" -eq 2 ]
		[[ "$output" == *"$2"* ]] || { echo "$output"; false; }
	}
	bad '[{"heuristic":"lockstep","span_s":60}]' '$.counters[0].audit[0].videos: required key is missing'
	bad '[{"heuristic":"lockstep","span_s":60,"videos":1}]' 'videos: 1 is out of range [2, 1000000000]'
	bad '[{"heuristic":"flood"}]' "heuristic: unknown value 'flood' (expected one of lockstep, burst, watch_time, inflation)"
	bad '[{"heuristic":"burst","span_s":1,"max_events":3}]' 'audit[0].attr: required key is missing'
	bad '[{"heuristic":"burst","attr":"ip","span_s":1,"max_events":3,"videos":2}]' 'audit[0].videos: unknown key'
	bad '[{"heuristic":"watch_time","views":3,"share":0}]' 'share: must be above 0'
	bad '[{"heuristic":"watch_time","views":3,"share":1.5}]' 'share: 1.5 is out of range [0, 1]'
	bad '[{"heuristic":"inflation"}]' 'baseline: required key is missing'
	bad '[{"heuristic":"inflation","baseline":2},{"heuristic":"inflation","baseline":3}]' 'audit[1]: a second inflation baseline'
	bad '{"heuristic":"lockstep"}' 'audit: expected an array, got object'
	bad "$(jq -nc '[range(17) | {heuristic:"lockstep",span_s:1,videos:2}]')" 'holds 17 heuristics, the limit is 16'
}

@test "a watermark that is not a bucket boundary of the tenant's zone is refused before anything is written" {
	log log.avro
	run --separate-stderr cnt-audit -d "$DEFS" --tenant tube --counter views --through 2026-06-09T00:30:00Z \
		"${WHO[@]}" -o comp.avro log.avro
	[ "$status" -eq 2 ]
	[ "$stderr" = "cnt-audit: --through 2026-06-09T00:30:00.000Z is not a bucket boundary in UTC (the bucket it falls in began at 2026-06-09T00:00:00.000Z): a verified count is made of whole buckets, so audit through a boundary" ]
	[ ! -e comp.avro ] && [ ! -e ledger.jsonl ] && [ ! -e audits.jsonl ]
	run --separate-stderr cnt-audit -d "$DEFS" --tenant tube --counter views --through 2026-06-09T00:30:00Z --dry-run log.avro
	[ "$status" -eq 2 ] && [ -z "$output" ]
}
