#!/usr/bin/env bats
# Fast and verified counts, and the display guard: cnt-project --verified
# (the count after the latest audit, up to its watermark, with its fraud
# retractions), cnt-rank saying which count every answer is from, and
# cnt-rank --guard (a displayed count that only a verified value lowers).
#
# The data (worked by hand): tenant plat (UTC), counter views, one view per
# (viewer, video).  Day 1 (2026-06-08, admitted 2026-06-09T00:30Z): v1 seen
# by u1..u5 at 10:1x and by bot1..bot3 at 11:0x; v2 seen by u1 at 12:00.
# Day 2 (admitted 02:00Z): v1 seen by u6, u7 at 01:00 and 01:30 on 06-09.
# The audit (through 2026-06-09T00:00Z) retracts the three bot views with
# cause fraud.  So: fast v1 = 10 (8 before day 2); verified v1 = 5, v2 = 1;
# the fast count after the retraction is 7.

bats_require_minimum_version 1.5.0

VD="$BATS_TEST_DIRNAME/data/verified"
DEFS="$VD/defs.json"
PY=/usr/bin/python3
W1=1780963200000          # 2026-06-09T00:00:00Z, the audit's watermark
NOW=2026-06-09T04:00:00Z

ev() {
	printf '{"idempotency_key":"%s","tenant_id":"%s","counter_id":"views","member_ref":"%s","delta":1,"item":"%s","event_time":"%s"}\n' \
		"$1" "${5:-plat}" "$2" "$3" "$4"
}

ingest() { cnt-ingest -d "$DEFS" --now "$1" --max-past 400d -o "$2" "$3"; }
count() { cnt-dedup -d "$DEFS" "$@" | cnt-window -d "$DEFS" | cnt-accumulate -o "$OUT"; }

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	{
		for i in 1 2 3 4 5; do ev k$i v1 u$i 2026-06-08T10:1$i:00Z; done
		for i in 1 2 3; do ev b$i v1 bot$i 2026-06-08T11:0$i:00Z; done
		ev k9 v2 u1 2026-06-08T12:00:00Z
	} >day1.jsonl
	{ ev k6 v1 u6 2026-06-09T01:00:00Z; ev k7 v1 u7 2026-06-09T01:30:00Z; } >day2.jsonl
	head -n 3 day1.jsonl >part.jsonl
	ingest 2026-06-09T00:30:00Z log1.avro day1.jsonl
	ingest 2026-06-09T02:00:00Z log2.avro day2.jsonl
	ingest 2026-06-09T00:30:00Z logp.avro part.jsonl
	cnt-retract --event b1 --event b2 --event b3 --tenant plat --counter views --cause fraud \
		--requester ivt --authority "ivt-audit test" --ledger retractions.jsonl --now 2026-06-09T03:00:00Z \
		-o comp.avro log1.avro log2.avro
	"$PY" "$VD/audit.py" audits.jsonl plat views $W1 "$(jq -r .retraction_id retractions.jsonl)"
	OUT=fast10.avro count log1.avro log2.avro          # v1 10
	OUT=fast8.avro count log1.avro                     # v1 8
	OUT=fast3.avro count logp.avro                     # v1 3
	OUT=after.avro count log1.avro log2.avro comp.avro # v1 7 fast, 5 verified
}

setup() {
	set -o pipefail
	cd "$BATS_TEST_TMPDIR"
	F=$BATS_FILE_TMPDIR
}

project() { cnt-project -d "$DEFS" -b plat-views -w V --now "$NOW" "$@"; }
rank() { cnt-rank -w V -b plat-views --now "$NOW" "$@"; }

# serve BUCKETS [--verified]: builds the fast (or verified) view from
# BUCKETS and prints the guarded display value of v1.
serve() {
	local b=$1
	shift
	if [ "${1:-}" = --verified ]; then
		project --verified "$F/audits.jsonl" "$F/$b" >/dev/null
	else
		project "$F/$b" >/dev/null
	fi
	rank --guard G --stats st.json "$@" value v1 >ans.json
	jq -r .value ans.json
}

