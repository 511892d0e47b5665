#!/usr/bin/env bats
# Creator analytics: a counter version's "dimensions" (definitions,
# fingerprint), the breakdown records cnt-accumulate keeps for them
# (cnt-bucket(5): exact merges, compensations, ignored by every consumer of
# a member's value), and cnt-series reading them: views and unique viewers
# per local hour or day, in total or by one dimension, for a video, a set
# of videos or a creator's videos, checked against a Python computation
# from the events themselves.

bats_require_minimum_version 1.5.0

DATA="$BATS_TEST_DIRNAME/data/series"
DEFS="$DATA/defs.json"
PLAIN="$DATA/plain.json"
PY=/usr/bin/python3
NOW=2026-04-01T00:00:00Z
S=(-d "$DEFS" --counter tube/views)

setup_file() {
	set -o pipefail
	cd "$BATS_FILE_TMPDIR"
	"$PY" "$DATA/gen-events.py" 7 600 >in.jsonl
	cnt-ingest -d "$DEFS" --now "$NOW" --max-past 400d -o log.avro in.jsonl
	cnt-window -d "$DEFS" -o win.avro log.avro
	cnt-accumulate -o b.avro win.avro
}

setup() {
	set -o pipefail
	cd "$BATS_TEST_TMPDIR"
	F=$BATS_FILE_TMPDIR
}

# want ARGS...: the expected rows (JSON lines), computed from the events
want() {
	"$PY" - "$F/in.jsonl" "$@" <<'EOF'
import json, sys
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo
evs = [json.loads(l) for l in open(sys.argv[1])]
args = dict(a.split("=", 1) for a in sys.argv[2:])
tz = ZoneInfo("Europe/Berlin")
gran, by = args.get("gran", "day"), args.get("by")
members = set(args["members"].split(",")) if "members" in args else None
creator = args.get("creator")
lo = int(args["from"]); hi = int(args["to"])
cells = {}
for e in evs:
    if e["counter_id"] != "views":
        continue
    if members is not None and e["member_ref"] not in members:
        continue
    if creator is not None and e["attrs"].get("creator") != creator:
        continue
    t = e["event_time"]
    d = datetime.fromtimestamp(t / 1000, tz)
    if gran == "day":
        start = d.replace(hour=0, minute=0, second=0, microsecond=0)
    else:
        start = d.replace(minute=0, second=0, microsecond=0)
    s = int(start.timestamp() * 1000)
    # the bucket of the event starts within [from, to)
    b = int(d.replace(minute=0, second=0, microsecond=0).timestamp() * 1000)
    if not (lo <= b < hi):
        continue
    v = e["attrs"].get(by, "(none)") if by else None
    c = cells.setdefault((s, v), [0, set()])
    c[0] += 1
    c[1].add(e["item"])
for (s, v), (n, u) in sorted(cells.items(), key=lambda kv: (kv[0][0], (kv[0][1] or "").encode())):
    row = {"start": s, "views": n, "unique_viewers": len(u)}
    if by:
        row["value"] = v
    print(json.dumps(row, sort_keys=True, separators=(",", ":")))
EOF
}

# got: cnt-series JSON lines on stdin, reduced to what want() gives
# (rows with views only: want() knows nothing of empty periods)
got() {
	jq -c 'select(.views > 0) | {start: (.start | sub("\\.000Z$"; "Z") | fromdateiso8601 * 1000), views, unique_viewers}
		+ (if .value then {value} else {} end)' | jq -cS .
}

FROM=2026-03-28
TO=2026-03-31
FROM_MS=1774652400000   # 2026-03-28T00:00+01:00
TO_MS=1774908000000     # 2026-03-31T00:00+02:00

