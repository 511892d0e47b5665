#!/usr/bin/env bats
# cnt-seal: a weekly season of a Berlin board that closes on Sunday
# 2026-10-25 at midnight local time, the night the clocks go back (the
# week has 169 hours); sealing at the boundary, refusal before the
# lateness horizon, refusal to overwrite or republish (cnt-seal and
# cnt-project), tamper detection of every published file and of the
# ledger, corrections after a retraction with the sealed file untouched,
# idempotent correct, a cnt-hold reject never cited, the late path after
# sealing, hostile sealed directories.

bats_require_minimum_version 1.5.0

ROOT="$BATS_TEST_DIRNAME/.."
PY=/usr/bin/python3
command -v cnt-seal >/dev/null 2>&1 || PATH="$ROOT/build/bin:$PATH"
SEAL_AT=2026-10-28T00:00:00Z

# ev KEY MEMBER DELTA EVENT_TIME: a raw acme/distance_m event.
ev() {
	printf '{"idempotency_key":"%s","tenant_id":"acme","counter_id":"distance_m","member_ref":"%s","delta":%s,"event_time":"%s"}\n' "$@"
}

# ing NOW OUT: admits standard input with ingest time NOW.
ing() {
	cnt-ingest -d "$DEFS" --now "$1" --max-past 400d -o "$2" --rejects /dev/null -
}

# count OUT LOG...: dedup, window and accumulate into the bucket file OUT.
count() {
	local out=$1
	shift
	cnt-dedup -d "$DEFS" "$@" | cnt-window -d "$DEFS" | cnt-accumulate -o "$out"
}

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	# A weekly league on distance_m (lateness horizon 48 h): week 43 opens
	# Monday 2026-10-19 00:00 CEST (2026-10-18T22:00Z) and closes Monday
	# 2026-10-26 00:00 CET (2026-10-25T23:00Z); week 44 follows.
	jq '.leaderboards += [
		{board_id: "acme-league", tenant_id: "acme", counter_id: "distance_m", window: "season",
		 scope_kind: "global", tie_break: ["earliest_achiever", "member_ref_asc"],
		 rank_numbering: "competition", materialised_cap: 100, freshness_budget_s: 60},
		{board_id: "acme-cohorts", tenant_id: "acme", counter_id: "distance_m", window: "season",
		 scope_kind: "cohort", scope_attr: "cohort", tie_break: ["member_ref_asc"],
		 rank_numbering: "ordinal", materialised_cap: 100, freshness_budget_s: 60}]
	| .seasons += [
		{season_id: "w43", board_id: "acme-league", opens_at: "2026-10-19T00:00:00",
		 closes_at: "2026-10-26T00:00:00", timezone: "Europe/Berlin", state: "open"},
		{season_id: "w44", board_id: "acme-league", opens_at: "2026-10-26T00:00:00",
		 closes_at: "2026-11-02T00:00:00", timezone: "Europe/Berlin", state: "open"},
		{season_id: "c43", board_id: "acme-cohorts", opens_at: "2026-10-19T00:00:00",
		 closes_at: "2026-10-26T00:00:00", state: "open"}]' \
		"$ROOT/examples/definitions.json" >defs.json
	DEFS=$PWD/defs.json
	# Each event admitted an hour after it happened (on time), except m-d's,
	# admitted on Tuesday noon: within the 48 h horizon of its Sunday bucket.
	ev k1 m-a 5000 2026-10-18T22:00:00Z | ing 2026-10-18T23:00:00Z l1.avro
	ev k2 m-cheat 90000 2026-10-22T10:00:00Z | ing 2026-10-22T11:00:00Z l2.avro
	{
		ev k0 m-z 99999 2026-10-18T21:59:59.999Z      # Sunday before: week 42
		ev k3 m-b 7000 2026-10-25T22:30:00Z           # Sunday 23:30 CET
		ev k4 m-c 6000 2026-10-25T22:59:59.999Z       # the last instant
		ev k5 m-z 50000 2026-10-25T23:00:00Z          # Monday 00:00 CET: week 44
	} | ing 2026-10-25T23:30:00Z l3.avro
	ev k6 m-d 6500 2026-10-25T12:00:00Z | ing 2026-10-27T12:00:00Z l4.avro
	cnt-dedup -d "$DEFS" -o log.avro l1.avro l2.avro l3.avro l4.avro
	count buckets.avro log.avro
	# the cheater is proved on Wednesday and retracted
	cnt-retract --member m-cheat --tenant acme --counter distance_m --cause fraud --requester ts-7 \
		--authority case-4412 --ledger retractions.jsonl --now 2026-10-28T09:00:00Z -o comp.avro log.avro
	count comp.buckets.avro comp.avro
	cnt-accumulate -o merged.avro buckets.avro comp.buckets.avro
	cnt-retract --rebuild merged.avro -d "$DEFS" -o revised.avro log.avro comp.avro
	: >empty-retractions.jsonl
}

setup() {
	F=$BATS_FILE_TMPDIR
	DEFS=$F/defs.json
	cd "$BATS_TEST_TMPDIR"
}

close43() {
	cnt-seal close -d "$DEFS" --season w43 --sealed sealed --now "$SEAL_AT" "$@" "$F/buckets.avro"
}

