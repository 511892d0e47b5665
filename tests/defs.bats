#!/usr/bin/env bats
# Definitions that cannot change under counted data: cnt-defs check
# classifies every change per field (refused / compatible), files record the
# fingerprints of the versions they were counted under, and every tool that
# reads such a file with edited definitions refuses it (exit 2, one line
# naming counter, version and field).  A rebuild applies each event's own
# version.

bats_require_minimum_version 1.5.0
load data/core/common

setup() {
	set -o pipefail
	cd "$BATS_TEST_TMPDIR"
	# the core definitions and a weekly board of utc/dist
	jq '.leaderboards = [{board_id: "wk", tenant_id: "utc", counter_id: "dist", window: "week",
		tie_break: ["earliest_achiever"], materialised_cap: 100}]
	    | .counters[0].versions[0].windows = ["all_time", "week"]
	    | .counters[0].versions[0].bounds_lo = 0 | .counters[0].versions[0].bounds_hi = 1000' \
		"$DEFS" >cur.json
}

# prop FILTER: cur.json through jq FILTER into prop.json
prop() { jq "$1" cur.json >prop.json; }
V='.counters[0].versions[0]'
B='.leaderboards[0]'

# refused FILTER LINE: the edit is refused with exactly LINE
refused() {
	prop "$1"
	run -1 cnt-defs check cur.json prop.json
	[ "$output" = "$2" ] || { echo "got: $output"; return 1; }
}

# compatible FILTER LINE
compatible() {
	prop "$1"
	run -0 cnt-defs check cur.json prop.json
	[ "$output" = "$2" ] || { echo "got: $output"; return 1; }
}

NEWV='refused, it reinterprets counted events; declare the change as version 2'
NEWB='refused, it reinterprets standings; declare a new board'

@test "check: the same definitions, however written, are compatible and print nothing" {
	jq -S . cur.json >prop.json
	run -0 cnt-defs check cur.json prop.json
	[ -z "$output" ]
	# defaults written out change nothing either
	prop "$V.dedup_key = \"idempotency_key\" | $V.client_writable = false | $B.rank_numbering = \"competition\""
	run -0 cnt-defs check cur.json prop.json
	[ -z "$output" ]
}

@test "check: every change that reinterprets counted events is refused, naming the new version" {
	refused "$V.type = \"max\"" "utc/dist v1: type exact → max: $NEWV"
	refused "$V.bounds_lo = 1" "utc/dist v1: bounds_lo 0 → 1: $NEWV"
	refused "$V.bounds_hi = 2000" "utc/dist v1: bounds_hi 1000 → 2000: $NEWV"
	refused "$V.lateness_horizon_s = 60" "utc/dist v1: lateness_horizon_s 600 → 60: $NEWV"
	refused "$V.dedup_horizon_s = 60" "utc/dist v1: dedup_horizon_s 3600 → 60: $NEWV"
	refused "$V.dedup_key = \"item_member\"" "utc/dist v1: dedup_key idempotency_key → item_member: $NEWV"
	refused "$V.client_writable = true" "utc/dist v1: client_writable false → true: $NEWV"
	refused "$V.windows = [\"week\"]" "utc/dist v1: windows all_time,week → week: $NEWV"
	# a watch-time gate decides which beacons were admitted
	refused "$V.min_watch_ms = 3000" "utc/dist v1: min_watch_ms (none) → 3000: $NEWV
utc/dist v1: watch_attr (none) → ms_watched: $NEWV"
	refused "$V.effective_from = \"2026-01-01T00:00:00Z\"" \
		"utc/dist v1: effective_from (none) → 1767225600000: $NEWV"
	# the tenant's timezone moves every calendar window of its counters
	prop '.tenants[0].timezone = "Europe/Berlin"'
	run -1 cnt-defs check cur.json prop.json
	[[ $output == *"utc/dist v1: timezone UTC → Europe/Berlin: $NEWV"* ]]
	[[ $output == *"board wk: timezone UTC → Europe/Berlin: $NEWB"* ]]
	# a version of a counter with two offers the next free number
	jq '.counters[0].versions += [{version: 4, effective_from: "2027-01-01T00:00:00Z", type: "exact", windows: ["week"]}]' cur.json >c1.json
	jq "$V.type = \"max\"" c1.json >c2.json
	run -1 cnt-defs check c1.json c2.json
	[ "$output" = "utc/dist v1: type exact → max: refused, it reinterprets counted events; declare the change as version 5" ]
}

