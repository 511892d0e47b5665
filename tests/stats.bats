#!/usr/bin/env bats
# --stats output is JSON whatever the ids hold: definitions whose tenant,
# counter and board ids hold '"', '\' and non-ASCII text (the definitions
# allow them; control characters they refuse, which is tested too), an
# input file and a scope whose names hold control characters.  Every tool
# writes --stats (cnt(7), STATISTICS); each file must parse (jq), name its
# tool, and hold the ids exactly.

bats_require_minimum_version 1.5.0

ROOT="$BATS_TEST_DIRNAME/.."
PY=/usr/bin/python3
NOW=2026-11-30T09:00:00Z
command -v cnt-cat >/dev/null 2>&1 || PATH="$ROOT/build/bin:$PATH"

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	"$PY" - <<-'EOF'
	import json
	ids = {
	    "tenant": 'ac"me\\\u00e9',
	    "counter": 'dist"ance\\m',
	    "board": 'b"oard\\1',
	    "cohort_board": 'co"hort\\s',
	    "scope": 'g"ol\\d\u0001\t\u00e9',
	    "input": 'in"put\\\u0001\t.jsonl',
	}
	json.dump(ids, open("ids.json", "w"))
	T, C = ids["tenant"], ids["counter"]
	defs = {
	    "format": "cnt-definitions/1",
	    "tenants": [{"tenant_id": T, "timezone": "Europe/Berlin"}],
	    "counters": [{"tenant_id": T, "counter_id": C, "versions": [
	        {"version": 1, "type": "exact", "windows": ["all_time"]}]}],
	    "leaderboards": [
	        {"board_id": ids["board"], "tenant_id": T, "counter_id": C, "window": "all_time"},
	        {"board_id": ids["cohort_board"], "tenant_id": T, "counter_id": C, "window": "all_time",
	         "scope_kind": "cohort", "scope_attr": 'gr"oup\\'}],
	}
	json.dump(defs, open("defs.json", "w"), ensure_ascii=False, indent=1)
	with open(ids["input"], "w", encoding="utf-8") as f:
	    for i in range(6):   # k"4\ twice: one duplicate
	        f.write(json.dumps({"idempotency_key": 'k"%d\\' % (i % 5), "tenant_id": T, "counter_id": C,
	                            "member_ref": 'm"%d\\' % (i % 3), "delta": i + 1,
	                            "event_time": "2026-11-30T07:%02d:00Z" % i}, ensure_ascii=False) + "\n")
	with open("scopes.csv", "w", encoding="utf-8") as f:
	    f.write("member_ref,scope\n")
	    for m in range(3):
	        f.write('m"%d\\,%s\n' % (m, ids["scope"]))
	# the loader's refusal of control characters in ids
	bad = json.loads(json.dumps(defs))
	bad["tenants"][0]["tenant_id"] = "ac\u0001me"
	json.dump(bad, open("bad-tenant.json", "w"))
	bad = json.loads(json.dumps(defs))
	bad["counters"][0]["counter_id"] = "dist\u007fance"
	json.dump(bad, open("bad-counter.json", "w"))
	EOF
	INPUT=$(jq -r .input ids.json)
	BOARD=$(jq -r .board ids.json)
	cnt-ingest --definitions defs.json --now "$NOW" --output events.avro "$INPUT"
	cnt-dedup --definitions defs.json --output deduped.avro events.avro
	cnt-window --definitions defs.json --output windowed.avro deduped.avro
	cnt-accumulate --output buckets.avro windowed.avro
	cnt-accumulate --output doubled.avro buckets.avro buckets.avro
	cnt-project --definitions defs.json --board "$BOARD" --views views --now "$NOW" buckets.avro
}

setup() {
	cd "$BATS_FILE_TMPDIR"
	INPUT=$(jq -r .input ids.json)
	BOARD=$(jq -r .board ids.json)
	COHORT=$(jq -r .cohort_board ids.json)
	S=$BATS_TEST_TMPDIR/stats.json
}

# valid TOOL FILE: FILE is one JSON object naming TOOL, and every ids
# object it holds (an entry of "counters", or any object with a tenant_id)
# has the definitions' ids exactly.
valid() {
	jq -e -s --arg tool "$1" --slurpfile ids ids.json '
		length == 1 and (.[0] | type) == "object" and .[0].tool == $tool and
		([.[0] | .. | objects | select(has("tenant_id")) |
		  .tenant_id == $ids[0].tenant and .counter_id == $ids[0].counter] | all)' "$2"
}

# has_counters FILE: its "counters" list has the one counter, ids exact.
has_counters() {
	jq -e --slurpfile ids ids.json '
		[.counters[] | select(.tenant_id == $ids[0].tenant and .counter_id == $ids[0].counter)] | length == 1' "$1"
}