@test "close at the DST boundary: the week's 169 hours, its first and last instants, nothing after" {
	run -0 --separate-stderr close43 --stats st.json
	[ -z "$output" ] && [ -z "$stderr" ]
	run -0 jq -r '[.member_ref, .final_value, .final_rank] | @tsv' sealed/w43/global/standings.jsonl
	[ "$output" = "$(printf 'm-cheat\t90000\t1\nm-b\t7000\t2\nm-d\t6500\t3\nm-c\t6000\t4\nm-a\t5000\t5')" ]
	one() { jq -e -s "length == 1 and (.[0] | $1)" sealed/ledger.jsonl; }
	one '.kind == "standings" and .season_id == "w43" and .scope == "global" and .board_id == "acme-league"
		and .window_from == "2026-10-18T22:00:00.000Z" and .window_to == "2026-10-25T23:00:00.000Z"
		and .records == 5 and .horizon_s == 172800 and .sealed_at == "2026-10-28T00:00:00.000Z"
		and .file == "w43/global/standings.jsonl" and .prev == "00000000000000000000000000000000"'
	jq -e -s 'all(.[]; .season_id == "w43" and .scope == "global" and .sealed_at == "2026-10-28T00:00:00.000Z"
		and .board_id == "acme-league") and (.[0] | keys_unsorted) ==
		["season_id","board_id","scope","member_ref","final_value","final_rank","sealed_at"]' \
		sealed/w43/global/standings.jsonl
	jq -e '.tool == "cnt-seal" and .command == "close" and .files == 1 and .out == 5 and .in > 0' st.json
	# the sealed standings are what cnt-project ranks for the season
	cnt-project -d "$DEFS" -b acme-league -w views --season w43 --now "$SEAL_AT" "$F/buckets.avro"
	diff <(jq -r '[.member_ref, .final_value, .final_rank] | @tsv' sealed/w43/global/standings.jsonl) \
		<(cnt-rank -w views -b acme-league --now "$SEAL_AT" top 10 | jq -r '.entries[] | [.member_ref, .value, .rank] | @tsv')
	# the head names the ledger's one line
	[ "$(cut -d' ' -f1 sealed/ledger.head)" = 1 ]
	run -0 cnt-seal verify --sealed sealed -v
	[ "$output" = "cnt-seal: 'sealed': intact, 1 files" ]
}

@test "rollover needs no freeze: the Monday 00:00 event counts in the next season, which publishes while w43 is sealed" {
	close43
	run -0 cnt-project -d "$DEFS" -b acme-league -w views --season w44 --sealed sealed --now "$SEAL_AT" "$F/buckets.avro"
	run -0 cnt-rank -w views -b acme-league --now "$SEAL_AT" top 10
	[ "$(echo "$output" | jq -c '[.entries[] | [.member_ref, .value]]')" = '[["m-z",50000]]' ]
}

@test "close refuses until the lateness horizon has passed, and says when it may run" {
	run -2 cnt-seal close -d "$DEFS" --season w43 --sealed sealed --now 2026-10-27T23:00:00Z "$F/buckets.avro"
	[ "$output" = "cnt-seal: season 'w43' closes at 2026-10-26T00:00:00 (2026-10-25T23:00:00.000Z); events may still arrive on time until the lateness horizon of acme/distance_m (172800 s) has passed: it may be sealed after 2026-10-27T23:00:00.000Z, not at 2026-10-27T23:00:00.000Z" ]
	[ ! -e sealed/ledger.jsonl ] && [ -z "$(find sealed -type f)" ]
	run -2 cnt-seal close -d "$DEFS" --season w43 --sealed sealed --now 2026-10-25T23:00:00Z "$F/buckets.avro"
	# one millisecond after the horizon it may
	run -0 cnt-seal close -d "$DEFS" --season w43 --sealed sealed --now 2026-10-27T23:00:00.001Z "$F/buckets.avro"
	[ -s sealed/w43/global/standings.jsonl ]
}

@test "a seal is never overwritten: close again refuses, the files untouched" {
	close43
	cp -a sealed before
	run -2 cnt-seal close -d "$DEFS" --season w43 --sealed sealed --now 2026-10-29T00:00:00Z "$F/revised.avro"
	[ "$output" = "cnt-seal: season 'w43' scope 'global' is already sealed (seal ledger line 1, 'sealed/w43/global/standings.jsonl'): a seal is never overwritten; publish changes with cnt-seal correct" ]
	diff -r before sealed
	# a file left by an interrupted run (not in the ledger) is not replaced either
	mkdir -p s3/w43/global && echo junk >s3/w43/global/standings.jsonl
	run -2 cnt-seal close -d "$DEFS" --season w43 --sealed s3 --now "$SEAL_AT" "$F/buckets.avro"
	[[ $output == *"'s3/w43/global/standings.jsonl' exists but the seal ledger does not list it"* ]]
	[ "$(cat s3/w43/global/standings.jsonl)" = junk ]
}

@test "cnt-project refuses a sealed season (--sealed) and a season declared closed" {
	close43
	run -2 cnt-project -d "$DEFS" -b acme-league -w views --season w43 --sealed sealed --now "$SEAL_AT" "$F/buckets.avro"
	[ "$output" = "cnt-project: season 'w43' is sealed in 'sealed' (seal ledger line 1): its standings are not published again; publish changes with cnt-seal correct" ]
	[ ! -e views ]
	jq '(.seasons[] | select(.season_id == "w43") | .state) = "closed"' "$DEFS" >closed.json
	run -2 cnt-project -d closed.json -b acme-league -w views --season w43 --now "$SEAL_AT" "$F/buckets.avro"
	[ "$output" = "cnt-project: season 'w43' is closed (its definitions say \"state\": \"closed\"): its standings are sealed and not published again; publish changes with cnt-seal correct" ]
	[ ! -e views ]
	# the next season is not closed
	run -0 cnt-project -d closed.json -b acme-league -w views --season w44 --sealed sealed --now "$SEAL_AT" "$F/buckets.avro"
	# --sealed naming a directory that is not one
	run -2 cnt-project -d "$DEFS" -b acme-league -w views2 --season w43 --sealed nowhere --now "$SEAL_AT" "$F/buckets.avro"
	[ "$output" = "cnt-project: 'nowhere' is not a sealed directory (it does not exist)" ]
}

