#!/usr/bin/env bats
# tolerated_error of a unique counter sets the HLL++ precision of its
# sketches (cnt-definitions(5)): smaller sketches at a looser declaration,
# the precision in each sketch's header (cnt-bucket(5)), refusals with the
# precision a declaration would need, and unions of versions of different
# precisions folded to the lower one.

bats_require_minimum_version 1.5.0
load data/core/common

setup() {
	set -o pipefail
	cd "$BATS_TEST_TMPDIR"
}

U='.counters[3].versions[0]'   # utc/uniq v1 of the core definitions

# n_items FIRST LAST KEY_PREFIX TIME: raw events of utc/uniq, member m1,
# items uFIRST..uLAST.
n_items() {
	local i
	for ((i = $1; i <= $2; i++)); do
		printf '{"idempotency_key":"%s%d","tenant_id":"utc","counter_id":"uniq","member_ref":"m1","delta":1,"item":"u%d","event_time":"%s"}\n' \
			"$3" "$i" "$i" "$4"
	done
}

# estimate FILE: the sketch estimate of the one record of a bucket file
estimate() {
	[ -e empty.avro ] || ingest "$T0" - </dev/null | cnt-window -d "$DEFS" | cnt-accumulate -o empty.avro
	local rc=0
	cnt-diff "$1" empty.avro | jq -r .left.sketch_estimate || rc=$?
	[ "$rc" -eq 0 ] || [ "$rc" -eq 1 ]
}

@test "tolerated_error 0.05 gives precision-11 sketches: 1539 bytes instead of 12291, the estimate within 5 %" {
	jq "$U.tolerated_error = 0.05" "$DEFS" >loose.json
	n_items 1 5000 k "$T0" >ev.jsonl
	for d in "$DEFS" loose.json; do
		n=$(basename "$d" .json)
		ingest 2026-03-01T10:05:00Z "ev-$n.avro" "$d" <ev.jsonl
		cnt-window -d "$d" "ev-$n.avro" | cnt-accumulate -c null -o "b-$n.avro"
	done
	# the sketch's header: version 1, dense, precision 14 / 11
	cnt-cat b-defs.avro | one '(.sketch | explode) as $s | $s[0:3] == [1, 2, 14] and ($s | length) == 12291'
	cnt-cat b-loose.avro | one '(.sketch | explode) as $s | $s[0:3] == [1, 2, 11] and ($s | length) == 1539'
	# the bucket files differ by the sketches' sizes (and a longer length prefix)
	small=$(stat -c %s b-loose.avro) big=$(stat -c %s b-defs.avro)
	[ $((big - small)) -ge 10752 ] && [ $((big - small)) -le 10760 ]
	# both estimates are within their declared (or default) error
	e11=$(estimate b-loose.avro) e14=$(estimate b-defs.avro)
	echo "p11 $e11 p14 $e14"
	[ "$e11" -ne "$e14" ]
	"$PY" -c 'import sys; e11, e14 = int(sys.argv[1]), int(sys.argv[2]); assert abs(e11 - 5000) <= 0.05 * 5000 and abs(e14 - 5000) <= 0.0159 * 5000' "$e11" "$e14"
}

@test "a declaration no precision up to 18 meets is refused with the precision it needs; exact, min and max take none" {
	jq "$U.tolerated_error = 0.003" "$DEFS" >tight.json
	run -2 cnt-ingest -d tight.json -f json -o out.avro /dev/null
	[ "$output" = "cnt-ingest: definitions 'tight.json': \$.counters[3].versions[0].tolerated_error: 0.003 needs HLL++ precision 19; the highest is 18, whose error at 95 % is 0.0040" ]
	[ ! -e out.avro ]
	# 0.004 is just met by 18 (0.00398)
	jq "$U.tolerated_error = 0.004" "$DEFS" >ok.json
	run -0 cnt-ingest -d ok.json -f json -o out.avro /dev/null
	for t in exact min max; do
		jq ".counters[0].versions[0].type = \"$t\" | .counters[0].versions[0].tolerated_error = 0.05" "$DEFS" >x.json
		run -2 cnt-window -d x.json out.avro
		[ "$output" = "cnt-window: definitions 'x.json': \$.counters[0].versions[0].tolerated_error: not allowed for a counter of type $t (it counts exactly)" ]
	done
	for bad in 0 -0.1 0.51 '"0.05"' true; do
		jq "$U.tolerated_error = $bad" "$DEFS" >x.json
		run -2 cnt-ingest -d x.json -f json -o out2.avro /dev/null
		[[ $output == "cnt-ingest: definitions 'x.json': \$.counters[3].versions[0].tolerated_error: "* ]]
		[ "${#lines[@]}" -eq 1 ]
	done
	jq "$U.tolerated_error = 0.51" "$DEFS" >x.json
	run -2 cnt-ingest -d x.json -f json -o out2.avro /dev/null
	[[ $output == *"tolerated_error: 0.51 is out of range (0, 0.5] (the relative error tolerated at 95 %)" ]]
	[ ! -e out2.avro ]
}

