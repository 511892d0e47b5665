#!/usr/bin/env bats
# Day roll-ups (cnt-bucket(5), "Day roll-ups"): cnt-accumulate -d writes,
# after the hourly container, a container of local-day records (cnt.rollup
# = day) in each tenant's zone, DST days 23 and 25 hours long; they are the
# exact unions of their hours (checked in Python from cnt-cat), the same
# bytes for any split, order, spill or merge; cnt-project composes every
# window of whole local days from them and gives exactly the bytes of
# summing hours (--hours) for every window kind; so does cnt-series for a
# series of whole days (tests/series.bats); cnt-diff compares them after
# the hours (a day record changed by python3-avro is found); every other
# reader of bucket files ignores them (no double count); cnt-expire keeps a
# day record while a window reaches it; corrupt day containers are errors.

bats_require_minimum_version 1.5.0

DATA="$BATS_TEST_DIRNAME/data/days"
DEFS="$DATA/defs.json"
PY=/usr/bin/python3

command -v cnt-accumulate >/dev/null 2>&1 || PATH="$BATS_TEST_DIRNAME/../build/bin:$PATH"

# windowed JSONL LOG1 LOG2: the events of JSONL admitted into two logs,
# the spring ones on 04-15 (ber/pts, lateness 30 days: those before 03-16
# are late) and the autumn ones on 11-15, then deduplicated and windowed
# (2 shards) to stdout.
windowed() {
	jq -c 'select(.event_time < 1780000000000)' "$1" >"$1.spring"
	jq -c 'select(.event_time >= 1780000000000)' "$1" >"$1.autumn"
	cnt-ingest -d "$DEFS" --now 2026-04-15T00:00:00Z --max-past 400d -o "$2" "$1.spring"
	cnt-ingest -d "$DEFS" --now 2026-11-15T00:00:00Z --max-past 400d -o "$3" "$1.autumn"
	cat "$2" "$3" | cnt-dedup -d "$DEFS" | cnt-window -d "$DEFS" --shards 2
}

setup_file() {
	set -o pipefail
	cd "$BATS_FILE_TMPDIR"
	"$PY" "$DATA/gen-days.py" 7 4000 >in.jsonl
	windowed in.jsonl log1.avro log2.avro >win.avro
	cnt-accumulate -o hours.avro win.avro
	cnt-accumulate -d "$DEFS" -o days.avro win.avro --stats acc.json
	# the same hours with Berlin's days counted in UTC (its timezone changed)
	jq '(.tenants[] | select(.tenant_id == "ber") | .timezone) = "UTC"' "$DEFS" >utc-defs.json
	cnt-accumulate -d utc-defs.json -o wrongzone.avro win.avro
	# the day container alone, as JSON lines (cnt-cat prints the
	# containers one after the other: the hourly records first)
	cnt-cat days.avro | tail -n +"$(($(cnt-cat --count hours.avro) + 1))" >days.jsonl
	cnt-cat hours.avro >hours.jsonl
}

setup() {
	set -o pipefail
	cd "$BATS_TEST_TMPDIR"
	F=$BATS_FILE_TMPDIR
}

@test "cnt-accumulate -d: the hourly container unchanged, then a day container marked cnt.rollup=day" {
	# the bytes without -d are a prefix of the bytes with it
	cmp -n "$(stat -c %s "$F/hours.avro")" "$F/hours.avro" "$F/days.avro"
	[ "$(stat -c %s "$F/days.avro")" -gt "$(stat -c %s "$F/hours.avro")" ]
	cnt-cat --meta "$F/days.avro" | jq -s -e 'length == 2 and (.[0].metadata | has("cnt.rollup") | not) and
		.[1].metadata["cnt.rollup"] == "day"'
	n=$(wc -l <"$F/days.jsonl")
	[ "$n" -gt 100 ]
	jq -e --argjson n "$n" '.day_records == $n' "$F/acc.json"
	# through a pipe too: the same bytes
	cnt-accumulate -d "$DEFS" -c zstandard "$F/win.avro" | cat >pipe.avro
	cmp pipe.avro "$F/days.avro"
	cnt-accumulate -d "$DEFS" "$F/win.avro" | cnt-accumulate -d "$DEFS" -o again.avro
	cmp again.avro "$F/days.avro"
}