@test "definitions: dimensions are up to 4 distinct attrs keys; each refusal names the place" {
	run -0 cnt-defs check "$DEFS" "$DEFS"
	for bad in '["a","b","c","d","e"]' '["a","a"]' '[""]' '[3]' '"country"'; do
		jq --argjson d "$bad" '.counters[0].versions[0].dimensions = $d' "$DEFS" >bad.json
		run -2 cnt-defs check bad.json bad.json
		[[ $output == *'$.counters[0].versions[0].dimensions'* ]]
	done
	jq '.counters[0].versions[0].dimensions = ["a","b","c","d","e"]' "$DEFS" >bad.json
	run -2 cnt-defs check bad.json bad.json
	[[ $output == *"lists 5 dimensions (at most 4)"* ]]
	jq '.counters[0].versions[0].dimensions = ["a","a"]' "$DEFS" >bad.json
	run -2 cnt-defs check bad.json bad.json
	[[ $output == *"dimension 'a' is listed twice"* ]]
}

@test "definitions: dimensions are part of the version: changing them under counted data is refused" {
	jq '.counters[0].versions[0].dimensions = ["country"]' "$DEFS" >edited.json
	run -1 cnt-defs check "$DEFS" edited.json
	[[ $output == *"tube/views"*"dimensions"* ]]
	# adding dimensions to a version without them is refused too
	run -1 cnt-defs check "$PLAIN" "$DEFS"
	[[ $output == *dimensions* ]]
	# a version without dimensions keeps the fingerprint it had before they existed
	run -0 cnt-defs check "$PLAIN" "$PLAIN"
}

@test "accumulate: one breakdown record per (dimension, value) beside each total; a missing value is (none)" {
	cnt-cat "$F/b.avro" >all.jsonl
	# totals and breakdowns of each dimension add up to the same events
	jq -s -e '
		[.[] | select(.counter_id == "views")] as $v
		| ($v | map(select(.dim == "")) | map(.count + .late_count) | add) as $t
		| ["country", "creator", "device", "source"]
		| all(. as $d | ($v | map(select(.dim == $d)) | map(.count + .late_count) | add) == $t)' all.jsonl
	jq -e -s 'map(select(.dim == "country" and .dim_value == "(none)")) | length > 0' all.jsonl
	# the exact counter has breakdowns too (its own dimension only)
	jq -e -s '[.[] | select(.counter_id == "likes") | .dim] | unique == ["", "country"]' all.jsonl
	# the records are in key order: member, dim, dim_value, bucket_start
	jq -c '[.tenant_id, .counter_id, .counter_version, .member_ref, .dim, .dim_value, .bucket_start, .shard]' all.jsonl >keys
	"$PY" -c '
import json, sys
k = [json.loads(l) for l in open("keys")]
enc = lambda r: [x.encode() if isinstance(x, str) else x for x in r]
assert [enc(r) for r in k] == sorted(enc(r) for r in k), "not in key order"
assert len(set(map(tuple, k))) == len(k)'
	run -0 cnt-accumulate --stats - "$F/win.avro" -o again.avro
	echo "$output" | jq -e '.events == 686 and .events_out == 686 and .dim_records > 0 and .out > .dim_records'
}

@test "accumulate: breakdown records merge exactly: any split, order or spill gives the same bytes" {
	# the log split in three, each part accumulated, then merged
	"$PY" - "$F/in.jsonl" <<'EOF'
import sys, random
lines = open(sys.argv[1]).read().splitlines(True)
random.Random(3).shuffle(lines)
n = len(lines) // 3
for i, part in enumerate([lines[:n], lines[n:2 * n], lines[2 * n:]]):
    open(f"part{i}.jsonl", "w").writelines(part)
open("shuffled.jsonl", "w").writelines(lines)
EOF
	for i in 0 1 2; do
		cnt-ingest -d "$DEFS" --now "$NOW" --max-past 400d part$i.jsonl | cnt-window -d "$DEFS" | cnt-accumulate -o p$i.avro
	done
	cnt-accumulate -o merged.avro p2.avro p0.avro p1.avro
	cmp merged.avro "$F/b.avro"
	cnt-ingest -d "$DEFS" --now "$NOW" --max-past 400d shuffled.jsonl | cnt-window -d "$DEFS" | cnt-accumulate -o sh.avro
	cmp sh.avro "$F/b.avro"
	# enough events to spill at 1 MiB: the same bytes as in memory
	"$PY" "$DATA/gen-events.py" 11 30000 >big.jsonl
	cnt-ingest -d "$DEFS" --now "$NOW" --max-past 400d -o big.avro big.jsonl
	cnt-window -d "$DEFS" -o bigw.avro big.avro
	cnt-accumulate -o mem.avro bigw.avro
	mkdir spill
	cnt-accumulate -m 1M -T spill --stats st.json -o disk.avro bigw.avro 2>/dev/null
	jq -e '.spill_runs > 0 and .dim_records > 0' st.json
	cmp mem.avro disk.avro
	run -0 cnt-diff merged.avro "$F/b.avro"
}

