#!/bin/sh
# A day of video views counted as seed 002 designs it: the watch-time gate
# and the inline invalid-traffic filters at admission, the fast count, the
# display guard, one creator's breakdown by country, the batch audit that
# retracts a lockstep ring, the verified count, and the canary.
#
#   sh examples/views.sh            (after make; tests/run-all.sh runs it)
#
# The platform "vidly" (examples/views/definitions.json, Sao Paulo time)
# counts one view per (viewer, video) a day: a beacon counts when the
# viewer watched at least 10 s; known bots, data-centre addresses and more
# than 10 beacons a minute from one viewer are refused at the door.  The
# day (examples/views/day.jsonl, written by make-beacons.py, which says
# what is in it) is 2026-06-08; its beacons arrive in two batches, those
# before 18:00 at 18:05 and the rest at 00:30 the next night.  Every
# figure below is checked: the script exits non-zero at the first step
# that differs.  Files go to $BUILD/views (kept; emptied first) or to
# CNT_DEMO_DIR, which must be new or empty.
set -eu
cd "$(dirname "$0")/.."

BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD="$PWD/$BUILD" ;; esac
EX="$PWD/examples/views"
for t in cnt-ingest cnt-dedup cnt-window cnt-accumulate cnt-project cnt-rank cnt-retract cnt-audit \
	cnt-series cnt-canary cnt-stats cnt-cat; do
	if [ ! -x "$BUILD/bin/$t" ]; then
		echo "views: $BUILD/bin/$t is missing: run 'make' first" >&2
		exit 2
	fi
done
command -v jq >/dev/null 2>&1 || { echo "views: jq is missing: run ./scripts/install-deps.sh" >&2; exit 2; }
PATH="$BUILD/bin:$PATH"
export PATH

if [ -n "${CNT_DEMO_DIR:-}" ]; then
	dir=$CNT_DEMO_DIR
	if [ -d "$dir" ] && [ -n "$(ls -A "$dir")" ]; then
		echo "views: CNT_DEMO_DIR '$dir' is not empty; give a new or empty directory" >&2
		exit 2
	fi
	mkdir -p "$dir"
else
	dir="$BUILD/views"
	rm -rf "$dir"
	mkdir -p "$dir"
fi
cd "$dir"
cp "$EX/definitions.json" "$EX/bots.txt" "$EX/datacenters.txt" .
D=definitions.json
echo "views: the files it writes are kept in $dir"

step() { printf '\n== %s\n' "$*"; }
# expect WHAT ACTUAL WANTED
expect() {
	if [ "$2" != "$3" ]; then
		echo "views: $1: got '$2', expected '$3'" >&2
		exit 1
	fi
	echo "ok: $1 = $3"
}
# value BOARD-ARGS... MEMBER: the served value of MEMBER (JSON answer kept in ans.json)
value() { cnt-rank -w views -b vidly-views --guard guard.txt "$@" >ans.json; jq -r .value ans.json; }

step "Admission: the two batches of the day through cnt-ingest"
# The evening batch is the beacons from 18:00 on; the rest is the day's first batch.
jq -c 'select(.event_time[11:13] < "18")' "$EX/day.jsonl" >batch-a.jsonl
jq -c 'select(.event_time[11:13] >= "18")' "$EX/day.jsonl" >batch-b.jsonl
cnt-ingest -d $D --now 2026-06-08T21:05:00Z -o log-a.avro -r rejects-a.jsonl --stats ingest-a.json batch-a.jsonl
cnt-ingest -d $D --now 2026-06-09T03:30:00Z -o log-b.avro -r rejects-b.jsonl --stats ingest.json batch-b.jsonl
# 293 beacons: 19 short views (below 10 s), 15 from bot user agents (3
# bots x 5 videos), 15 from the data-centre range (3 addresses x 5
# videos), 30 of the scraper's 40 (the first 10 of its minute pass), 20
# retried beacons (the same idempotency key); 194 reach the log.
jq -s -c '{in: map(.in) | add, out: map(.out) | add, duplicates: map(.duplicates) | add,
	reasons: (map(.rejected_by_reason | to_entries[] | select(.value > 0)) | group_by(.key)
		| map({(.[0].key): (map(.value) | add)}) | add)}' ingest-a.json ingest.json >admitted.json