@test "the verified view ignores events after the watermark, reflects the fraud retractions, and sits beside the fast one" {
	run -0 project "$F/after.avro"
	run -0 project --verified "$F/audits.jsonl" --stats st.json "$F/after.avro"
	[ -z "$output" ]
	jq -e '.verified == true and .members == 2 and .scopes[0].version == 1 and .scopes[0].published' st.json
	[ -L V/plat-views/global/current ] && [ -L V/plat-views/global/verified/current ]
	[ -f V/plat-views/global/v000001/index.bin ] && [ -f V/plat-views/global/verified/v000001/index.bin ]
	cnt-cat --meta V/plat-views/global/verified/v000001/view.avro | jq -c '.metadata["cnt.view"] | fromjson' >d.json
	jq -e --argjson w $W1 '.verified == true and .audit_id == "a-test-1" and .as_of == $w and
		.log_position.max_ingest_time == $w and .window.to == $w' d.json
	# a fast view has neither key
	cnt-cat --meta V/plat-views/global/v000001/view.avro | jq -e '.metadata["cnt.view"] | fromjson |
		has("verified") == false and has("audit_id") == false'
	run -0 rank value v1
	echo "$output" | jq -e '.verified == false and .value == 7 and .as_of == "2026-06-09T02:00:00.000Z"'
	run -0 rank --verified value v1
	echo "$output" | jq -e --argjson w $W1 '.verified == true and .audit_id == "a-test-1" and .value == 5 and .as_of_ms == $w'
	run -0 rank --verified top 5
	echo "$output" | jq -e '[.entries[] | [.member_ref, .value]] == [["v1", 5], ["v2", 1]]'
	# buckets without the compensations: the fraud is still in them (the
	# verified view is only as good as the buckets it is given)
	run -0 project --verified "$F/audits.jsonl" "$F/fast10.avro"
	run -0 rank --verified value v1
	echo "$output" | jq -e '.value == 8 and .version == 2'
}

@test "a verified view is pinned by its own token (cnt1v) and answers conditional reads" {
	project --verified "$F/audits.jsonl" "$F/fast10.avro"
	tok=$(rank --verified value v1 | jq -r 'select(.value == 8) | .token')
	[[ $tok =~ ^cnt1v:plat-views:global:1:[0-9a-f]{16}$ ]]
	run -6 rank --verified --if-newer "$tok" value v1
	[ -z "$output" ]
	project --verified "$F/audits.jsonl" "$F/after.avro"
	rank --verified value v1 | jq -e '.version == 2 and .value == 5'
	rank --verified --pin "$tok" value v1 | jq -e '.version == 1 and .value == 8 and .verified == true'
	rank --verified --if-newer "$tok" value v1 | jq -e '.version == 2'
	# the verified token is not the fast count's, and the reverse
	project "$F/after.avro"
	ftok=$(rank top 1 | jq -r .token)
	run -2 rank --pin "$tok" top 1
	[ "${lines[0]}" = "cnt-rank: --pin: the token pins the verified count: add --verified" ]
	run -2 rank --verified --if-newer "$ftok" top 1
}

@test "a newer audit moves the watermark: the verified count covers more of the archive" {
	cp "$F/audits.jsonl" a.jsonl
	"$PY" "$VD/audit.py" a.jsonl plat views $((W1 + 2 * 3600000))
	run -0 project --verified a.jsonl "$F/after.avro"
	run -0 rank --verified value v1
	echo "$output" | jq -e '.value == 7 and .as_of == "2026-06-09T02:00:00.000Z" and .audit_id == "a-test-2"'
}

@test "every answer says which count it is, in JSON and in the table" {
	project "$F/after.avro" >/dev/null
	project --verified "$F/audits.jsonl" "$F/after.avro" >/dev/null
	for q in "top 2" "rank v1" "around v1 1" "value v1" verify; do
		rank $q | jq -e '.verified == false and .as_of == "2026-06-09T02:00:00.000Z" and has("audit_id") == false'
		rank --verified $q | jq -e '.verified == true and .as_of == "2026-06-09T00:00:00.000Z" and .audit_id == "a-test-1"'
	done
	rank verify | jq -e '.intact == true'
	run -2 --separate-stderr rank --verified --overlay "$F/log2.avro" value v1
	[ "${stderr%%$'\n'*}" = "cnt-rank: --overlay adds to the fast count: not with --verified" ]
	run -0 rank -F table top 1
	[ "${lines[0]}" = "board plat-views  scope global  version 1  as of 2026-06-09T02:00:00.000Z  STALE  fast count" ]
	run -0 rank --verified -F table value v1
	[ "${lines[0]}" = "board plat-views  scope global  version 1  as of 2026-06-09T00:00:00.000Z  STALE  verified count (audit a-test-1)" ]
	[ "${lines[1]}" = "v1: value 5" ]
	rank --verified --stats st.json value v1 >/dev/null
	jq -e '.verified == true and (has("clamped") | not)' st.json
}