@test "a board is the same whether or not its counter declares dimensions" {
	cnt-ingest -d "$PLAIN" --now "$NOW" --max-past 400d "$F/in.jsonl" | cnt-window -d "$PLAIN" | cnt-accumulate -o plain.avro
	# the dimensions' records are the only difference in the buckets
	cnt-cat plain.avro | jq -c . >p.jsonl
	cnt-cat "$F/b.avro" | jq -c 'select(.dim == "")' >d.jsonl
	cmp p.jsonl d.jsonl
	for board in top-videos top-liked; do
		cnt-project -d "$PLAIN" -b $board -w vp --now "$NOW" --stats sp.json plain.avro
		cnt-project -d "$DEFS" -b $board -w vd --now "$NOW" --stats sd.json "$F/b.avro"
		cnt-rank -w vp -b $board --now "$NOW" top 10 | jq -c '.entries' >rp
		cnt-rank -w vd -b $board --now "$NOW" top 10 | jq -c '.entries' >rd
		cmp rp rd
		jq -e 'length == 4 and all(.value > 0)' rd
		run -0 cnt-diff "vp/$board/global/current" "vd/$board/global/current"
		# the same records read and used: breakdowns are skipped
		[ "$(jq -c 'del(.tool, .fingerprints)' sp.json)" = "$(jq -c 'del(.tool, .fingerprints)' sd.json)" ] ||
			{ diff <(jq -S . sp.json) <(jq -S . sd.json); false; }
	done
}

@test "cnt-diff compares breakdown records too" {
	grep -v '"k5"' "$F/in.jsonl" >less.jsonl
	cnt-ingest -d "$DEFS" --now "$NOW" --max-past 400d less.jsonl | cnt-window -d "$DEFS" | cnt-accumulate -o less.avro
	run -1 cnt-diff "$F/b.avro" less.avro
	[[ $output == *'"dim":"country"'* ]]
	[[ $output == *'"dim":"device"'* ]]
}

@test "a retraction takes the event out of its breakdown records too (merged or rebuilt)" {
	cnt-retract --event k5 --event k9 --tenant tube --counter views --cause fraud --requester t --authority a \
		--ledger ledger.jsonl --now "$NOW" -o comp.avro "$F/log.avro"
	cnt-window -d "$DEFS" comp.avro | cnt-accumulate -o merged.avro "$F/b.avro" -
	grep -v -e '"k5"' -e '"k9"' "$F/in.jsonl" >less.jsonl
	cnt-ingest -d "$DEFS" --now "$NOW" --max-past 400d less.jsonl | cnt-window -d "$DEFS" | cnt-accumulate -o want.avro
	# counts of every record, totals and breakdowns, as without the events
	cnt-cat merged.avro | jq -c '[.member_ref, .dim, .dim_value, .bucket_start, .count, .late_count]' >m
	cnt-cat want.avro | jq -c '[.member_ref, .dim, .dim_value, .bucket_start, .count, .late_count]' >w
	diff m w
	# and the rebuild is the recount, byte for byte
	cnt-retract --rebuild "$F/b.avro" -d "$DEFS" -o rebuilt.avro "$F/log.avro" comp.avro
	cmp rebuilt.avro want.avro
}

@test "cnt-series: views and unique viewers per day, every video, against the events" {
	run -0 --separate-stderr cnt-series "${S[@]}" --from $FROM --to $TO -F json "$F/b.avro"
	echo "$output" | got >g
	want from=$FROM_MS to=$TO_MS >w
	diff g w
	# three local days, the middle one 23 hours long (spring forward)
	[ "$(echo "$output" | wc -l)" -eq 3 ]
	echo "$output" | jq -s -e 'map(.local) == ["2026-03-28", "2026-03-29", "2026-03-30"]'
	echo "$output" | jq -s -e '.[1] | ((.end | sub("\\.000Z$"; "Z") | fromdateiso8601) - (.start | sub("\\.000Z$"; "Z") | fromdateiso8601)) == 82800'
	echo "$output" | jq -s -e 'all(.as_of == "2026-04-01T00:00:00.000Z" and .period == "day" and .tenant_id == "tube")'
}

