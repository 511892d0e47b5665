#!/usr/bin/env bats
# cnt-expire: a bucket that no declared window can reach any more is left
# out mechanically (the windows of the counter versions and of the boards,
# taken at --now in the tenant's zone), checked against a Python
# computation of the same rule; the output is the bucket file a rebuild
# from the kept buckets' events writes, byte for byte.

bats_require_minimum_version 1.5.0

DATA="$BATS_TEST_DIRNAME/data/expire"
DEFS="$DATA/definitions.json"
PY=/usr/bin/python3
NOW=2026-11-30T13:00:00Z

# events every 5 hours from 1 November to --now for the three counters
gen() {
	"$PY" - <<'PYEOF'
import json
from datetime import datetime, timedelta, timezone
t = datetime(2026, 11, 1, 0, 30, tzinfo=timezone.utc)
i = 0
while t < datetime(2026, 11, 30, 13, tzinfo=timezone.utc):
    for c in ("steps", "races", "total"):
        i += 1
        print(json.dumps({"tenant_id": "acme", "counter_id": c, "member_ref": "m%d" % (i % 3),
                          "delta": i % 7 + 1, "event_time": t.strftime("%Y-%m-%dT%H:%M:%SZ"),
                          "idempotency_key": "k%d" % i}))
    t += timedelta(hours=5)
PYEOF
}

# kept NOW: the events whose buckets the rule keeps at NOW (an independent
# statement of cnt-expire(1), "What reaches a bucket")
kept() {
	"$PY" - "$1" <<'PYEOF'
import json, sys
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo
z = ZoneInfo("Europe/Berlin")
now = datetime.fromisoformat(sys.argv[1].replace("Z", "+00:00"))
local = now.astimezone(z)
week_from = datetime(local.year, local.month, local.day, tzinfo=z) - timedelta(days=6)
day_from = datetime(local.year, local.month, local.day, tzinfo=z)
spans = [(datetime(2026, 11, 10, tzinfo=z), datetime(2026, 11, 12, tzinfo=z)),
         (datetime(2026, 11, 20, tzinfo=z), datetime(2026, 11, 22, tzinfo=z))]
for line in open("in.jsonl"):
    e = json.loads(line)
    t = datetime.fromisoformat(e["event_time"].replace("Z", "+00:00"))
    start = t.astimezone(z).replace(minute=0, second=0)
    end = start + timedelta(hours=1)
    c = e["counter_id"]
    if c == "total" or (c == "steps" and end > min(week_from, day_from)) or \
       (c == "races" and any(start < b and end > a for a, b in spans)):
        sys.stdout.write(line)
PYEOF
}

chain() { # EVENTS OUT
	cnt-ingest -d "$DEFS" --now "$NOW" --max-past 60d -o "$1.avro" "$1"
	cnt-dedup -d "$DEFS" "$1.avro" | cnt-window -d "$DEFS" | cnt-accumulate -o "$2"
}

setup() {
	set -o pipefail
	cd "$BATS_TEST_TMPDIR"
	gen >in.jsonl
	chain in.jsonl b.avro
}

@test "cnt-expire leaves out exactly the buckets no window reaches, and gives the bytes of a rebuild from the kept buckets' events" {
	kept "$NOW" >kept.jsonl
	[ "$(wc -l <kept.jsonl)" -lt "$(wc -l <in.jsonl)" ]
	chain kept.jsonl want.avro
	run -0 cnt-expire -d "$DEFS" --now "$NOW" -o got.avro --stats st.json b.avro
	cmp got.avro want.avro
	[ "$(jq .balanced st.json)" = true ]
	[ "$(jq .expired st.json)" -gt 0 ]
	[ "$(jq '.in - .out' st.json)" = "$(jq .expired st.json)" ]
	# one line per counter version that lost records, then the file's
	echo "$output" | head -n 2 | jq -e -s 'map(.counter_id) == ["races", "steps"]'
	echo "$output" | tail -n 1 | jq -e '.file == "b.avro" and .dry_run == false and
		.bytes_freed == .bytes - .bytes_after and .bytes_freed > 0'
	[ "$(echo "$output" | tail -n 1 | jq .bytes_after)" = "$(wc -c <got.avro)" ]
	[ "$(echo "$output" | tail -n 1 | jq .bytes)" = "$(wc -c <b.avro)" ]
}