@test "an event of the closed season admitted after sealing is late: counted in the late columns, the standings unchanged" {
	close43
	ev k9 m-c 50000 2026-10-25T20:00:00Z | ing 2026-10-28T01:00:00Z late.avro
	cnt-window -d "$DEFS" --stats base.json -o /dev/null "$F/log.avro"
	cnt-dedup -d "$DEFS" "$F/log.avro" late.avro | cnt-window -d "$DEFS" --stats wst.json | cnt-accumulate -o all.avro
	[ "$(jq '.late' wst.json)" -eq $(($(jq '.late' base.json) + 1)) ]
	cnt-cat all.avro | jq -e -s 'map(select(.member_ref == "m-c")) | .[] | select(.late_count == 1) | .late_sum == 50000'
	run -0 --separate-stderr cnt-seal correct -d "$DEFS" --season w43 --sealed sealed \
		--retractions "$F/empty-retractions.jsonl" --now 2026-10-28T02:00:00Z all.avro
	[ -z "$output" ]
	[ "$stderr" = "cnt-seal: season 'w43': no standing differs from those published; nothing published" ]
	[ "$(wc -l <sealed/ledger.jsonl)" -eq 1 ]
}

@test "a retraction after closure: corrections published beside the sealed file, which stays byte for byte" {
	close43
	cp sealed/w43/global/standings.jsonl sealed.copy
	run -0 --separate-stderr cnt-seal correct -d "$DEFS" --season w43 --sealed sealed \
		--retractions "$F/retractions.jsonl" --now 2026-10-28T10:00:00Z --stats st.json -v "$F/revised.avro"
	[ "$stderr" = "cnt-seal: corrections 'sealed/w43/global/corrections-000001.jsonl': 5 records" ]
	cmp sealed.copy sealed/w43/global/standings.jsonl
	rid=$(jq -r .retraction_id "$F/retractions.jsonl")
	run -0 jq -r '[.member_ref, .change, .prior_value, .prior_rank, .revised_value, .revised_rank] | @tsv' \
		sealed/w43/global/corrections-000001.jsonl
	[ "$output" = "$(printf 'm-b\trank\t7000\t2\t7000\t1\nm-d\trank\t6500\t3\t6500\t2\nm-c\trank\t6000\t4\t6000\t3\nm-a\trank\t5000\t5\t5000\t4\nm-cheat\tremoved\t90000\t1\t\t')" ]
	jq -e -s --arg r "$rid" 'all(.[]; .retraction_ids == [$r] and .season_id == "w43"
		and .published_at == "2026-10-28T10:00:00.000Z" and (.correction_id | test("^c-[0-9a-f]{32}$")))' \
		sealed/w43/global/corrections-000001.jsonl
	jq -e -s --arg r "$rid" '.[1] | .kind == "corrections" and .seq == 1 and .records == 5
		and .retraction_ids == [$r] and (.retractions_head | test("^[0-9a-f]{32}$"))' sealed/ledger.jsonl
	jq -e '.command == "correct" and .files == 1 and .out == 5' st.json
	# the merged compensations alone (before --rebuild) already give the same exact sums
	cnt-seal verify --sealed sealed
	# what a reward service reads
	run -0 cnt-seal show --season w43 --sealed sealed
	[ "$(echo "$output" | jq -c '[.member_ref, .final_rank, .rank, (.corrections | length)]' | paste -sd' ')" = \
		'["m-cheat",1,null,1] ["m-b",2,1,1] ["m-d",3,2,1] ["m-c",4,3,1] ["m-a",5,4,1]' ]
	run -0 cnt-seal show --season w43 --sealed sealed -F table
	[ "${lines[0]}" = "season w43 board acme-league scope global sealed 2026-10-28T00:00:00.000Z, 1 correction" ]
	[[ ${lines[2]} =~ ^\ +1\ +90000\ +-\ +-\ +1\ \ m-cheat$ ]]
	[[ ${lines[3]} =~ ^\ +2\ +7000\ +1\ +7000\ +1\ \ m-b$ ]]
}