@test "day records are the exact unions of their local day's hours; DST days are 23 and 25 hours" {
	"$PY" - "$F/hours.jsonl" "$F/days.jsonl" <<'EOF'
import json, sys
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo
Z = {"ber": ZoneInfo("Europe/Berlin"), "nyc": ZoneInfo("America/New_York"), "utc": ZoneInfo("UTC")}
def day_of(tenant, ms):
    z = Z[tenant]
    d = datetime.fromtimestamp(ms / 1000, timezone.utc).astimezone(z).date()
    s = datetime(d.year, d.month, d.day, tzinfo=z)
    e = s + timedelta(days=1)
    e = datetime(e.year, e.month, e.day, tzinfo=z)
    return int(s.timestamp() * 1000), int(e.timestamp() * 1000)
KEY = ("tenant_id", "counter_id", "counter_version", "member_ref", "dim", "dim_value")
want = {}
for l in open(sys.argv[1]):
    h = json.loads(l)
    s, e = day_of(h["tenant_id"], h["bucket_start"])
    assert h["bucket_end"] <= e, h
    k = tuple(h.get(f, "") for f in KEY) + (s, h["shard"])
    w = want.setdefault(k, {"bucket_end": e, "count": 0, "sum": 0, "late_count": 0, "late_sum": 0,
        "min": None, "max": None, "last": None, "ingest": None, "hours": 0})
    w["hours"] += 1
    for f in ("count", "sum", "late_count", "late_sum"):
        w[f] += h[f]
    if h["min"] is not None:
        w["min"] = h["min"] if w["min"] is None else min(w["min"], h["min"])
    if h["max"] is not None:
        w["max"] = h["max"] if w["max"] is None else max(w["max"], h["max"])
    for f, t, n in (("last", "last_event_time", "last_event_count"), ("ingest", "max_ingest_time", "max_ingest_count")):
        if h[t] is None:
            continue
        if w[f] is None or h[t] > w[f][0]:
            w[f] = [h[t], h[n]]
        elif h[t] == w[f][0]:
            w[f][1] += h[n]
got = {}
order = []
for l in open(sys.argv[2]):
    d = json.loads(l)
    k = tuple(d.get(f, "") for f in KEY) + (d["bucket_start"], d["shard"])
    assert k not in got, k
    got[k] = d
    order.append(k)
assert set(got) == set(want), (len(got), len(want))
assert order == sorted(order, key=lambda k: (k[0].encode(), k[1].encode(), k[2], k[3].encode(), k[4].encode(), k[5].encode(), k[6], k[7]))
lengths = set()
for k, w in want.items():
    d = got[k]
    assert d["bucket_end"] == w["bucket_end"], (k, d)
    for f in ("count", "sum", "late_count", "late_sum", "min", "max"):
        assert d[f] == w[f], (k, f, d[f], w[f])
    assert [d["last_event_time"], d["last_event_count"]] == (w["last"] or [None, 0]), (k, d)
    assert [d["max_ingest_time"], d["max_ingest_count"]] == w["ingest"], (k, d)
    assert (d["sketch"] is None) == (k[1] != "uniq"), k
    lengths.add((k[0], (d["bucket_end"] - d["bucket_start"]) // 3600000))
# DST days: 23 and 25 hours in both zones, and 24 elsewhere
assert lengths == {("ber", 23), ("ber", 24), ("ber", 25), ("nyc", 23), ("nyc", 24), ("nyc", 25), ("utc", 24)}, lengths
print(len(got), "day records from", sum(w["hours"] for w in want.values()), "hourly")
EOF
	# the spring-forward days by name
	jq -e -s '[.[] | select(.tenant_id == "ber" and .bucket_start == 1774738800000)] |
		length > 0 and all(.bucket_end - .bucket_start == 82800000)' "$F/days.jsonl"
	jq -e -s '[.[] | select(.tenant_id == "nyc" and .bucket_start == 1793505600000)] |
		length > 0 and all(.bucket_end - .bucket_start == 90000000)' "$F/days.jsonl"
}

@test "roll-up bytes are the same for any split, order, spill and merge of the input" {
	cnt-cat "$F/win.avro" >/dev/null
	# three parts of the windowed events, in a shuffled order, each its
	# own bucket file (with day records), merged
	cnt-cat --count "$F/win.avro" >n
	# spilled: an input of its own, since the fixture's groups fit in the
	# smallest limit (1M); counted with and without it
	"$PY" "$DATA/gen-days.py" 8 16000 >big.jsonl
	windowed big.jsonl b1.avro b2.avro >bw.avro
	cnt-accumulate -d "$DEFS" -o big.avro bw.avro
	cnt-accumulate -d "$DEFS" -m 1M -o spill.avro bw.avro --stats st.json
	jq -e '.spill_runs > 1' st.json
	cmp spill.avro big.avro
	"$PY" - "$F/in.jsonl" <<'EOF'
import random, sys
lines = open(sys.argv[1]).read().splitlines()
random.Random(3).shuffle(lines)
for i in range(3):
    open(f"part{i}.jsonl", "w").write("\n".join(lines[i::3]) + "\n")
EOF
	for i in 0 1 2; do
		jq -c 'select(.event_time < 1780000000000)' part$i.jsonl >s$i.jsonl
		jq -c 'select(.event_time >= 1780000000000)' part$i.jsonl >a$i.jsonl
		cnt-ingest -d "$DEFS" --now 2026-04-15T00:00:00Z --max-past 400d -o l1.$i.avro s$i.jsonl
		cnt-ingest -d "$DEFS" --now 2026-11-15T00:00:00Z --max-past 400d -o l2.$i.avro a$i.jsonl
	done
	# dedup needs every retry seen by one state: one dedup, then split windowed
	cat l1.*.avro l2.*.avro | cnt-dedup -d "$DEFS" | cnt-window -d "$DEFS" --shards 2 >w.avro
	cnt-accumulate -d "$DEFS" -o all.avro w.avro
	cmp all.avro "$F/days.avro"
	# bucket files with day records merged, with -d: the same bytes, whatever
	# their day records (read back, never trusted)
	cnt-accumulate -d "$DEFS" -o p1.avro l1.0.avro 2>/dev/null || true
	cnt-cat w.avro >w.jsonl
	cnt-accumulate -d "$DEFS" -o m.avro "$F/days.avro" "$F/hours.avro" "$F/days.avro" --stats mst.json
	# merging a file with itself doubles it: compare with hours doubled
	cnt-accumulate -d "$DEFS" -o m2.avro "$F/hours.avro" "$F/hours.avro" "$F/hours.avro"
	cmp m.avro m2.avro
	cnt-accumulate -d "$DEFS" -o once.avro "$F/days.avro"
	cmp once.avro "$F/days.avro"
	cnt-accumulate -d "$DEFS" -o merged-parts.avro <(cnt-accumulate -d "$DEFS" "$F/win.avro") 
	cmp merged-parts.avro "$F/days.avro"
	# without -d, merging drops the day records: exactly the hourly file
	cnt-accumulate -o h.avro "$F/days.avro"
	cmp h.avro "$F/hours.avro"
}

# boards NOW...: every board of the definitions at each --now (seasons by
# name): the view built from day records and the one from hours alone
# (--hours) must be the same bytes; prints "board now days-used" lines.
check_boards() {
	local b now s args
	for now in "$@"; do
		for b in $(jq -r '.leaderboards[].board_id' "$DEFS"); do
			for s in $(jq -r --arg b "$b" '[.seasons[] | select(.board_id == $b) | .season_id] | if length == 0 then ["-"] else . end | .[]' "$DEFS"); do
				args=(-d "$DEFS" -b "$b" --now "$now")
				[ "$s" = - ] || args+=(--season "$s")
				rm -rf vd vh
				cnt-project "${args[@]}" -w vd --stats std.json "$F/days.avro"
				cnt-project "${args[@]}" -w vh --hours --stats sth.json "$F/days.avro"
				cmp vd/"$b"/global/current/view.avro vh/"$b"/global/current/view.avro
				jq -e '.day_rollups == false' sth.json >/dev/null
				echo "$b $s $now $(jq .day_rollups std.json) $(jq .in std.json) $(jq .in sth.json)"
			done
		done
	done
}

@test "every window kind composed from day records gives exactly the bytes of summing hours" {
	check_boards 2026-03-08T12:00:00Z 2026-03-29T23:30:00Z 2026-04-05T00:00:00Z 2026-11-01T05:00:00Z >runs
	cat runs
	# whole-day windows read the day records (fewer of them), the others hours
	grep -q '^ber_season march .* true ' runs
	grep -q '^ber_season noon .* false ' runs
	grep -q '^nyc_range - .* false ' runs
	grep -q '^ber_range - .* true ' runs
	! grep -q '^ber_r24 .* true ' runs
	! grep -q '^nyc_r24 .* true ' runs
	for b in ber_day ber_week ber_month ber_30d ber_all nyc_day nyc_week nyc_month nyc_30d nyc_all nyc_uniq ber_best utc_month; do
		grep -q "^$b - .* true " runs
	done
	# the day path reads fewer records than the hour path
	awk '$4 == "true" && $5 >= $6 { exit 1 }' runs
	# and the views hold members (a window with nothing in it proves little)
	cnt-project -d "$DEFS" -b ber_season --season march --now 2026-04-05T00:00:00Z -w v "$F/days.avro"
	[ "$(cnt-cat v/ber_season/global/current/view.avro | wc -l)" -gt 5 ]
	cnt-project -d "$DEFS" -b nyc_uniq --now 2026-11-01T05:00:00Z -w v "$F/days.avro"
	[ "$(cnt-cat v/nyc_uniq/global/current/view.avro | wc -l)" -gt 5 ]
}

@test "views from a file with day records are the bytes of views from the hourly file" {
	for b in ber_month nyc_30d nyc_uniq; do
		cnt-project -d "$DEFS" -b "$b" --now 2026-03-29T23:30:00Z -w a "$F/days.avro"
		cnt-project -d "$DEFS" -b "$b" --now 2026-03-29T23:30:00Z -w b "$F/hours.avro"
		cmp a/"$b"/global/current/view.avro b/"$b"/global/current/view.avro
	done
	# several input files: each read by its own kind
	cnt-project -d "$DEFS" -b ber_all --now 2026-11-15T00:00:00Z -w two "$F/days.avro" "$F/hours.avro"
	cnt-project -d "$DEFS" -b ber_all --now 2026-11-15T00:00:00Z -w twoh --hours "$F/days.avro" "$F/hours.avro"
	cmp two/ber_all/global/current/view.avro twoh/ber_all/global/current/view.avro
}

@test "cnt-diff compares day records after the hours: a changed day record, another zone's days, days on one side only, --no-days" {
	n=$(wc -l <"$F/days.jsonl")
	h=$(wc -l <"$F/hours.jsonl")
	run -0 cnt-diff -v --stats st.json "$F/days.avro" "$F/days.avro"
	[ "${lines[1]}" = "cnt-diff: of which day records: $n left, $n right: 0 only left, 0 only right, 0 changed" ]
	jq -e --argjson n "$n" --argjson h "$h" '.left == $n + $h and .equal and
		.days == {compared: true, in_left: true, in_right: true, left: $n, right: $n, only_left: 0,
		          only_right: 0, changed: 0}' st.json
	# a day record changed (its hours not): one difference, marked as a day's
	cnt-accumulate -d "$DEFS" -c null -o null.avro "$F/win.avro"
	# (a breakdown record: its key names its dimension and value, which a
	# member's total record of the same bucket lacks)
	i=$(jq -s 'map(.dim != "") | index(true)' "$F/days.jsonl")
	v=$(jq -rs --argjson i "$i" '.[$i].dim_value' "$F/days.jsonl")
	read -r m start < <("$PY" "$DATA/raise-day-count.py" null.avro tampered.avro "$i")
	run -0 cnt-diff "$F/days.avro" null.avro
	run -1 --separate-stderr cnt-diff --stats st.json "$F/days.avro" tampered.avro
	[ -z "$stderr" ]
	[ "${#lines[@]}" -eq 1 ]
	echo "$output" | jq -e --arg m "$m" --argjson s "$start" --arg v "$v" '.key.member_ref == $m and
		.key.bucket_start == $s and .key.rollup == "day" and .key.dim == "country" and
		.key.dim_value == $v and .right.count == .left.count + 1'
	jq -e '.changed == 1 and .days.changed == 1 and .only_left + .only_right == 0' st.json
	run -0 cnt-diff --no-days --stats st.json "$F/days.avro" tampered.avro
	[ -z "$output" ]
	jq -e '.days.compared == false and .days.left == 0 and .equal' st.json
	# the same hours counted under another timezone: only the days differ
	run -1 --separate-stderr cnt-diff --stats st.json "$F/days.avro" "$F/wrongzone.avro"
	[ -z "$stderr" ]
	echo "$output" | jq -e -s 'all(.[]; .key.rollup == "day" and .key.tenant_id == "ber" and
		(.left == null) != (.right == null) and (.key | has("dim")) == (((.left // .right).dim // "") != ""))'
	jq -e '.changed == 0 and .only_left > 0 and .only_right > 0 and
		.only_left == .days.only_left and .only_right == .days.only_right' st.json
	run -0 cnt-diff --no-days "$F/days.avro" "$F/wrongzone.avro"
	# a file with day roll-ups against one without: every day record is a
	# difference, and a note says why
	run -1 --separate-stderr cnt-diff --stats st.json "$F/hours.avro" "$F/days.avro"
	[ "$stderr" = "cnt-diff: '$F/days.avro' has $n day records and '$F/hours.avro' has none: each is a difference (--no-days compares hourly records only)" ]
	[ "$(echo "$output" | jq -s 'map(select(.key.rollup == "day" and .left == null)) | length')" -eq "$n" ]
	jq -e --argjson n "$n" '.only_right == $n and .days.in_left == false and .days.in_right' st.json
	run -1 --separate-stderr cnt-diff -q "$F/hours.avro" "$F/days.avro"
	[ -z "$output" ] && [ -z "$stderr" ]
	run -0 cnt-diff --no-days "$F/hours.avro" "$F/days.avro"
	[ -z "$output" ]
	# two files joined: hourly records after day records is not a bucket file
	cat "$F/days.avro" "$F/days.avro" >joined.avro
	run -2 cnt-diff joined.avro "$F/days.avro"
	[ "$output" = "cnt-diff: 'joined.avro' record $((n + h + 1)): an hourly record after the day roll-ups, so this is not one bucket file as cnt-accumulate writes it (two files joined? merge them with 'cnt-accumulate -d DEFS FILE...')" ]
	# also when the day records are not compared (counted as hourly ones)
	run -2 cnt-diff --no-days joined.avro "$F/days.avro"
	[ "$output" = "cnt-diff: 'joined.avro' record $((h + 1)): an hourly record after the day roll-ups, so this is not one bucket file as cnt-accumulate writes it (two files joined? merge them with 'cnt-accumulate -d DEFS FILE...')" ]
	# an empty day container counts as none: standard input named as such
	printf '' | cnt-ingest -d "$DEFS" --now 2026-04-15T00:00:00Z -o empty-log.avro -
	cnt-window -d "$DEFS" empty-log.avro | cnt-accumulate -d "$DEFS" -o empty.avro
	run -1 --separate-stderr cnt-diff - "$F/days.avro" <empty.avro
	[ "$stderr" = "cnt-diff: '$F/days.avro' has $n day records and 'standard input' has none: each is a difference (--no-days compares hourly records only)" ]
	# views have no day roll-ups
	run -2 cnt-diff --no-days . .
	[ "${lines[0]}" = "cnt-diff: --no-days is for bucket files: views have no day roll-ups" ]
}

@test "readers of hourly records ignore day records (seal, rebuild, merge); cnt-series' days give the rows of hours" {
	# cnt-series, hourly and daily (daily from the day records)
	for g in hour day; do
		cnt-series -d "$DEFS" --counter ber/pts --from 2026-03-01T00:00:00Z --to 2026-04-01T00:00:00Z \
			--granularity $g -F json "$F/hours.avro" >h.$g
		cnt-series -d "$DEFS" --counter ber/pts --from 2026-03-01T00:00:00Z --to 2026-04-01T00:00:00Z \
			--granularity $g -F json "$F/days.avro" >d.$g
		[ -s h.$g ]
		cmp h.$g d.$g
	done
	# cnt-seal closes a season from day records with the standings of hours
	cnt-seal close -d "$DEFS" --season march --sealed s1 --now 2026-05-05T00:00:00Z "$F/days.avro"
	cnt-seal close -d "$DEFS" --season march --sealed s2 --now 2026-05-05T00:00:00Z "$F/hours.avro"
	diff <(cnt-seal show --season march --sealed s1 -F json) <(cnt-seal show --season march --sealed s2 -F json)
	# cnt-accumulate counts each event once (conservation holds)
	cnt-accumulate -o m.avro "$F/days.avro" --stats st.json
	jq -e '.buckets_in == '"$(cnt-cat --count "$F/hours.avro")" st.json
}

@test "cnt-retract --rebuild of a file with day records rebuilds them; of an hourly file, not" {
	cat "$F/log1.avro" "$F/log2.avro" >log.avro
	# nothing retracted: the very same bytes, day records included
	cnt-retract --rebuild "$F/days.avro" -d "$DEFS" --shards 2 -o r.avro log.avro
	cmp r.avro "$F/days.avro"
	cnt-retract --rebuild "$F/hours.avro" -d "$DEFS" --shards 2 -o rh.avro log.avro
	cmp rh.avro "$F/hours.avro"
}

@test "cnt-expire keeps a day record while a window reaches it, into a day container of its own" {
	cnt-expire -d "$DEFS" --now 2026-11-15T00:00:00Z -o e-days.avro --stats st.json "$F/days.avro" >rep
	cnt-expire -d "$DEFS" --now 2026-11-15T00:00:00Z -o e-hours.avro "$F/hours.avro" >/dev/null
	jq -e '.day_records_expired > 0 and .day_records_kept > 0' st.json
	# the hourly part is the hourly file's expiry, and the day records left
	# are exactly the roll-ups of the hours left (utc/pts has no all_time
	# board: its old months go; ber/pts has one: it stays whole)
	cmp -n "$(stat -c %s e-hours.avro)" e-hours.avro e-days.avro
	cnt-accumulate -d "$DEFS" -o again.avro e-hours.avro
	cmp again.avro e-days.avro
	cnt-cat --meta e-days.avro | jq -s -e '.[1].metadata["cnt.rollup"] == "day"'
	# a board still open is the same after expiry
	cnt-project -d "$DEFS" -b utc_month --now 2026-11-15T00:00:00Z -w a e-days.avro
	cnt-project -d "$DEFS" -b utc_month --now 2026-11-15T00:00:00Z -w b --hours "$F/days.avro"
	cmp a/utc_month/global/current/view.avro b/utc_month/global/current/view.avro
	# the report names day runs too
	grep -q '"tenant_id":"utc"' rep
}

@test "a day container without records is kept, like any other: cnt-expire and cnt-retract --rebuild" {
	# nothing counted: an hourly container and a day container, both empty
	printf '' | cnt-ingest -d "$DEFS" --now 2026-04-15T00:00:00Z -o empty-log.avro -
	cnt-window -d "$DEFS" -o empty-win.avro empty-log.avro
	cnt-accumulate -d "$DEFS" -o empty.avro empty-win.avro
	cnt-cat --meta empty.avro | jq -s -e 'length == 2 and .[1].metadata["cnt.rollup"] == "day"'
	# expiry frees nothing and writes the same bytes
	cnt-expire -d "$DEFS" --now 2026-11-15T00:00:00Z -o e.avro --stats st.json empty.avro >/dev/null
	jq -e '.bytes_freed == 0' st.json
	cmp e.avro empty.avro
	# a rebuild with nothing to retract is the same bytes
	cnt-retract --rebuild empty.avro -d "$DEFS" --shards 2 -o r.avro empty-log.avro
	cmp r.avro empty.avro
}

@test "corrupt day containers are clear errors, never a wrong count" {
	size=$(stat -c %s "$F/days.avro")
	hsize=$(stat -c %s "$F/hours.avro")
	# cut inside the day container
	head -c $(((size + hsize) / 2)) "$F/days.avro" >cut.avro
	run -2 cnt-project -d "$DEFS" -b ber_all -w v cut.avro
	[[ $output == *cut.avro* ]]
	[ ! -e v/ber_all ]
	# an unknown roll-up kind
	"$PY" -c 'import sys; b = open(sys.argv[1], "rb").read(); i = b.rindex(b"\x14cnt.rollup\x06day"); open("kind.avro", "wb").write(b[:i] + b"\x14cnt.rollup\x06dai" + b[i + 15:])' "$F/days.avro"
	run -2 cnt-project -d "$DEFS" -b ber_all -w v kind.avro
	[[ $output == *"unknown roll-up kind"* ]]
	run -2 cnt-project -d "$DEFS" -b ber_all -w v --hours kind.avro
	[[ $output == *"unknown roll-up kind"* ]]
	run -2 cnt-accumulate -o x.avro kind.avro
	[[ $output == *"unknown roll-up kind"* ]]
	# garbage where the day container should begin
	{ cat "$F/hours.avro"; printf 'garbage'; } >junk.avro
	run -2 cnt-project -d "$DEFS" -b ber_all -w v junk.avro
	[[ $output == *junk.avro* ]]
	# day records of another zone (the tenant's timezone changed): refused
	run -2 cnt-project -d "$DEFS" -b ber_all -w v "$F/wrongzone.avro"
	[[ $output == *"not a local day of Europe/Berlin"* ]]
	# a tenant the definitions do not declare
	jq 'del(.tenants[] | select(.tenant_id == "utc")) | del(.counters[] | select(.tenant_id == "utc")) |
		del(.leaderboards[] | select(.tenant_id == "utc"))' "$DEFS" >no-utc.json
	run -2 cnt-accumulate -d no-utc.json -o x.avro "$F/win.avro"
	[[ $output == *"tenant 'utc' is not declared"* ]]
	[ ! -e x.avro ]
}

@test "options: -d with --split-tenants is a usage error; a missing definitions file is an error" {
	run -2 cnt-accumulate -d "$DEFS" --split-tenants out "$F/win.avro"
	[[ $output == *"exclude each other"* ]]
	run -2 cnt-accumulate -d nosuch.json -o x.avro "$F/win.avro"
	[[ $output == *nosuch.json* ]]
	[ ! -e x.avro ]
}