# defs E1 E2: the core definitions with utc/uniq in two versions (v2 from
# 11:00Z), tolerated_error E1 and E2 (0: not declared), and an all-time
# board of it.
defs() {
	jq --argjson e1 "$1" --argjson e2 "$2" '
		def te($e): if $e > 0 then {tolerated_error: $e} else {} end;
		.counters[3].versions = [
			{version: 1, type: "unique", lateness_horizon_s: 600} + te($e1),
			{version: 2, effective_from: "2026-03-01T11:00:00Z", type: "unique", lateness_horizon_s: 600} + te($e2)]
		| .leaderboards = [{board_id: "u", tenant_id: "utc", counter_id: "uniq", window: "all_time"}]' "$DEFS"
}

@test "versions of different precisions: cnt-project unites their sketches at the lower one, exactly as if both were at it" {
	n_items 1 3000 a 2026-03-01T10:00:00Z >a.jsonl        # v1
	n_items 2001 5000 b 2026-03-01T11:30:00Z >b.jsonl     # v2; 1000 items in both
	defs 0 0.05 >mixed.json
	defs 0.05 0.05 >low.json
	defs 0 0 >high.json
	for n in mixed low high; do
		ingest 2026-03-01T10:05:00Z "a-$n.avro" "$n.json" <a.jsonl
		ingest 2026-03-01T11:35:00Z "b-$n.avro" "$n.json" <b.jsonl
		cat "a-$n.avro" "b-$n.avro" | cnt-window -d "$n.json" | cnt-accumulate -o "b-$n.avro"
		cnt-project -d "$n.json" -b u -w "v-$n" --now 2026-03-01T12:00:00Z "b-$n.avro"
		cnt-rank -w "v-$n" -b u --now 2026-03-01T12:00:00Z value m1 | jq -r .value >"$n.value"
	done
	# mixed: v1's sketch at 14 (sparse), v2's at 11 (dense)
	cnt-cat b-mixed.avro | jq -c '[.counter_version, (.sketch | explode[0:3])]' >hdr.jsonl
	[ "$(cat hdr.jsonl)" = "$(printf '[1,[1,1,14]]\n[2,[1,2,11]]')" ]
	echo "mixed $(cat mixed.value) low $(cat low.value) high $(cat high.value)"
	[ "$(cat mixed.value)" = "$(cat low.value)" ]
	[ "$(cat mixed.value)" != "$(cat high.value)" ]
	# the union is still within 5 % of the 5000 distinct items
	"$PY" -c 'import sys; assert abs(int(sys.argv[1]) - 5000) <= 250' "$(cat mixed.value)"
}

@test "cnt-accumulate refuses bucket files of one version counted under two tolerated_error declarations" {
	jq "$U.tolerated_error = 0.05" "$DEFS" >loose.json
	n_items 1 10 k "$T0" >ev.jsonl
	ingest 2026-03-01T10:05:00Z e14.avro "$DEFS" <ev.jsonl
	ingest 2026-03-01T10:05:00Z e11.avro loose.json <ev.jsonl
	cnt-window -d "$DEFS" e14.avro | cnt-accumulate -o b14.avro
	cnt-window -d loose.json e11.avro | cnt-accumulate -o b11.avro
	run -2 cnt-accumulate -o b.avro b14.avro b11.avro
	[[ $output == "cnt-accumulate: "*"utc/uniq v1"* ]]
	[ "${#lines[@]}" -eq 1 ]
	[ ! -e b.avro ]
}