cat admitted.json
expect "beacons in" "$(jq .in admitted.json)" 293
expect "admitted" "$(jq .out admitted.json)" 194
expect "retried beacons" "$(jq .duplicates admitted.json)" 20
expect "rejects by reason" "$(jq -c .reasons admitted.json)" \
	'{"below_watch_time":19,"ivt_address":15,"ivt_rate":30,"ivt_user_agent":15}'
expect "reject lines" "$(cat rejects-a.jsonl rejects-b.jsonl | wc -l | tr -d ' ')" 79

step "The fast count, batch by batch, through the display guard"
cnt-dedup -d $D -s dedup.state -o counted-a.avro log-a.avro
cnt-window -d $D counted-a.avro | cnt-accumulate -o buckets-a.avro
cnt-project -d $D -b vidly-views -w views --now 2026-06-08T21:05:00Z buckets-a.avro
# v-ben-1 before 18:00: 12 views by honest viewers.
expect "v-ben-1 at 18:05 (fast)" "$(value --now 2026-06-08T21:05:00Z value v-ben-1)" 12
cnt-dedup -d $D -s dedup.state --stats dedup.json -o counted-b.avro log-b.avro
cnt-window -d $D --stats window.json counted-b.avro | cnt-accumulate --stats accumulate.json -o buckets-b.avro
cnt-accumulate -o buckets.avro buckets-a.avro buckets-b.avro
cnt-project -d $D -b vidly-views -w views --now 2026-06-09T03:30:00Z --stats project.json buckets.avro
# Fast up: the evening adds 8 honest views and the ring's 12.
expect "v-ben-1 at 00:30 (fast, up)" "$(value --now 2026-06-09T03:30:00Z value v-ben-1)" 32
cnt-rank -w views -b vidly-views --now 2026-06-09T03:30:00Z -F table top 5
# Fast down: a view rebuilt from a stale copy of the buckets (the 18:05
# state) says 12; the guard serves 32 and counts the clamp.
cnt-project -d $D -b vidly-views -w views --now 2026-06-09T03:31:00Z buckets-a.avro
expect "v-ben-1 from a stale rebuild (clamped)" "$(value --now 2026-06-09T03:31:00Z value v-ben-1)" 32
expect "clamped" "$(jq -c '[.guard.clamped, .guard.unguarded_value]' ans.json)" '[true,12]'
cnt-project -d $D -b vidly-views -w views --now 2026-06-09T03:32:00Z buckets.avro

step "Creator analytics: c-ana's videos on the day, by country"
cnt-series -d $D --counter vidly/views --creator c-ana --from 2026-06-08 --to 2026-06-09 \
	--granularity day --by country buckets.avro | tee series.txt
expect "c-ana's views from BR" "$(awk '$2 == "BR" { print $3 }' series.txt)" 28

step "The batch audit: the lockstep ring and the scraper, retracted as fraud"
cnt-audit -d $D --tenant vidly --counter views --through 2026-06-09T03:00:00Z --requester ivt-team \
	--authority 'ivt-audit v1' --ledger retractions.jsonl --audits audits.jsonl \
	--now 2026-06-09T06:00:00Z -o fraud.avro -F table log-a.avro log-b.avro | tee audit.txt
# Flagged: the ring r-01..r-12 (3 videos each, seconds apart, all at
# exactly 31 s) and the scraper's 5 counted views: 41.  v-chi-2 is
# inflated: one viewer reloaded it 30 times (60 beacons, 28 viewers).
expect "flagged" "$(jq -s '.[-1].flagged' audits.jsonl)" 41
expect "cause" "$(jq -r .cause retractions.jsonl)" fraud
grep -q '^v-chi-2 .* inflated$' audit.txt || { echo "views: v-chi-2 is not reported inflated" >&2; exit 1; }
echo "ok: v-chi-2 reported inflated"

step "The verified count: the unique counter's touched buckets rebuilt without the fraud"
cnt-retract --rebuild buckets.avro -d $D -o verified-buckets.avro counted-a.avro counted-b.avro fraud.avro
cnt-project -d $D -b vidly-views -w views --now 2026-06-09T06:00:00Z --verified audits.jsonl \
	verified-buckets.avro
# Verified down: 32 less the ring's 12 and the scraper's 1 is 19; the
# guard serves it (the one sanctioned decrease) and its floor drops to it.
expect "v-ben-1 verified" "$(value --now 2026-06-09T06:00:00Z --verified value v-ben-1)" 19
expect "verified answer" "$(jq -c '[.verified, .guard.reset, .as_of]' ans.json)" \
	'[true,true,"2026-06-09T03:00:00.000Z"]'