@test "a unique board's season: every standing is an estimate with its bound at 95 %, sealed, shown and tabled" {
	# acme/visitors: distinct visitors per member (unique, precision 14);
	# its bound is ceil(1.96 * 1.04 / sqrt(2^14) * U): 1 for U = 3 and U = 1
	jq '.counters += [{tenant_id: "acme", counter_id: "visitors", versions: [{version: 1, type: "unique",
		lateness_horizon_s: 172800, windows: ["all_time", "season"]}]}]
	| .leaderboards += [{board_id: "acme-visitors", tenant_id: "acme", counter_id: "visitors", window: "season",
		scope_kind: "global", tie_break: ["member_ref_asc"], rank_numbering: "competition",
		materialised_cap: 100, freshness_budget_s: 60}]
	| .seasons += [{season_id: "v43", board_id: "acme-visitors", opens_at: "2026-10-19T00:00:00",
		closes_at: "2026-10-26T00:00:00", timezone: "Europe/Berlin", state: "open"}]' "$DEFS" >vdefs.json
	for i in 1 2 3; do
		printf '{"idempotency_key":"v%s","tenant_id":"acme","counter_id":"visitors","member_ref":"m-a","item":"u%s","delta":1,"event_time":"2026-10-20T10:00:00Z"}\n' "$i" "$i"
	done >v.jsonl
	printf '{"idempotency_key":"v9","tenant_id":"acme","counter_id":"visitors","member_ref":"m-b","item":"u1","delta":1,"event_time":"2026-10-21T10:00:00Z"}\n' >>v.jsonl
	cnt-ingest -d vdefs.json --now 2026-10-22T00:00:00Z --max-past 400d -o v.avro v.jsonl
	cnt-dedup -d vdefs.json v.avro | cnt-window -d vdefs.json | cnt-accumulate -o vb.avro
	run -0 cnt-seal close -d vdefs.json --season v43 --sealed sealed --now "$SEAL_AT" vb.avro
	jq -e -s 'map([.member_ref, .final_value, .final_rank, .estimate, .final_error]) ==
		[["m-a", 3, 1, true, 1], ["m-b", 1, 2, true, 1]]' sealed/v43/global/standings.jsonl
	run -0 cnt-seal show --season v43 --sealed sealed
	echo "$output" | jq -e -s 'map([.member_ref, .estimate, .final_error]) == [["m-a", true, 1], ["m-b", true, 1]]'
	run -0 cnt-seal show --season v43 --sealed sealed -F table
	[[ ${lines[2]} =~ ^\ +1\ +~3\ \+-1\ +1\ +3\ +0\ \ m-a$ ]]
	cnt-seal verify --sealed sealed
	# an exact board's standings stay as they were: no estimate, no bound
	close43
	jq -e -s 'all(.[]; has("estimate") == false and has("final_error") == false)' sealed/w43/global/standings.jsonl
}

@test "correct is idempotent: the same retractions again publish nothing; corrections chain onto corrections" {
	close43
	cnt-seal correct -d "$DEFS" --season w43 --sealed sealed --retractions "$F/retractions.jsonl" \
		--now 2026-10-28T10:00:00Z "$F/revised.avro"
	cp -a sealed before
	run -0 --separate-stderr cnt-seal correct -d "$DEFS" --season w43 --sealed sealed \
		--retractions "$F/retractions.jsonl" --now 2026-10-28T11:00:00Z "$F/revised.avro"
	[ "$stderr" = "cnt-seal: season 'w43': no standing differs from those published; nothing published" ]
	diff -r before sealed
	# the merged compensations give the same exact sums as the rebuild: nothing new either
	run -0 cnt-seal correct -d "$DEFS" --season w43 --sealed sealed \
		--retractions "$F/retractions.jsonl" --now 2026-10-28T11:00:00Z "$F/merged.avro"
	diff -r before sealed
	# a second retraction (m-d, deleted) publishes corrections-000002, naming only it
	cp "$F/retractions.jsonl" r-all.jsonl
	cnt-retract --member m-d --tenant acme --counter distance_m --cause deleted --requester ts-7 \
		--authority gdpr-17 --ledger r-all.jsonl --now 2026-10-29T09:00:00Z -o comp2.avro "$F/log.avro" "$F/comp.avro"
	cnt-retract --rebuild "$F/revised.avro" -d "$DEFS" -o rev2.avro "$F/log.avro" "$F/comp.avro" comp2.avro
	run -0 cnt-seal correct -d "$DEFS" --season w43 --sealed sealed --retractions r-all.jsonl \
		--now 2026-10-29T10:00:00Z rev2.avro
	r2=$(jq -r -s '.[1].retraction_id' r-all.jsonl)
	jq -e -s --arg r "$r2" '.[2].seq == 2 and .[2].retraction_ids == [$r]' sealed/ledger.jsonl
	run -0 jq -r '[.member_ref, .change, .prior_rank, .revised_rank] | @tsv' sealed/w43/global/corrections-000002.jsonl
	[ "$output" = "$(printf 'm-c\trank\t3\t2\nm-a\trank\t4\t3\nm-d\tremoved\t2\t')" ]
	run -0 cnt-seal show --season w43 --sealed sealed
	[ "$(echo "$output" | jq -c 'select(.member_ref == "m-a") | [.final_rank, .rank, [.corrections[].revised_rank]]')" = '[5,3,[4,3]]' ]
	cnt-seal verify --sealed sealed
}

# retract_md: m-d's ride retracted by its event id alone (no --tenant or
# --counter) into r-all.jsonl, as its third record; comp2.avro
retract_md() {
	cnt-retract --event "$(cnt-cat "$F/log.avro" | jq -r 'select(.member_ref == "m-d") | .event_id')" \
		--cause deleted --requester ts-7 --authority gdpr-17 --ledger r-all.jsonl --now 2026-10-29T09:00:00Z \
		-o comp2.avro "$F/log.avro" "$F/comp.avro"
}