@test "an answer never mixes the counts: a verified view in the fast place, and no verified view, are errors" {
	project "$F/after.avro" >/dev/null
	run -2 --separate-stderr rank --verified value v1
	[ "$stderr" = "cnt-rank: board 'plat-views' scope 'global' has no published verified view in 'V' (cnt-project --verified builds one)" ]
	project --verified "$F/audits.jsonl" "$F/after.avro" >/dev/null
	cnt-project -d "$DEFS" -b plat-views -w X --now "$NOW" --verified "$F/audits.jsonl" "$F/after.avro" >/dev/null
	mv X/plat-views/global/verified/* X/plat-views/global/
	run -2 --separate-stderr cnt-rank -w X -b plat-views --now "$NOW" value v1
	[ "$stderr" = "cnt-rank: X/plat-views/global/v000001: a verified view where the fast view belongs" ]
	# and a fast view in the verified place
	cp -r V/plat-views/global/v000001 V/plat-views/global/verified/v000002
	run -2 --separate-stderr rank --verified --view-version 2 value v1
	[[ $stderr == *"corrupt: it describes fast version 1"* ]]
}

@test "refusals: no audit of the pair, no ledger, a watermark inside a bucket, buckets short of the watermark, --verified with --publish" {
	"$PY" "$VD/audit.py" other.jsonl plat clicks $W1
	run -2 --separate-stderr project --verified other.jsonl "$F/after.avro"
	[ "$stderr" = "cnt-project: 'other.jsonl' has no audit of plat/views: there is no verified count yet" ]
	[ ! -e V ]
	run -2 --separate-stderr project --verified missing.jsonl "$F/after.avro"
	[[ $stderr == *missing.jsonl* ]]
	# 00:00Z is half past five in Kolkata: inside a local hour
	"$PY" "$VD/audit.py" kol.jsonl kol views $W1
	run -2 --separate-stderr cnt-project -d "$DEFS" -b kol-views -w V --now "$NOW" --verified kol.jsonl "$F/after.avro"
	[ "$stderr" = "cnt-project: audit 'a-test-1' of kol/views: its watermark 2026-06-09T00:00:00.000Z is not a bucket boundary in Asia/Kolkata, so a bucket would hold events on both sides of it (audit through a bucket boundary)" ]
	# the day-1 buckets end at ingest time 00:30: a watermark at 02:00 is past them
	"$PY" "$VD/audit.py" late.jsonl plat views $((W1 + 2 * 3600000))
	run -2 --separate-stderr project --verified late.jsonl "$F/fast8.avro"
	[ "$stderr" = "cnt-project: the buckets of plat/views end at ingest time 2026-06-09T00:30:00.000Z, before the audit's watermark 2026-06-09T02:00:00.000Z: events of the audited period may be missing from them" ]
	[ ! -e V ]
	run -2 --separate-stderr cnt-project -w V -b plat-views --verified "$F/audits.jsonl" --publish 1
	[ "${stderr%%$'\n'*}" = "cnt-project: --verified builds a view: not with --publish, --freeze or --unfreeze" ]
}

@test "the guard: fast up, fast down (clamped), verified down (served), fast up again (served), fast down below the verified floor (clamped)" {
	[ "$(serve fast8.avro)" = 8 ]
	jq -e '.guard == {clamped: false, reset: false, unguarded_value: 8, floor: null}' ans.json
	[ "$(serve fast10.avro)" = 10 ]                        # fast up
	jq -e '.verified == false and .guard.clamped == false and .guard.floor == 8' ans.json
	jq -e '.clamped == 0 and .guard_reset == 0' st.json
	[ "$(serve fast8.avro)" = 10 ]                         # fast down: clamped
	jq -e '.guard == {clamped: true, reset: false, unguarded_value: 8, floor: 10}' ans.json
	jq -e '.clamped == 1 and .verified == false' st.json
	[ "$(serve after.avro --verified)" = 5 ]               # verified down: served
	jq -e '.verified == true and .guard == {clamped: false, reset: true, unguarded_value: 5, floor: 10}' ans.json
	jq -e '.clamped == 0 and .guard_reset == 1 and .verified == true' st.json
	[ "$(serve fast3.avro)" = 5 ]                          # below the verified floor: 5, not the pre-purge 10
	jq -e '.guard == {clamped: true, reset: false, unguarded_value: 3, floor: 5}' ans.json
	[ "$(serve after.avro)" = 7 ]                          # fast up again: served
	jq -e '.guard.clamped == false and .guard.floor == 5' ans.json
	[ "$(serve fast3.avro)" = 7 ]                          # fast down below the verified floor: clamped
	jq -e '.guard == {clamped: true, reset: false, unguarded_value: 3, floor: 7}' ans.json
	jq -e '.clamped == 1' st.json
	# the file: one member, served 7, floor set by the audit at W1, 3 clamps
	[ "$(sed -n 2p G)" = "plat-views global v1 7 $W1 3" ]
	run -0 rank --guard G -F table value v1
	[ "${lines[1]}" = "v1: value 7 (guard: the view's 3 clamped to the last served)" ]
	# a member not in the view is 0 to the guard
	run -0 rank --guard G value nobody
	echo "$output" | jq -e '.found == false and .value == 0 and .guard.floor == null'
}

@test "the guard survives a rebuild of the views: dropped and projected again, the clamp still applies" {
	[ "$(serve fast10.avro)" = 10 ]
	cp G G.before
	rm -rf V
	[ "$(serve fast8.avro)" = 10 ]
	jq -e '.version == 1 and .guard.clamped == true' ans.json
	# and a restart is nothing more: every answer reads the file
	run -0 rank --guard G value v1
	echo "$output" | jq -e '.value == 10'
}

@test "a damaged guard file is an error, never a reset; the file is left as it was" {
	[ "$(serve fast10.avro)" = 10 ]
	project "$F/fast8.avro" >/dev/null
	sed -i 's/ 10 / 11 /' G
	cp G G.bad
	run -2 --separate-stderr rank --guard G value v1
	[ "$stderr" = "cnt-rank: guard 'G': damaged: the checksum does not match its contents" ]
	[ -z "$output" ]
	cmp G G.bad
	head -c 20 G.bad >G
	run -2 --separate-stderr rank --guard G value v1
	[ "$stderr" = "cnt-rank: guard 'G': damaged: the last line is cut short" ]
	: >G
	run -2 --separate-stderr rank --guard G value v1
	[ "$stderr" = "cnt-rank: guard 'G': damaged: empty" ]
	mkdir D
	run -2 --separate-stderr rank --guard D value v1
	[ "$stderr" = "cnt-rank: guard 'D': not a regular file" ]
}

@test "the guard serves a value of a board whose window does not move, and only the value question" {
	project "$F/after.avro" >/dev/null
	run -2 --separate-stderr rank --guard G top 3
	[ "${stderr%%$'\n'*}" = "cnt-rank: --guard serves the public display count: the value question, without --overlay" ]
	run -2 --separate-stderr rank --guard G --overlay "$F/log2.avro" value v1
	[ "${stderr%%$'\n'*}" = "cnt-rank: --guard serves the public display count: the value question, without --overlay" ]
	cnt-project -d "$DEFS" -b plat-day -w V --now 2026-06-08T20:00:00Z "$F/after.avro" >/dev/null
	run -2 --separate-stderr cnt-rank -w V -b plat-day --now 2026-06-08T20:00:00Z --guard G value v1
	[ "$stderr" = "cnt-rank: board 'plat-day' has a day window, whose counts drop as it moves: the guard only serves all_time, range and season boards" ]
	[ ! -e G ]
}

@test "guard keys and statistics with quotes, backslashes and control characters" {
	printf '%s\n' '{"idempotency_key":"w1","tenant_id":"plat","counter_id":"views","member_ref":"q\"b\\s\u0001x y","delta":1,"item":"u1","event_time":"2026-06-08T10:00:00Z"}' >w.jsonl
	ingest 2026-06-09T00:30:00Z w.avro w.jsonl
	cnt-dedup -d "$DEFS" w.avro | cnt-window -d "$DEFS" | cnt-accumulate -o wb.avro
	project wb.avro >/dev/null
	m=$(printf 'q"b\\s\001x y')
	run -0 rank --guard G --stats st.json value "$m"
	echo "$output" | jq -e --arg m "$m" '.member_ref == $m and .value == 1'
	jq -e '.tool == "cnt-rank" and .clamped == 0' st.json
	[ "$(sed -n 2p G)" = 'plat-views global q"b\s%01x%20y 1 - 0' ]
	rank --guard G value "$m" | jq -e '.value == 1 and .guard.floor == 1'
}

@test "a guard that cannot be written fails before anything is served" {
	project "$F/after.avro" >/dev/null
	run -2 --separate-stderr rank --guard nodir/G value v1
	[ -z "$output" ]
	[ "$stderr" = "cnt-rank: cannot create a file beside 'nodir/G': No such file or directory" ]
	[ ! -e nodir ]
}
