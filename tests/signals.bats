#!/usr/bin/env bats
# cnt-stats: the --stats files of one run (ingest, dedup, window,
# accumulate, project, rank, diff, canary) in one table and one JSON
# object, every batch signal of the observability matrix present, the
# thresholds of the seeds flagged, exit 1 when anything is flagged;
# thresholds from a file and options; trouble (status 2).

bats_require_minimum_version 1.5.0

ROOT="$BATS_TEST_DIRNAME/.."
DEFS="$ROOT/examples/definitions.json"
EVENTS="$ROOT/examples/events.jsonl"
KEYRING="$ROOT/examples/keyring.json"
NOW=2026-11-30T09:00:00Z
BOARD=acme-30d-distance
command -v cnt-stats >/dev/null 2>&1 || PATH="$ROOT/build/bin:$PATH"

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	cnt-ingest -d "$DEFS" --keyring "$KEYRING" --now "$NOW" -o log.avro -r /dev/null -D /dev/null --stats ingest.json "$EVENTS"
	cnt-dedup -d "$DEFS" --stats dedup.json log.avro | cnt-window -d "$DEFS" --stats window.json |
		cnt-accumulate -o buckets.avro --stats accumulate.json
	cnt-project -d "$DEFS" -b "$BOARD" -w views --now "$NOW" --stats project.json buckets.avro
	cnt-rank -w views -b "$BOARD" --now 2026-11-30T09:00:30Z --stats rank.json top 3 >/dev/null
	cnt-diff --stats diff.json buckets.avro buckets.avro
	jq '.tenants += [{"tenant_id": "probe", "timezone": "UTC", "probe": true}] |
		.counters += [{"tenant_id": "probe", "counter_id": "views", "versions": [{"version": 1,
		"type": "unique", "dedup_key": "item_member"}]}]' "$DEFS" >probe-defs.json
	cnt-canary -d probe-defs.json --scratch canary --now "$NOW" --stats canary.json
	RUN="ingest.json dedup.json window.json accumulate.json project.json rank.json diff.json canary.json"
	echo "$RUN" >run.list
}

setup() {
	cd "$BATS_FILE_TMPDIR"
	RUN=$(cat run.list)
}

@test "cnt-stats: every batch signal of a run in one JSON object; the seeds' thresholds" {
	# shellcheck disable=SC2086
	run -1 --separate-stderr cnt-stats -F json $RUN
	echo "$output" >all.json
	jq -e '.files == 8' all.json
	# signal -> [value, threshold, flagged], per tool
	sig() { jq -c --arg t "$1" --arg s "$2" '[.signals[] | select(.tool == $t and .signal == $s) |
		[.value, .threshold, .flagged]]' all.json; }
	[ "$(sig cnt-ingest dedup_hit_rate)" = '[[0.074074,0.1,false]]' ]
	[ "$(sig cnt-ingest rejected)" = '[[3,null,false]]' ]
	[ "$(sig cnt-ingest rejected_by_reason.item_required)" = '[[1,null,false]]' ]
	# 4 of the 25 events written are views of one video; cnt-dedup drops
	# one of them by its view-count key, so cnt-window sees 3 of 24
	[ "$(sig cnt-ingest top_key_share)" = '[[0.16,0.017,true]]' ]
	[ "$(sig cnt-dedup dedup_hit_rate)" = '[[0.04,0.1,false]]' ]
	[ "$(sig cnt-window late_ratio)" = '[[0.541667,0.05,true]]' ]
	[ "$(sig cnt-window top_key_share)" = '[[0.125,0.017,true]]' ]
	[ "$(sig cnt-accumulate late_ratio)" = '[[0.541667,0.05,true]]' ]
	[ "$(sig cnt-project as_of_age_s)" = '[[0,60,false]]' ]
	[ "$(sig cnt-rank as_of_age_s)" = '[[30,60,false]]' ]
	[ "$(sig cnt-diff differences)" = '[[0,0,false]]' ]
	[ "$(sig cnt-canary canary_age_s)" = '[[0,3600,false]]' ]
	[ "$(sig cnt-canary reporting)" = '[[true,null,false]]' ]
	[ "$(jq -c '[.signals[] | select(.signal == "balanced") | .tool]' all.json)" = \
		'["cnt-ingest","cnt-dedup","cnt-window","cnt-accumulate","cnt-canary"]' ]
	jq -e '.flagged == 4 and ([.signals[] | select(.flagged)] | length) == 4' all.json
	[ -z "$stderr" ]
}