# correct_again: the touched buckets counted again without the retracted
# rides, then corrections 2, which must cite r-all.jsonl's third record alone
correct_again() {
	cnt-retract --rebuild "$F/revised.avro" -d "$DEFS" -o rev2.avro "$F/log.avro" "$F/comp.avro" comp2.avro
	run -0 cnt-seal correct -d "$DEFS" --season w43 --sealed sealed --retractions r-all.jsonl \
		--now 2026-10-29T10:00:00Z rev2.avro
	r2=$(jq -r -s '.[2].retraction_id' r-all.jsonl)
	jq -e -s --arg r "$r2" '.[2].seq == 2 and .[2].retraction_ids == [$r]' sealed/ledger.jsonl
	jq -e -s --arg r "$r2" 'all(.[]; .retraction_ids == [$r])' sealed/w43/global/corrections-000002.jsonl
}

@test "correct cites a retraction made without --tenant only on the boards of the counters it retracted" {
	close43
	cnt-seal correct -d "$DEFS" --season w43 --sealed sealed --retractions "$F/retractions.jsonl" \
		--now 2026-10-28T10:00:00Z "$F/revised.avro"
	# two event retractions by event id, no --tenant or --counter: one of an
	# acme/steps event (another board's), one of m-d's ride
	printf '{"idempotency_key":"s1","tenant_id":"acme","counter_id":"steps","member_ref":"m-a","delta":900,"event_time":"2026-10-20T10:00:00Z"}\n' |
		ing 2026-10-20T11:00:00Z steps.avro
	cp "$F/retractions.jsonl" r-all.jsonl
	cnt-retract --event "$(cnt-cat steps.avro | jq -r .event_id)" --cause dq --requester ts-7 \
		--authority case-9 --ledger r-all.jsonl --now 2026-10-29T08:00:00Z -o comp-steps.avro steps.avro
	retract_md
	# each record lists the counters of the events it retracted
	jq -e -s '.[1].selector == {} and .[1].counters == [{tenant_id: "acme", counter_id: "steps"}]
		and .[2].selector == {} and .[2].counters == [{tenant_id: "acme", counter_id: "distance_m"}]' r-all.jsonl
	correct_again
	# a ledger line whose counters are not a list of {tenant_id, counter_id}: refused, nothing published
	cp -a sealed before
	jq -c '.counters = "acme"' "$F/retractions.jsonl" >bad-r.jsonl
	run -2 cnt-seal correct -d "$DEFS" --season w43 --sealed sealed --retractions bad-r.jsonl \
		--now 2026-10-29T11:00:00Z rev2.avro
	[ "$output" = "cnt-seal: retraction ledger 'bad-r.jsonl' line 1: \"counters\" is not a list of objects with a tenant_id and a counter_id" ]
	diff -r before sealed
}

@test "correct never cites a cnt-hold reject: the held events were never counted, so no board changed" {
	close43
	cnt-seal correct -d "$DEFS" --season w43 --sealed sealed --retractions "$F/retractions.jsonl" \
		--now 2026-10-28T10:00:00Z "$F/revised.avro"
	# a ride over a rate ceiling is held at ingest (definitions with a hold
	# signal on distance_m), then rejected: a fraud record in the ledger
	jq '(.counters[] | select(.tenant_id == "acme" and .counter_id == "distance_m")).holds =
		[{signal: "rate", window_s: 600, ceiling: 100000}]' "$DEFS" >hdefs.json
	ev k9 m-h 200000 2026-10-24T10:00:00Z |
		cnt-ingest -d hdefs.json --now 2026-10-24T11:00:00Z --max-past 400d -o h.avro --holds holds.avro --rejects /dev/null -
	[ "$(cnt-cat holds.avro | jq -r .member_ref)" = m-h ]
	cp "$F/retractions.jsonl" r-all.jsonl
	cnt-hold reject --decisions dec.jsonl --ledger r-all.jsonl --by ts-7 --authority case-9 \
		--now 2026-10-29T08:00:00Z --signal rate holds.avro
	r1=$(jq -r -s '.[1].retraction_id' r-all.jsonl)
	jq -e -s '.[1].cause == "fraud" and .[1].counters == []' r-all.jsonl
	# then m-d's ride is retracted: the next corrections cite it alone
	retract_md
	correct_again
	! grep -q "$r1" sealed/ledger.jsonl sealed/w43/global/corrections-*.jsonl
	cnt-seal verify --sealed sealed
}

@test "a member_ref the standings cannot name (not UTF-8, from files no cnt tool wrote): status 2, nothing published" {
	{ ev b1 m-ok 100 2026-10-20T10:00:00Z; ev b2 m-bad 200 2026-10-20T11:00:00Z; } |
		cnt-ingest -d "$DEFS" --now 2026-10-20T12:00:00Z -c deflate -o clean.avro --rejects /dev/null -
	# Debian's python3-avro writes it again with m-bad's member_ref as the
	# bytes "m-\xff" (a bytes field, which readers take as a string)
	"$PY" "$ROOT/tests/data/core/avro-poke.py" clean.avro bad.avro --bytes member_ref b2 member_ref 'b"m-\xff"'
	count bad-buckets.avro bad.avro
	msg="member_ref 'm-\\xff' in the bucket files is not UTF-8 text without NUL bytes, which the standings cannot name (bucket files no cnt tool wrote?); nothing published"
	run -2 --separate-stderr cnt-seal close -d "$DEFS" --season w43 --sealed sealed --now "$SEAL_AT" bad-buckets.avro
	[ "$stderr" = "cnt-seal: scope 'global': $msg" ]
	[ ! -e sealed/ledger.jsonl ] && [ ! -e sealed/w43 ]
	# corrections from revised buckets holding it: refused, the seal unchanged
	close43
	cp -a sealed before
	cnt-accumulate -o revised.avro "$F/revised.avro" bad-buckets.avro
	run -2 --separate-stderr cnt-seal correct -d "$DEFS" --season w43 --sealed sealed \
		--retractions "$F/retractions.jsonl" --now 2026-10-28T10:00:00Z revised.avro
	[ "$stderr" = "cnt-seal: scope 'global': $msg" ]
	diff -r before sealed
}