cnt-series -d $D --counter vidly/views --creator c-ana --from 2026-06-08 --to 2026-06-09 \
	--granularity day --by country verified-buckets.avro >series-verified.txt
expect "c-ana's verified views from BR" "$(awk '$2 == "BR" { print $3 }' series-verified.txt)" 14

step "The next morning: fast up again, from the floor the audit set"
for i in 1 2 3; do
	printf '{"idempotency_key":"c-%d","tenant_id":"vidly","counter_id":"views","member_ref":"v-ben-1","item":"h-10%d","delta":1,"event_time":"2026-06-09T09:0%d:00-03:00","attrs":{"ms_watched":"64000","country":"PT","device":"web","source":"search","creator":"c-ben"}}\n' "$i" "$i" "$i"
done >batch-c.jsonl
cnt-ingest -d $D --now 2026-06-09T12:30:00Z -o log-c.avro batch-c.jsonl
cnt-dedup -d $D -s dedup.state -o counted-c.avro log-c.avro
cnt-window -d $D counted-c.avro | cnt-accumulate -o buckets-c.avro
cnt-accumulate -o buckets2.avro verified-buckets.avro buckets-c.avro
cnt-project -d $D -b vidly-views -w views --now 2026-06-09T12:30:00Z buckets2.avro
expect "v-ben-1 fast after the audit" "$(value --now 2026-06-09T12:30:00Z value v-ben-1)" 22
# A stale rebuild (the verified buckets alone: 19) is clamped to 22, the
# last value served, and never goes back to the pre-audit 32.
cnt-project -d $D -b vidly-views -w views --now 2026-06-09T12:31:00Z verified-buckets.avro
expect "v-ben-1 from a stale rebuild again" "$(value --now 2026-06-09T12:31:00Z value v-ben-1)" 22

step "Tenant separation: another tenant asking is refused"
set +e
cnt-rank -w views -b vidly-views --tenant other top 3 2>refused.txt
st=$?
set -e
expect "status for another tenant" "$st" 5
cat refused.txt

step "The canary: K probes through the whole pipeline, read back out of band"
cnt-canary -d $D --scratch canary --probes 5 --now 2026-06-09T12:31:00Z
cnt-canary -d $D --scratch canary --probes 5 --now 2026-06-09T12:46:00Z --stats canary.json
expect "canary count" "$(jq -c '[.count_before, .count_after]' canary.json)" '[5,10]'
set +e
cnt-canary --check --max-age 30m --scratch canary --now 2026-06-09T13:30:00Z
st=$?
set -e
expect "status of a canary not reporting for 44 minutes" "$st" 1
# Probes never reach a real standing, even sent into the real pipeline
# under a real video's name: they belong to the probe tenant, which no
# board may rank (the definitions refuse such a board).
for i in 1 2 3 4 5; do
	printf '{"idempotency_key":"p-%d","tenant_id":"vidly-probe","counter_id":"views","member_ref":"v-ben-1","delta":1,"event_time":"2026-06-09T09:30:00-03:00"}\n' "$i"
done >probes.jsonl
cnt-ingest -d $D --now 2026-06-09T12:50:00Z -o log-p.avro probes.jsonl
cnt-dedup -d $D -s dedup.state -o counted-p.avro log-p.avro
cnt-window -d $D counted-p.avro | cnt-accumulate -o buckets-p.avro
cnt-accumulate -o buckets3.avro buckets2.avro buckets-p.avro
expect "probe records in the real buckets" \
	"$(cnt-cat buckets3.avro | jq -s 'map(select(.tenant_id == "vidly-probe" and .dim == "")) | length')" 1
cnt-project -d $D -b vidly-views -w views --now 2026-06-09T12:50:00Z buckets3.avro
expect "the board with probes in its input" \
	"$(cnt-rank -w views -b vidly-views --now 2026-06-09T12:50:00Z top 10 | jq -c '[.members, (.entries[] | select(.member_ref == "v-ben-1") | .value)]')" '[5,22]'

step "Operator signals: the night's --stats files in one table"
set +e
cnt-stats ingest.json dedup.json window.json accumulate.json project.json canary.json >signals.txt
st=$?
set -e
cat signals.txt
# Five videos share the whole day, so the top key's share of writes is
# far above the hot-key threshold: flagged, and the status says so.
expect "cnt-stats status" "$st" 1
grep -q '^cnt-window  *top_key_share .* FLAGGED$' signals.txt
echo
echo "views: every step gave the expected figure"