@test "cnt-series: per hour across the DST change, by country, one video" {
	run -0 cnt-series "${S[@]}" --from $FROM --to $TO --granularity hour --by country --member v-a1 -F json "$F/b.avro"
	echo "$output" | got >g
	want from=$FROM_MS to=$TO_MS gran=hour by=country members=v-a1 >w
	diff g w
	echo "$output" | jq -s -e 'map(.value) | unique | . - ["DE", "FR", "US", "(none)"] == []'
	# not broken down: every hour is a row (71 of them: 23 on the 29th)
	run -0 cnt-series "${S[@]}" --from $FROM --to $TO --granularity hour -F json "$F/b.avro"
	[ "$(echo "$output" | wc -l)" -eq 71 ]
	echo "$output" | jq -s -e 'map(.local) | index("2026-03-29T01:00+01:00") + 1 == index("2026-03-29T03:00+02:00")'
}

@test "cnt-series: a set of videos (--member, --members) and a creator's videos, by device and source" {
	printf 'v-a2\n\nv-b1\n' >vids.txt
	run -0 cnt-series "${S[@]}" --from $FROM --to $TO --members vids.txt --member v-a2 --by device -F json "$F/b.avro"
	echo "$output" | got >g
	want from=$FROM_MS to=$TO_MS by=device members=v-a2,v-b1 >w
	diff g w
	run -0 --separate-stderr cnt-series "${S[@]}" --from $FROM --to $TO --creator ana --by source -F json \
		--stats st.json "$F/b.avro"
	echo "$output" | got >g
	want from=$FROM_MS to=$TO_MS by=source creator=ana >w
	diff g w
	jq -e '.creator_members == 2 and .out == ([inputs] | length)' st.json <(echo "$output" | jq -c .) ||
		jq -e '.creator_members == 2' st.json
	# an id needing JSON escapes, in rows and stats
	run -0 cnt-series "${S[@]}" --from $FROM --to $TO --creator 'cho "q"' -F json --stats st2.json "$F/b.avro"
	echo "$output" | got >g
	want from=$FROM_MS to=$TO_MS 'creator=cho "q"' >w
	diff g w
	jq -e '.tool == "cnt-series" and .creator_members == 1' st2.json
	# a value needing JSON escapes
	run -0 cnt-series "${S[@]}" --from $FROM --to $TO --by creator -F json "$F/b.avro"
	echo "$output" | jq -s -e 'map(.value) | unique == ["ana", "ben", "cho \"q\""]'
}

@test "cnt-series: several bucket files add up; the table for people" {
	head -n 300 "$F/in.jsonl" >a.jsonl
	tail -n +301 "$F/in.jsonl" >b.jsonl
	for p in a b; do
		cnt-ingest -d "$DEFS" --now "$NOW" --max-past 400d $p.jsonl | cnt-window -d "$DEFS" | cnt-accumulate -o $p.avro
	done
	cnt-series "${S[@]}" --from $FROM --to $TO --by country -F json a.avro b.avro >split
	cnt-series "${S[@]}" --from $FROM --to $TO --by country -F json "$F/b.avro" >whole
	diff split whole
	run -0 cnt-series "${S[@]}" --from $FROM --to $TO --by country "$F/b.avro"
	[ "${lines[0]}" = "# tube/views per day (Europe/Berlin) by country, as of 2026-04-01T00:00:00.000Z" ]
	[[ ${lines[1]} == "DAY "*"VALUE"*"VIEWS"*"UNIQUE_VIEWERS" ]]
	[ "${#lines[@]}" -eq $((2 + $(wc -l <whole))) ]
	[[ ${lines[2]} == "2026-03-28 "* ]]
}