@test "correct refuses a season that is not sealed, and changes no retraction accounts for" {
	run -2 cnt-seal correct -d "$DEFS" --season w43 --sealed sealed --retractions "$F/retractions.jsonl" \
		--now 2026-10-28T10:00:00Z "$F/revised.avro"
	[ "$output" = "cnt-seal: season 'w43' is not sealed in 'sealed': run cnt-seal close first" ]
	close43
	cp -a sealed before
	run -2 cnt-seal correct -d "$DEFS" --season w43 --sealed sealed --retractions "$F/empty-retractions.jsonl" \
		--now 2026-10-28T10:00:00Z "$F/revised.avro"
	[[ $output == "cnt-seal: season 'w43' scope 'global': 5 standings differ from those published, but the retraction ledger has no retraction of acme/distance_m"* ]]
	diff -r before sealed
}

# flip FILE OFFSET: inverts the bits of one byte.
flip() {
	"$PY" -c 'import sys
p, o = sys.argv[1], int(sys.argv[2])
b = bytearray(open(p, "rb").read()); b[o] ^= 0x01; open(p, "wb").write(b)' "$1" "$2"
}

@test "verify: one flipped byte in any published file, the ledger or its head is found and named" {
	close43
	cnt-seal correct -d "$DEFS" --season w43 --sealed sealed --retractions "$F/retractions.jsonl" \
		--now 2026-10-28T10:00:00Z "$F/revised.avro"
	cp -a sealed good
	local f n o bad=""
	for f in w43/global/standings.jsonl w43/global/corrections-000001.jsonl ledger.jsonl ledger.head; do
		n=$(stat -c %s "good/$f")
		for ((o = 0; o < n; o += 13)); do
			rm -rf sealed && cp -a good sealed
			flip "sealed/$f" "$o"
			run cnt-seal verify --sealed sealed
			if [ "$status" -ne 1 ] || [ "${#lines[@]}" -ne 1 ]; then
				bad="$bad$f byte $o: status $status: $output"$'\n'
			fi
		done
	done
	[ -z "$bad" ] || { printf '%s' "$bad"; return 1; }
	# the messages name what changed
	rm -rf sealed && cp -a good sealed && flip sealed/w43/global/standings.jsonl 40
	run -1 cnt-seal verify --sealed sealed
	[[ $output == "cnt-seal: 'sealed/w43/global/standings.jsonl' has changed since it was published: its digest is "*", seal ledger line 1 says "* ]]
	# show and correct refuse a changed file too (status 2)
	run -2 cnt-seal show --season w43 --sealed sealed
	[[ $output == *"has changed since it was published"* ]]
	rm -rf sealed && cp -a good sealed
	flip sealed/ledger.jsonl "$(grep -bo acme-league good/ledger.jsonl | head -n 1 | cut -d: -f1)"
	run -1 cnt-seal verify --sealed sealed
	[ "$output" = "cnt-seal: seal ledger 'sealed/ledger.jsonl' line 2: the hash chain is broken (\"prev\" is not the hash of line 1)" ]
	# the last line, which no later line covers: its head does
	rm -rf sealed && cp -a good sealed
	flip sealed/ledger.jsonl $(($(grep -bo '"retractions_head"' good/ledger.jsonl | cut -d: -f1) + 3))
	run -1 cnt-seal verify --sealed sealed
	[[ $output == "cnt-seal: seal ledger head 'sealed/ledger.head' does not match the ledger"* ]]
	# a lost last line
	rm -rf sealed && cp -a good sealed && head -n 1 good/ledger.jsonl >sealed/ledger.jsonl
	run -1 cnt-seal verify --sealed sealed
	# a file removed, a file added
	rm -rf sealed && cp -a good sealed && rm sealed/w43/global/corrections-000001.jsonl
	run -1 cnt-seal verify --sealed sealed
	[[ $output == *"corrections-000001.jsonl' (seal ledger line 2): No such file or directory" ]]
	rm -rf sealed && cp -a good sealed && echo '{}' >sealed/w43/global/corrections-000002.jsonl
	run -1 cnt-seal verify --sealed sealed
	[ "$output" = "cnt-seal: 'sealed/w43/global/corrections-000002.jsonl' is not in the seal ledger (an interrupted run, or a file put there): it is not published" ]
	# every other command refuses a damaged ledger with status 2
	rm -rf sealed && cp -a good sealed && flip sealed/ledger.jsonl 20
	run -2 cnt-seal show --season w43 --sealed sealed
	run -2 close43
	run -2 cnt-project -d "$DEFS" -b acme-league -w views --season w43 --sealed sealed --now "$SEAL_AT" "$F/buckets.avro"
}