@test "cnt-stats: the table; exit 0 when nothing is flagged" {
	run -1 cnt-stats dedup.json window.json
	[ "${lines[0]}" = "tool             signal                                          value  threshold  status" ]
	[[ ${lines[4]} == "cnt-window       late_ratio "*" 0.541667 "*"> 0.05  FLAGGED" ]]
	[ "${lines[-1]}" = "2 files, 5 signals, 2 flagged" ]
	run -0 --separate-stderr cnt-stats -v --threshold late_ratio=0.6 --threshold top_key_share=none dedup.json window.json
	[ "${lines[-1]}" = "2 files, 5 signals, 0 flagged" ]
	[[ ${lines[5]} == "cnt-window       top_key_share "*" 0.125 "*" -  ok" ]]
	[ "$stderr" = "cnt-stats: 2 files, 5 signals, 0 flagged" ]
}

@test "cnt-stats: flags a failed conservation check, a rebuild difference, a stale view, a silent canary" {
	cnt-accumulate -o doubled.avro buckets.avro buckets.avro
	run -1 cnt-diff --stats d2.json buckets.avro doubled.avro
	cnt-rank -w views -b "$BOARD" --now 2026-11-30T09:02:00Z --stats r2.json top 3 >/dev/null
	cp -r canary c2
	run -1 cnt-canary --check --max-age 1h --scratch c2 --now 2026-11-30T11:00:00Z --stats c2.json
	jq '.balanced = false' window.json >w2.json
	run -1 cnt-stats -F json d2.json r2.json c2.json w2.json
	echo "$output" | jq -e '[.signals[] | select(.flagged) | "\(.tool) \(.signal) \(.value)"] ==
		["cnt-diff differences 23", "cnt-rank as_of_age_s 120", "cnt-canary reporting false",
		 "cnt-canary canary_age_s 7200", "cnt-window balanced false", "cnt-window late_ratio 0.541667",
		 "cnt-window top_key_share 0.125"]'
	# the board's budget (60 s) is the default limit; a threshold set wins
	run -0 cnt-stats --threshold as_of_age_s=300 r2.json
}

@test "cnt-stats: thresholds from a file; held and rejects flagged once a threshold is set" {
	echo '{"rejected": 2, "held": 0, "late_ratio": null, "top_key_share": 0.5}' >t.json
	run -1 cnt-stats -F json --thresholds t.json ingest.json window.json
	echo "$output" | jq -e '[.signals[] | select(.flagged) | .signal] == ["rejected"]'
	echo "$output" | jq -e '[.signals[] | select(.signal == "held") | [.tool, .value, .threshold]] ==
		[["cnt-ingest", 0, 0], ["cnt-window", 0, 0]]'
	# --threshold after the file
	run -0 cnt-stats --thresholds t.json --threshold rejected=none ingest.json window.json
}

@test "cnt-stats: ids with quotes, backslashes and control characters: the JSON parses" {
	printf '{"tool":"cnt-w\\"in\\\\dow\\u0001","late_ratio":0.5}\n' >'we"ird\.json'
	run -1 cnt-stats -F json 'we"ird\.json'
	echo "$output" | jq -e '.signals[0].tool == "cnt-w\"in\\dow\u0001" and .signals[0].file == "we\"ird\\.json"'
}

@test "cnt-stats: trouble is status 2: not JSON, not a --stats object, unreadable, bad thresholds" {
	echo '{"in": 1' >bad.json
	run -2 --separate-stderr cnt-stats bad.json
	[[ $stderr == "cnt-stats: statistics 'bad.json': line 2, column 0: "* ]]
	echo '{"in": 1}' >notool.json
	run -2 --separate-stderr cnt-stats window.json notool.json
	[ "$stderr" = "cnt-stats: statistics 'notool.json': not the --stats object of a cnt tool (no \"tool\")" ]
	[ -z "$output" ]
	run -2 --separate-stderr cnt-stats nonexistent.json
	[[ $stderr == "cnt-stats: cannot read statistics 'nonexistent.json': "* ]]
	run -2 cnt-stats --threshold late=1 window.json
	[ "${lines[0]}" = "cnt-stats: --threshold: threshold 'late=1': unknown signal 'late'" ]
	[[ ${lines[1]} == "usage: cnt-stats "* ]]
	run -2 cnt-stats --threshold late_ratio=x window.json
	[ "${lines[0]}" = "cnt-stats: --threshold: threshold 'late_ratio=x': 'x' is not a number >= 0 or 'none'" ]
	echo '{"late_ratio": -1}' >t.json
	run -2 --separate-stderr cnt-stats --thresholds t.json window.json
	[ "$stderr" = "cnt-stats: thresholds 't.json': late_ratio: expected a number >= 0 or null" ]
	run -2 cnt-stats -F csv window.json
	[ "${lines[0]}" = "cnt-stats: --output-format: 'csv' is not table or json" ]
	run -2 cnt-stats
	[ "${lines[0]}" = "cnt-stats: no statistics file given: name the --stats files of the run" ]
	run -0 cnt-stats --stats s.json --threshold late_ratio=none --threshold top_key_share=none window.json
	jq -e '.tool == "cnt-stats" and .in == 1 and .out == 3 and .flagged == 0' s.json
}