@test "cnt-series: a series of whole local days reads the day roll-ups, with the rows of the hours" {
	cnt-accumulate -d "$DEFS" -o days.avro "$F/win.avro"
	hours=$(cnt-cat --count "$F/b.avro")
	for q in "--by country" "--by device --member v-a1 --member v-b1" "--creator ana --by source" ""; do
		# shellcheck disable=SC2086
		cnt-series "${S[@]}" --from $FROM --to $TO $q -F json --stats h.json "$F/b.avro" >h
		# shellcheck disable=SC2086
		cnt-series "${S[@]}" --from $FROM --to $TO $q -F json --stats d.json days.avro >d
		# shellcheck disable=SC2086
		cnt-series "${S[@]}" --from $FROM --to $TO $q -F json --stats x.json --hours days.avro >x
		[ -s h ]
		cmp h d
		cmp h x
		jq -e '.day_rollups == false' h.json x.json
		# the day records only: fewer than the hours (--creator reads twice)
		jq -e --argjson h "$hours" '.day_rollups == true and .in < $h' d.json
		jq -e --argjson h "$hours" '.in == $h or .in == 2 * $h' x.json
	done
	# the against-the-events check holds for the roll-ups too
	cnt-series "${S[@]}" --from $FROM --to $TO -F json days.avro | got >g
	want from=$FROM_MS to=$TO_MS >w
	diff g w
	# a range that starts at 10:00 or ends at noon, or an hourly series:
	# the hours, with the same rows as the hourly file
	for r in "--from 2026-03-28T10:00 --to $TO" "--from $FROM --to 2026-03-30T12:00" "--granularity hour --from $FROM --to $TO"; do
		# shellcheck disable=SC2086
		cnt-series "${S[@]}" $r -F json --by country "$F/b.avro" >h
		# shellcheck disable=SC2086
		cnt-series "${S[@]}" $r -F json --by country --stats d.json days.avro >d
		cmp h d
		jq -e '.day_rollups == false' d.json
	done
	# -v says which records were read
	run -0 --separate-stderr cnt-series "${S[@]}" --from $FROM --to $TO -v days.avro
	[[ $stderr == *"day records read"* ]]
	# day records of another zone (the tenant's timezone changed since):
	# refused, never summed into the wrong days
	jq '(.tenants[] | select(.tenant_id == "tube") | .timezone) = "UTC"' "$DEFS" >utc.json
	cnt-accumulate -d utc.json -o wrongzone.avro "$F/win.avro"
	run -2 --separate-stderr cnt-series "${S[@]}" --from $FROM --to $TO wrongzone.avro
	[[ $stderr == *"wrongzone.avro"*"not a local day of Europe/Berlin"* ]]
	run -0 cnt-series "${S[@]}" --from $FROM --to $TO --hours wrongzone.avro
}

@test "cnt-series: wrong questions and corrupt files are clear errors (status 2)" {
	run -2 cnt-series "${S[@]}" --from $FROM --to $TO --by colour "$F/b.avro"
	[[ $output == *"--by: 'colour' is not a dimension of counter 'views'"* ]]
	run -2 cnt-series -d "$DEFS" --counter tube/nope --from $FROM --to $TO "$F/b.avro"
	[[ $output == *"no counter 'nope' of tenant 'tube'"* ]]
	run -2 cnt-series "${S[@]}" --from $TO --to $FROM "$F/b.avro"
	[[ $output == *"is not before --to"* ]]
	run -2 cnt-series "${S[@]}" --from yesterday --to $TO "$F/b.avro"
	[[ $output == *"--from: 'yesterday' is not a time"* ]]
	run -2 cnt-series -d "$DEFS" --counter tube/likes --creator ana --from $FROM --to $TO "$F/b.avro"
	[[ $output == *'declares no "creator" dimension'* ]]
	run -2 cnt-series "${S[@]}" --from $FROM --to $TO --granularity week "$F/b.avro"
	[[ $output == *"--granularity: 'week' is not hour or day"* ]]
	run -2 cnt-series "${S[@]}" --counter tube --from $FROM --to $TO "$F/b.avro"
	run -2 cnt-series "${S[@]}" --from $FROM --to $TO
	[[ $output == *"no bucket file given"* ]]
	run -2 cnt-series "${S[@]}" --from 2000-01-01 --to 2200-01-01 --granularity hour "$F/b.avro"
	[[ $output == *"more than 1000000 hours"* ]]
	# not a bucket file, a corrupt one, a pipe with --creator
	run -2 cnt-series "${S[@]}" --from $FROM --to $TO "$F/log.avro"
	[[ $output == cnt-series:*log.avro* ]]
	head -c 3000 "$F/b.avro" >cut.avro
	run -2 cnt-series "${S[@]}" --from $FROM --to $TO cut.avro
	[[ $output == cnt-series:*cut.avro* ]]
	[ "${#lines[@]}" -eq 1 ]
	run -2 bash -c "cat \"$F/b.avro\" | cnt-series -d \"$DEFS\" --counter tube/views --from $FROM --to $TO --creator ana -"
	[[ $output == *"--creator reads the bucket files twice"* ]]
	run -2 cnt-series "${S[@]}" --from $FROM --to $TO --members /dev/null "$F/b.avro"
	[[ $output == *"names no member"* ]]
}