@test "hostile sealed directories and ledgers: a clear error, no crash" {
	local g
	mkdir d && cd d
	run -2 cnt-seal verify --sealed nowhere
	[ "$output" = "cnt-seal: 'nowhere' is not a sealed directory (it does not exist)" ]
	mkdir empty
	run -2 cnt-seal show --season w43 --sealed empty
	[ "$output" = "cnt-seal: 'empty' is not a sealed directory (it has no ledger.jsonl)" ]
	for g in 'not json' '[1,2]' '{"prev":"00000000000000000000000000000000"}' \
		'{"kind":"standings","season_id":"w43","board_id":"b","scope":"global","file":"../../etc/passwd","records":1,"digest":"00000000000000000000000000000000","sealed_at":"2026-10-28T00:00:00.000Z","prev":"00000000000000000000000000000000"}' \
		'{"kind":"standings","season_id":"w43","board_id":"b","scope":"global","file":"w43/global/standings.jsonl","records":-1,"digest":"00000000000000000000000000000000","sealed_at":"2026-10-28T00:00:00.000Z","prev":"00000000000000000000000000000000"}' \
		'{"kind":"corrections","season_id":"w43","board_id":"b","scope":"global","file":"w43/global/corrections-000001.jsonl","seq":1,"records":0,"digest":"00000000000000000000000000000000","published_at":"2026-10-28T00:00:00.000Z","retraction_ids":[],"prev":"00000000000000000000000000000000"}' \
		'{"kind":"standings","season_id":"w43","board_id":"b","scope":"global","file":"w43/global/standings.jsonl","records":0,"digest":"zz","sealed_at":"x","prev":"00000000000000000000000000000000"}'; do
		rm -rf s && mkdir s && printf '%s\n' "$g" >s/ledger.jsonl
		run cnt-seal verify --sealed s
		[ "$status" -eq 1 ] && [ "${#lines[@]}" -eq 1 ] && [[ $output == "cnt-seal: seal ledger 's/ledger.jsonl' line 1: "* ]] ||
			{ echo "verify of '$g': $status $output"; return 1; }
		run cnt-seal show --season w43 --sealed s
		[ "$status" -eq 2 ] && [[ $output == "cnt-seal: seal ledger 's/ledger.jsonl' line 1: "* ]] ||
			{ echo "show of '$g': $status $output"; return 1; }
	done
	# a torn last line, binary garbage, an empty ledger without a head (nothing sealed)
	rm -rf s && mkdir s && printf '{"kind":"standings"' >s/ledger.jsonl
	run -1 cnt-seal verify --sealed s
	[ "$output" = "cnt-seal: seal ledger 's/ledger.jsonl' line 1: no newline at the end (an interrupted append?)" ]
	head -c 3000 /dev/urandom >s/ledger.jsonl
	run -1 cnt-seal verify --sealed s
	: >s/ledger.jsonl
	run -0 cnt-seal verify --sealed s
	run -2 cnt-seal show --season w43 --sealed s
	[ "$output" = "cnt-seal: season 'w43' is not sealed in 's'" ]
	# the retraction ledger given to correct is checked as well
	cd .. && close43
	printf '{"retraction_id":"r-1","prev":"11111111111111111111111111111111"}\n' >bad-r.jsonl
	run -2 cnt-seal correct -d "$DEFS" --season w43 --sealed sealed --retractions bad-r.jsonl "$F/revised.avro"
	[ "$output" = "cnt-seal: retraction ledger 'bad-r.jsonl' line 1: \"prev\" is not 32 zeros (not the first line?)" ]
	printf '{"selector":{},"prev":"00000000000000000000000000000000"}\n' >bad-r.jsonl
	run -2 cnt-seal correct -d "$DEFS" --season w43 --sealed sealed --retractions bad-r.jsonl "$F/revised.avro"
	[ "$output" = "cnt-seal: retraction ledger 'bad-r.jsonl' line 1: neither a retraction_id nor an erasure_id" ]
	# a kind that is not a retraction's or an erasure's is refused, as cnt-retract refuses it, not cited
	printf '{"kind":"other","retraction_id":"r-1","prev":"00000000000000000000000000000000"}\n' >bad-r.jsonl
	run -2 cnt-seal correct -d "$DEFS" --season w43 --sealed sealed --retractions bad-r.jsonl "$F/revised.avro"
	[ "$output" = "cnt-seal: retraction ledger 'bad-r.jsonl' line 1: a record of an unknown kind" ]
	# a sealed file that is not JSON lines but matches its digest is caught by the unit tests
	# (tests/unit/test_seal.c), which can forge the digests
}