@test "check: tolerated_error of a unique counter (its sketch precision) is meaning; absent, the fingerprint is unchanged" {
	U='.counters[3].versions[0]'
	refused "$U.tolerated_error = 0.05" "utc/uniq v1: tolerated_error (none) → 0.05: $NEWV"
	jq "$U.tolerated_error = 0.05" cur.json >c1.json
	jq "$U.tolerated_error = 0.02" cur.json >c2.json
	run -1 cnt-defs check c1.json c2.json
	[ "$output" = "utc/uniq v1: tolerated_error 0.05 → 0.02: $NEWV" ]
	run -1 cnt-defs check c1.json cur.json
	[ "$output" = "utc/uniq v1: tolerated_error 0.05 → (none): $NEWV" ]
	run -0 cnt-defs check c1.json c1.json
	[ -z "$output" ]
	# a file counted under the declaration is refused under the edit
	ev k1 uniq m1 1 u1 | ingest "$T0" e.avro c1.json
	run -2 cnt-window -d c2.json e.avro
	[[ $output == *"utc/uniq v1: tolerated_error 0.05 → 0.02"* ]]
	# undeclared, the fingerprint is the one it was before the key existed
	ev k1 uniq m1 1 u1 | ingest "$T0" e0.avro cur.json
	cnt-cat --meta e0.avro | jq -r '.metadata."cnt.fingerprints" | fromjson | ."utc/uniq v1".def | has("tolerated_error")' | grep -qx false
	cnt-cat --meta e.avro | jq -r '.metadata."cnt.fingerprints" | fromjson | ."utc/uniq v1".def.tolerated_error' | grep -qx 0.05
}

@test "check: every change that reinterprets standings is refused" {
	refused "$B.tie_break = [\"latest_achiever\"]" \
		"board wk: tie_break earliest_achiever,member_ref_asc → latest_achiever,member_ref_asc: $NEWB"
	refused "$B.rank_numbering = \"dense\"" "board wk: rank_numbering competition → dense: $NEWB"
	refused "$B.window = \"all_time\"" "board wk: week_start monday → (none): $NEWB
board wk: window week → all_time: $NEWB"
	refused "$B.week_start = \"sunday\"" "board wk: week_start monday → sunday: $NEWB"
	refused "$B.order = \"asc\"" "board wk: order desc → asc: $NEWB"
	refused "$B.counter_version = 1" "board wk: counter_version 0 → 1: $NEWB"
	refused "$B.materialised_cap = 50" "board wk: materialised_cap 100 → 50: $NEWB"
	prop "$B.scope_kind = \"region\""
	run -1 cnt-defs check cur.json prop.json
	[[ $output == *"board wk: scope_kind global → region: $NEWB"* ]]
}

@test "check: removing a counter version or a board is refused" {
	prop '.counters |= map(select(.counter_id != "clicks"))'
	run -1 cnt-defs check cur.json prop.json
	[ "$output" = "utc/clicks v1: removed: refused, counted data may refer to it" ]
	refused '.leaderboards = []' "board wk: removed: refused, counted data may refer to it"
}