@test "late events: counted in the late columns of their breakdown records, and in cnt-series' views" {
	head -n 200 "$F/in.jsonl" >part.jsonl
	cnt-ingest -d "$DEFS" --now 2026-05-01T00:00:00Z --max-past 400d part.jsonl | cnt-window -d "$DEFS" |
		cnt-accumulate -o late.avro
	cnt-cat late.avro | jq -s -e '
		[.[] | select(.counter_id == "views")] as $v
		| ($v | map(.count) | add) == 0
		and ($v | map(select(.dim == "")) | map(.late_count) | add) as $t
		| $t > 0 and ($v | map(select(.dim == "device")) | map(.late_count) | add) == $t
		and ($v | all(.late_sketch != null))'
	cnt-series "${S[@]}" --from $FROM --to $TO --by device -F json late.avro | jq -cS '{local, value, views, unique_viewers}' >g
	cnt-ingest -d "$DEFS" --now "$NOW" --max-past 400d part.jsonl | cnt-window -d "$DEFS" | cnt-accumulate -o ontime.avro
	cnt-series "${S[@]}" --from $FROM --to $TO --by device -F json ontime.avro | jq -cS '{local, value, views, unique_viewers}' >w
	[ -s w ]
	diff g w
}

@test "--tenant: the asking tenant's counter and files are answered; another tenant's are refused with status 5" {
	run -0 cnt-series "${S[@]}" --from 2026-03-01 --to 2026-03-08 -F json "$F/b.avro"
	plain=$output
	run -0 cnt-series "${S[@]}" --tenant tube --from 2026-03-01 --to 2026-03-08 -F json "$F/b.avro"
	[ "$output" = "$plain" ]
	run -5 cnt-series "${S[@]}" --tenant acme --from 2026-03-01 --to 2026-03-08 "$F/b.avro"
	[[ "$output" == *"tube/views"*"'tube'"*"refused for tenant 'acme'"* ]]
	[ "${#lines[@]}" -eq 1 ]
	CNT_TENANT=acme run -5 cnt-series "${S[@]}" --from 2026-03-01 --to 2026-03-08 "$F/b.avro"
	[[ "$output" == *"refused for tenant 'acme'"* ]]
	# A bucket file holding another tenant's records beside tube's.
	cnt-ingest -d "$BATS_TEST_DIRNAME/../examples/definitions.json" --now 2026-11-30T09:00:00Z \
		"$BATS_TEST_DIRNAME/../examples/events.jsonl" | cnt-window -d "$BATS_TEST_DIRNAME/../examples/definitions.json" |
		cnt-accumulate -o acme.avro
	cnt-accumulate -o mixed.avro "$F/b.avro" acme.avro
	run -5 cnt-series "${S[@]}" --tenant tube --from 2026-03-01 --to 2026-03-08 mixed.avro
	[[ "$output" == *"mixed.avro"*"refused for tenant 'tube'"* ]]
	[ "${#lines[@]}" -eq 1 ]
	# Unchecked without a tenant: the other tenant's records are not read into tube's series.
	run -0 cnt-series "${S[@]}" --from 2026-03-01 --to 2026-03-08 -F json mixed.avro
	[ "$output" = "$plain" ]
}