@test "scoped boards: every scope sealed, or one with --scope; ids with quotes and backslashes" {
	printf '%s\n' 'member_ref,scope' 'm-a,north' 'm-b,south' 'm-c,north' 'm-cheat,south' 'm-d,q"u\o' >scopes.csv
	run -0 cnt-seal close -d "$DEFS" --season c43 --sealed sealed --now "$SEAL_AT" --scopes scopes.csv \
		--scope north --stats st.json "$F/buckets.avro"
	jq -e '.published | length == 1 and .[0].scope == "north" and .[0].records == 2' st.json
	run -0 jq -r -s 'map(.member_ref) | join(",")' sealed/c43/north/standings.jsonl
	[ "$output" = "m-c,m-a" ]
	run -2 cnt-seal close -d "$DEFS" --season c43 --sealed sealed --now "$SEAL_AT" --scopes scopes.csv "$F/buckets.avro"
	[[ $output == *"scope 'north' is already sealed"* ]]
	run -0 cnt-seal close -d "$DEFS" --season c43 --sealed sealed --now "$SEAL_AT" --scopes scopes.csv \
		--scope south "$F/buckets.avro"
	run -0 cnt-seal close -d "$DEFS" --season c43 --sealed sealed --now "$SEAL_AT" --scopes scopes.csv \
		--scope 'q"u\o' --stats st2.json "$F/buckets.avro"
	jq -e '.published[0].scope == "q\"u\\o"' st2.json
	run -2 cnt-seal close -d "$DEFS" --season c43 --sealed sealed --now "$SEAL_AT" --scopes scopes.csv \
		--scope west "$F/buckets.avro"
	[ "$output" = "cnt-seal: season 'c43' has no member in scope 'west'" ]
	# a scope name that is not UTF-8 (it was "out of memory"), refused as the
	# scopes are read: nothing published
	printf 'member_ref,scope\nm-a,we\377st\n' >bad-scopes.csv
	cp -a sealed before
	run -2 cnt-seal close -d "$DEFS" --season c43 --sealed sealed --now "$SEAL_AT" --scopes bad-scopes.csv "$F/buckets.avro"
	[ "$output" = "cnt-seal: 'bad-scopes.csv' line 2: the scope is not UTF-8 text" ]
	diff -r before sealed
	cnt-seal verify --sealed sealed
	run -0 cnt-seal show --season c43 --sealed sealed --scope 'q"u\o'
	[ "$(echo "$output" | jq -r .scope)" = 'q"u\o' ]
	[ "$(jq -r .file sealed/ledger.jsonl | paste -sd' ')" = 'c43/north/standings.jsonl c43/south/standings.jsonl c43/q%22u%5Co/standings.jsonl' ]
	# a scope holding control characters: escaped in the JSON, \xNN in the table
	printf 'm-a,c\001t\033l\n' >ctl.csv
	run -0 cnt-seal close -d "$DEFS" --season c43 --sealed ctl --now "$SEAL_AT" --scopes ctl.csv --stats st3.json \
		"$F/buckets.avro"
	jq -e '.published[0].scope == "c\u0001t\u001bl"' st3.json
	run -0 cnt-seal show --season c43 --sealed ctl
	[ "$(echo "$output" | jq -c '[.scope, .member_ref]')" = '["c\u0001t\u001bl","m-a"]' ]
	[ "$(jq -r .file ctl/ledger.jsonl)" = 'c43/c%01t%1Bl/standings.jsonl' ]
	run -0 cnt-seal show --season c43 --sealed ctl -F table
	[ "${lines[0]}" = 'season c43 board acme-cohorts scope c\x01t\x1bl sealed 2026-10-28T00:00:00.000Z, 0 corrections' ]
	cnt-seal verify --sealed ctl
	# a global board has the one scope 'global'
	run -2 close43 --scope north
	[ "$output" = "cnt-seal: board 'acme-league' is global: its one scope is 'global', not 'north'" ]
}

@test "usage: a command first, its required options, strict values" {
	run -2 cnt-seal --season w43 --sealed s
	[[ ${lines[0]} == "cnt-seal: a command is required first: close, correct, show or verify" ]]
	[[ ${lines[1]} == "usage: cnt-seal close "* ]]
	run -2 cnt-seal close --sealed s -d "$DEFS" "$F/buckets.avro"
	[ "${lines[0]}" = "cnt-seal: close needs --season id and --sealed dir" ]
	run -2 cnt-seal close --season w43 --sealed s
	[ "${lines[0]}" = "cnt-seal: close needs -d definitions and bucket files" ]
	run -2 cnt-seal correct -d "$DEFS" --season w43 --sealed s "$F/buckets.avro"
	[ "${lines[0]}" = "cnt-seal: correct needs --retractions ledger" ]
	run -2 cnt-seal verify
	[ "${lines[0]}" = "cnt-seal: verify needs --sealed dir" ]
	run -2 cnt-seal show --season w43 --sealed s -F csv
	[ "${lines[0]}" = "cnt-seal: --output-format: 'csv' is not json or table" ]
	run -2 cnt-seal verify --sealed s extra
	run -2 cnt-seal close -d "$DEFS" --season nope --sealed s --now "$SEAL_AT" "$F/buckets.avro"
	[ "$output" = "cnt-seal: season 'nope' is not declared in '$DEFS'" ]
	run -2 cnt-seal close -d "$DEFS" --season w43 --sealed s --now 2026-13-01T00:00:00Z "$F/buckets.avro"
	# options may follow the operands
	run -0 cnt-seal close "$F/buckets.avro" -d "$DEFS" --season w43 --sealed s --now "$SEAL_AT"
	run -0 cnt-seal verify --sealed s
}

@test "the seal records the fingerprints it was counted under; buckets of a version edited in place are refused" {
	close43
	# the ledger line names the board's and the counter version's definitions
	jq -e 'select(.kind == "standings") | .fingerprints | type == "object" and length >= 2' sealed/ledger.jsonl
	[ "$(jq -r 'select(.kind == "standings") | .fingerprints | keys[]' sealed/ledger.jsonl | grep -c 'distance_m')" -ge 1 ]
	[ "$(jq -r 'select(.kind == "standings") | .fingerprints | keys[]' sealed/ledger.jsonl | grep -c 'acme-league')" -ge 1 ]
	# the same buckets under an edited version (type exact -> max): refused
	jq '(.counters[] | select(.counter_id == "distance_m") | .versions[0].type) = "max"' "$DEFS" >edited.json
	run -2 cnt-seal close -d edited.json --season w43 --sealed s2 --now "$SEAL_AT" "$F/buckets.avro"
	[[ $output == *"acme/distance_m v1: type exact → max; a change that reinterprets counted events needs a new version"* ]]
	[ ! -e s2/ledger.jsonl ]
}