@test "the definitions refuse ids holding control characters" {
	run -2 cnt-ingest --definitions bad-tenant.json --now "$NOW" --output /dev/null "$INPUT"
	[[ $output == *"tenant_id"*"control character"* ]]
	run -2 cnt-dedup --definitions bad-counter.json --output /dev/null events.avro
	[[ $output == *"counter_id"*"control character"* ]]
}

@test "cnt-ingest --stats: valid JSON; ids, and the input's name, exact" {
	cnt-ingest --definitions defs.json --now "$NOW" --output /dev/null --stats "$S" "$INPUT"
	valid cnt-ingest "$S"
	has_counters "$S"
	jq -e '.in == 6 and .out == 5 and .duplicates == 1' "$S"
	# the input's name, wherever the stats give it, is the file's name
	jq -e --slurpfile ids ids.json '[.. | strings | select(contains("put"))] | all(endswith($ids[0].input))' "$S"
}

@test "cnt-dedup --stats: valid JSON, ids exact" {
	cnt-dedup --definitions defs.json --output /dev/null --stats "$S" events.avro
	valid cnt-dedup "$S"
	has_counters "$S"
}

@test "cnt-window --stats: valid JSON, ids exact" {
	cnt-window --definitions defs.json --output /dev/null --stats "$S" deduped.avro
	valid cnt-window "$S"
	has_counters "$S"
	# the hottest key: m"0\ (2 of the 5 events; m"1\ ties and came later)
	jq -e '.top_key_share == 0.4 and .top_key.member_ref == "m\"0\\" and .top_key.events == 2 and
		.top_key.exact and .late_ratio == 0' "$S"
}

@test "cnt-accumulate --stats: valid JSON, ids exact" {
	cnt-accumulate --output /dev/null --stats "$S" windowed.avro
	valid cnt-accumulate "$S"
	jq -e '.late_ratio == 0 and .events == 5' "$S"
}

@test "cnt-diff --stats: valid JSON, ids exact" {
	run -1 cnt-diff --stats "$S" buckets.avro doubled.avro
	valid cnt-diff "$S"
	jq -e '.differences == .changed and .differences > 0' "$S"
	cnt-diff --stats "$S" buckets.avro buckets.avro
	jq -e '.differences == 0' "$S"
}

@test "cnt-project --stats: valid JSON; board and scope names exact" {
	cnt-project --definitions defs.json --board "$COHORT" --views v2 --now "$NOW" --scopes scopes.csv \
		--stats "$S" buckets.avro
	valid cnt-project "$S"
	jq -e --slurpfile ids ids.json '[.scopes[].scope] == [$ids[0].scope]' "$S"
	# the projection lag: the log's latest ingest time is --now
	jq -e '.as_of_age_s == 0 and .freshness_budget_s == 60 and (.as_of | type) == "number"' "$S"
	jq -e '.in > 0 and .out == .members and .out > 0' "$S"
	jq -e --slurpfile ids ids.json '[.. | strings | select(contains("hort"))] | all(. == $ids[0].cohort_board)' "$S"
}

@test "cnt-cat and cnt-rank --stats: valid JSON" {
	cnt-cat --stats "$S" events.avro >/dev/null
	valid cnt-cat "$S"
	cnt-rank --views views --board "$BOARD" --now 2026-11-30T09:01:30.500Z --stats "$S" top 3 >"$BATS_TEST_TMPDIR/top"
	valid cnt-rank "$S"
	jq -e '.as_of_age_s == 90.5 and .freshness_budget_s == 60' "$S"
	jq -e '.entries | length == 3' "$BATS_TEST_TMPDIR/top"
}

@test "--stats - writes the one JSON object to standard error, for every tool" {
	local err=$BATS_TEST_TMPDIR/err
	one() {
		"$@" 2>"$err" >/dev/null || [ "$1" = cnt-diff ]
		valid "$1" "$err" || { echo "$*: standard error: $(cat "$err")"; return 1; }
	}
	one cnt-ingest --definitions defs.json --now "$NOW" --output /dev/null --stats - "$INPUT"
	one cnt-cat --stats - events.avro
	one cnt-dedup --definitions defs.json --output /dev/null --stats - events.avro
	one cnt-window --definitions defs.json --output /dev/null --stats - deduped.avro
	one cnt-accumulate --output /dev/null --stats - windowed.avro
	one cnt-diff --stats - buckets.avro doubled.avro
	one cnt-project --definitions defs.json --board "$BOARD" --views v3 --now "$NOW" --stats - buckets.avro
	one cnt-rank --views views --board "$BOARD" --now "$NOW" --stats - top 3
}