@test "check: a season's dates move only while it is open; its state only forward" {
	jq '.seasons = [{season_id: "s1", board_id: "wk", opens_at: "2026-03-02T00:00:00", closes_at: "2026-03-09T00:00:00", state: "open"}]' \
		cur.json >s.json
	S='.seasons[0]'
	NEWS='refused, the season is closing or closed (its state only moves forward); declare a new season'
	season() { jq "$1" s.json >c.json; jq "$2" s.json >p.json; }
	season . "$S.closes_at = \"2026-03-10T00:00:00\""
	run -0 cnt-defs check c.json p.json
	[ "$output" = "season s1: closes_at 2026-03-09T00:00:00 → 2026-03-10T00:00:00: compatible" ]
	season . "$S.state = \"closing\""
	run -0 cnt-defs check c.json p.json
	[ "$output" = "season s1: state open → closing: compatible" ]
	season "$S.state = \"closing\"" "$S.state = \"closed\""
	run -0 cnt-defs check c.json p.json
	[ "$output" = "season s1: state closing → closed: compatible" ]
	season "$S.state = \"closed\"" "$S.state = \"open\""
	run -1 cnt-defs check c.json p.json
	[ "$output" = "season s1: state closed → open: $NEWS" ]
	season "$S.state = \"closing\"" "$S.state = \"open\""
	run -1 cnt-defs check c.json p.json
	[ "$output" = "season s1: state closing → open: $NEWS" ]
	season "$S.state = \"closed\"" "$S.state = \"closed\" | $S.opens_at = \"2026-03-03T00:00:00\" | $S.timezone = \"Europe/Berlin\""
	run -1 cnt-defs check c.json p.json
	[ "$output" = "season s1: opens_at 2026-03-02T00:00:00 → 2026-03-03T00:00:00: $NEWS
season s1: timezone UTC → Europe/Berlin: $NEWS" ]
	# removed: refused once closing or closed; an open one may go
	season "$S.state = \"closed\"" 'del(.seasons)'
	run -1 cnt-defs check c.json p.json
	[ "$output" = "season s1: removed: refused, counted data may refer to it" ]
	season . 'del(.seasons)'
	run -0 cnt-defs check c.json p.json
	[ "$output" = "season s1: removed: compatible" ]
	run -0 cnt-defs check cur.json s.json
	[ "$output" = "season s1: added: compatible" ]
}

@test "check: compatible changes are accepted, one line each" {
	compatible "$V.windows += [\"day\"]" "utc/dist v1: windows all_time,week → all_time,day,week: compatible"
	compatible "$V.unit_cost_per_m = 2.5" "utc/dist v1: unit_cost_per_m 0.0 → 2.5: compatible"
	compatible "$B.materialised_cap = 500" "board wk: materialised_cap 100 → 500: compatible"
	compatible "$B.freshness_budget_s = 5" "board wk: freshness_budget_s 60 → 5: compatible"
	compatible "$B.histogram = {buckets: 64}" \
		"board wk: histogram {\"buckets\":512,\"scale\":\"log\",\"width\":0} → {\"buckets\":64,\"scale\":\"log\",\"width\":0}: compatible"
	compatible '.counters[0].versions += [{version: 2, effective_from: "2026-06-01T00:00:00Z", type: "max", windows: ["week"]}]' \
		"utc/dist v2: added: compatible"
	compatible '.leaderboards += [{board_id: "wk2", tenant_id: "utc", counter_id: "dist", window: "all_time"}]' \
		"board wk2: added: compatible"
	# tenant notes (a display name, a raised cap) are not part of any meaning
	compatible '.tenants[0].name = "UTC Ltd" | .tenants[0].member_cap = 1000' ""
	# several changes: each on its line, refused wins the status
	prop "$V.windows += [\"day\"] | $V.type = \"max\""
	run -1 cnt-defs check --stats st.json cur.json prop.json
	[ "${#lines[@]}" -eq 2 ]
	jq -e '.tool == "cnt-defs" and .changes == 2 and .compatible == 1 and .refused == 1' st.json
}

@test "check: usage and trouble exit 2" {
	run -2 cnt-defs
	[[ $output == *"a command is needed"* ]]
	run -2 cnt-defs diff cur.json cur.json
	[[ $output == *"unknown command 'diff'"* ]]
	run -2 cnt-defs check cur.json
	run -2 cnt-defs check cur.json cur.json extra
	echo '{' >bad.json
	run -2 cnt-defs check cur.json bad.json
	[[ $output == "cnt-defs: definitions 'bad.json'"* ]]
	run -0 cnt-defs --version
	cnt-defs --help | grep -q 'cnt-defs check'
}

# events.avro: three events of utc/dist admitted under cur.json
events() {
	{ ev a1 dist m1 5; ev a2 dist m2 7; ev a3 dist m1 1; } | ingest "$T0" events.avro cur.json
}

# meta FILE...: the fingerprint table a file records (null when none)
meta() { cnt-cat --meta "$@" | jq -c '.metadata."cnt.fingerprints" // "null" | fromjson'; }

@test "files record the fingerprints of exactly the versions their records hold; cnt-accumulate carries them" {
	events
	meta events.avro >want
	jq -e 'keys == ["utc/dist v1"] and (."utc/dist v1".fp | test("^[0-9a-f]{32}$"))
		and ."utc/dist v1".def.type == "exact" and ."utc/dist v1".def.bounds_hi == 1000
		and (."utc/dist v1".def | has("windows") | not)' want
	cnt-window -d cur.json events.avro | cnt-accumulate -o b.avro
	meta b.avro | diff - want
	cnt-dedup -d cur.json events.avro | meta | diff - want
	cnt-window -d cur.json events.avro | meta | diff - want
	# two counters in the records, two entries
	{ ev a1 dist m1 5; ev c1 clicks m1 1; } | ingest "$T0" two.avro cur.json
	meta two.avro | jq -e 'keys == ["utc/clicks v1", "utc/dist v1"]'
	# no records, no table
	ingest "$T0" none.avro cur.json </dev/null
	[ "$(meta none.avro)" = null ]
}

@test "the same records give the same bytes, whatever the definitions declared or the inputs held" {
	events
	# definitions with more counters, a compatible edit and a new version
	prop ".counters += [{tenant_id: \"utc\", counter_id: \"extra\", versions: [{version: 1, type: \"max\"}]}]
		| $V.windows += [\"day\"] | $V.unit_cost_per_m = 9"
	{ ev a1 dist m1 5; ev a2 dist m2 7; ev a3 dist m1 1; } | ingest "$T0" events2.avro prop.json
	cmp events.avro events2.avro
	cnt-window -d cur.json events.avro | cnt-accumulate -o b1.avro
	cnt-window -d prop.json events.avro | cnt-accumulate -o b2.avro
	cmp b1.avro b2.avro
	# merged with a file of another counter whose records all cancel out:
	# the merge holds only utc/dist, and records only it
	{ ev c1 clicks m1 1; } | ingest "$T0" c.avro cur.json
	cnt-retract --event c1 --tenant utc --counter clicks --cause fraud --requester r --authority a \
		--ledger l.jsonl --now "$T0" -o comp.avro c.avro
	meta comp.avro | jq -e 'keys == ["utc/clicks v1"]'
	cnt-window -d cur.json events.avro c.avro | cnt-accumulate -o old.avro
	meta old.avro | jq -e 'keys == ["utc/clicks v1", "utc/dist v1"]'
	cnt-window -d cur.json comp.avro | cnt-accumulate -o cb.avro
	cnt-accumulate -o merged.avro old.avro cb.avro
	cmp merged.avro b1.avro
}

@test "cnt-accumulate and cnt-retract refuse inputs that recorded one version under two definitions" {
	events
	prop "$V.type = \"max\""
	{ ev b1 dist m3 5; } | ingest "$T0" other.avro prop.json
	cnt-window -d cur.json events.avro | cnt-accumulate -o b1.avro
	cnt-window -d prop.json other.avro | cnt-accumulate -o b2.avro
	run -2 cnt-accumulate -o m.avro b1.avro b2.avro
	[ "$output" = "cnt-accumulate: 'b2.avro': utc/dist v1: type max here, exact in 'b1.avro'; inputs counted under two definitions of one version cannot be combined" ]
	[ ! -e m.avro ]
	run -2 cnt-retract --member m1 --tenant utc --counter dist --cause dq --requester r --authority a \
		--ledger l.jsonl -o comp.avro events.avro other.avro
	[ "$output" = "cnt-retract: 'other.avro': utc/dist v1: type max here, exact in 'events.avro'; inputs counted under two definitions of one version cannot be combined" ]
	[ ! -e comp.avro ] && [ ! -s l.jsonl ]
}

@test "cnt-window and cnt-dedup refuse an archive admitted under a version since edited" {
	events
	prop "$V.type = \"max\""
	run -2 cnt-window -d prop.json -o w.avro events.avro
	[ "$output" = "cnt-window: 'events.avro': utc/dist v1: type exact → max; a change that reinterprets counted events needs a new version" ]
	[ ! -e w.avro ]
	run -2 cnt-dedup -d prop.json -o d.avro events.avro
	[ "$output" = "cnt-dedup: 'events.avro': utc/dist v1: type exact → max; a change that reinterprets counted events needs a new version" ]
	[ ! -e d.avro ]
	# the issue's three edits
	for e in "$V.bounds_hi = 5:bounds_hi 1000 → 5" "$V.lateness_horizon_s = 0:lateness_horizon_s 600 → 0"; do
		prop "${e%%:*}"
		run -2 cnt-window -d prop.json -o w.avro events.avro
		[ "$output" = "cnt-window: 'events.avro': utc/dist v1: ${e#*:}; a change that reinterprets counted events needs a new version" ]
	done
	# a compatible edit and a new version are accepted; a window removed
	# does not change what was counted (cnt-defs check refuses it)
	prop "$V.windows = [\"day\"] | $V.unit_cost_per_m = 9 | .counters[0].versions += [{version: 2, effective_from: \"2027-01-01T00:00:00Z\", type: \"max\", windows: [\"week\"]}]"
	cnt-window -d prop.json -o w.avro events.avro
	cnt-dedup -d prop.json -o d.avro events.avro
}

@test "cnt-retract --rebuild refuses a log or a bucket file counted under a version since edited" {
	events
	cnt-window -d cur.json events.avro | cnt-accumulate -o b.avro
	cnt-retract --event a2 --tenant utc --counter dist --cause fraud --requester r --authority a \
		--ledger l.jsonl --now "$T0" -o comp.avro events.avro
	meta comp.avro | diff - <(meta events.avro)
	prop "$V.bounds_lo = 1"
	run -2 cnt-retract --rebuild b.avro -d prop.json -o r.avro events.avro comp.avro
	[[ "$output" == "cnt-retract: '"*"': utc/dist v1: bounds_lo 0 → 1; a change that reinterprets counted events needs a new version" ]]
	[ ! -e r.avro ]
	cnt-retract --rebuild b.avro -d cur.json -o r.avro events.avro comp.avro
	meta r.avro | diff - <(meta b.avro)
}

@test "cnt-project refuses bucket files counted under a version since edited" {
	events
	cnt-window -d cur.json events.avro | cnt-accumulate -o b.avro
	prop "$V.bounds_hi = 10"
	run -2 cnt-project -d prop.json -b wk -w v --now "$T0" b.avro
	[ "$output" = "cnt-project: 'b.avro': utc/dist v1: bounds_hi 1000 → 10; a change that reinterprets counted events needs a new version" ]
	[ ! -e v ]
	cnt-project -d cur.json -b wk -w v --now "$T0" b.avro
	# the view records its board and the versions it ranked
	meta v/wk/global/current/view.avro | jq -e 'keys == ["board wk", "utc/dist v1"]
		and ."board wk".def.tie_break == ["earliest_achiever", "member_ref_asc"]'
	prop "$B.materialised_cap = 1000"
	cnt-project -d prop.json -b wk -w v2 --now "$T0" b.avro
	meta v2/wk/global/current/view.avro | diff - <(meta v/wk/global/current/view.avro)
	# a bucket file made from the edited definitions' events is refused too
	prop "$V.dedup_key = \"item_member\""
	run -2 cnt-project -d prop.json -b wk -w v3 --now "$T0" b.avro
	[[ "$output" == *"'b.avro': utc/dist v1: dedup_key idempotency_key → item_member; a change"* ]]
}

@test "cnt-project refuses to supersede a view built under a board since edited in place" {
	events
	cnt-window -d cur.json events.avro | cnt-accumulate -o b.avro
	cnt-project -d cur.json -b wk -w v --now "$T0" b.avro
	prop "$B.tie_break = [\"latest_achiever\"]"
	run -2 cnt-project -d prop.json -b wk -w v --now "$T0" b.avro
	[ "$output" = "cnt-project: 'v/wk/global/v000001/view.avro': board wk: tie_break earliest_achiever,member_ref_asc → latest_achiever,member_ref_asc; a change that reinterprets standings needs a new board" ]
	[ "$(readlink v/wk/global/current)" = v000001 ] && [ ! -e v/wk/global/v000002 ]
	# a compatible edit (a cap raised) builds the next version
	prop "$B.materialised_cap = 1000"
	cnt-project -d prop.json -b wk -w v --now "$T0" b.avro
	[ "$(readlink v/wk/global/current)" = v000002 ]
	# the edited board under a new id starts its own views
	prop "$B.tie_break = [\"latest_achiever\"] | $B.board_id = \"wk2\""
	cnt-project -d prop.json -b wk2 -w v --now "$T0" b.avro
	meta v/wk2/global/current/view.avro | jq -e '."board wk2".def.tie_break == ["latest_achiever", "member_ref_asc"]'
}

@test "a rebuild applies each event's own version: a new version never reinterprets history" {
	events
	cnt-window -d cur.json events.avro | cnt-accumulate -o before.avro
	# version 2 (max, from a later date) is declared after the events were counted
	jq '.counters[0].versions += [{version: 2, effective_from: "2026-06-01T00:00:00Z", type: "max", windows: ["all_time", "week"]}]' \
		cur.json >v2.json
	cnt-defs check cur.json v2.json
	cnt-window -d v2.json events.avro | cnt-accumulate -o after.avro
	cnt-diff before.avro after.avro
	cnt-cat after.avro | jq -e -s 'all(.counter_version == 1)'
	# the board pinned to version 1 ranks as before
	jq "$B.counter_version = 1" v2.json >pin.json
	jq "$B.counter_version = 1" cur.json >pin1.json
	cnt-project -d pin1.json -b wk -w v1 --now "$T0" before.avro
	cnt-project -d pin.json -b wk -w v2 --now "$T0" after.avro
	diff <(cnt-rank -w v1 -b wk --now "$T0" top 5) <(cnt-rank -w v2 -b wk --now "$T0" top 5)
	# an unpinned board would read v1's sums as v2's maxima: refused
	run -2 cnt-project -d v2.json -b wk -w v3 --now "$T0" after.avro
	[ "$output" = "cnt-project: board 'wk' reads every version of utc/dist, but version 1 counts exact and version 2 max: pin the board's counter_version" ]
}