@test "cnt-expire: a later --now expires more, never less, and expiring twice at one time changes nothing" {
	run -0 cnt-expire -d "$DEFS" --now "$NOW" -o one.avro b.avro
	run -0 cnt-expire -d "$DEFS" --now "$NOW" -o two.avro one.avro
	cmp one.avro two.avro
	[ "$(echo "$output" | tail -n 1 | jq .expired)" = 0 ]
	run -0 cnt-expire -d "$DEFS" --now 2026-12-20T00:00:00Z -o later.avro one.avro
	[ "$(echo "$output" | tail -n 1 | jq .expired)" -gt 0 ]
	# every record left later was left before
	cnt-cat later.avro | jq -c . | sort >later.txt
	cnt-cat one.avro | jq -c . | sort >one.txt
	[ -z "$(comm -23 later.txt one.txt)" ]
	# after all its day and week windows passed, steps has nothing left; races and total keep theirs
	run -0 sh -c "cnt-cat later.avro | jq -r .counter_id | sort -u"
	[ "$output" = "$(printf 'races\ntotal')" ]
}

@test "cnt-expire replaces the file in place; --dry-run writes nothing and says the same" {
	cp b.avro orig.avro
	run -0 cnt-expire -d "$DEFS" --now "$NOW" --dry-run b.avro
	dry=$(echo "$output" | tail -n 1)
	cmp b.avro orig.avro
	echo "$dry" | jq -e '.dry_run == true and .expired > 0'
	run -0 cnt-expire -d "$DEFS" --now "$NOW" -v b.avro
	real=$(echo "$output" | grep '"file"')
	[ "$(echo "$dry" | jq -c 'del(.dry_run)')" = "$(echo "$real" | jq -c 'del(.dry_run)')" ]
	! cmp -s b.avro orig.avro
	cnt-expire -d "$DEFS" --now "$NOW" -o want.avro orig.avro >/dev/null
	cmp b.avro want.avro
	[ -z "$(find . -mindepth 1 -name '.*' -newer orig.avro)" ]
}

@test "cnt-expire keeps what the definitions do not declare, and counts it" {
	jq 'del(.counters[] | select(.counter_id == "total"))' "$DEFS" >less.json
	run -0 cnt-expire -d less.json --now "$NOW" -o got.avro --stats st.json b.avro
	n=$(cnt-cat b.avro | jq -r 'select(.counter_id == "total")' | jq -s length)
	[ "$(jq .unknown st.json)" = "$n" ]
	[ "$(cnt-cat got.avro | jq -r 'select(.counter_id == "total")' | jq -s length)" = "$n" ]
}

@test "cnt-expire refuses what it cannot judge, and leaves the file as it was" {
	cp b.avro orig.avro
	run -2 cnt-expire --now "$NOW" b.avro
	[[ "$output" == *"-d definitions is needed"* ]]
	run -2 cnt-expire -d "$DEFS" --now "$NOW" - <b.avro
	[[ "$output" == *"cannot be standard input"* ]]
	run -2 cnt-expire -d "$DEFS" --dry-run -o x.avro b.avro
	[ ! -e x.avro ]
	# counted under another definition of the same version
	jq '(.counters[] | select(.counter_id == "steps") | .versions[0].bounds_hi) = 5' "$DEFS" >other.json
	run -2 cnt-expire -d other.json --now "$NOW" b.avro
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *"steps v1"* ]]
	cmp b.avro orig.avro
	# a damaged file: one line, nothing written
	head -c 3000 orig.avro >cut.avro
	run -2 cnt-expire -d "$DEFS" --now "$NOW" cut.avro
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == cnt-expire:*cut.avro* ]]
	cmp cut.avro <(head -c 3000 orig.avro)
	[ -z "$(find . -mindepth 1 -name '.*')" ]
}
