#!/bin/sh
# A weekly league, closed, sealed and corrected (seed 000: "The season
# closed on Sunday and a cheater was proved on Wednesday").
#
#   sh examples/league.sh           (after make; tests/run-all.sh runs it)
#
# The league (examples/league/definitions.json) ranks the distance run in
# a Berlin week, Monday 00:00 to Monday 00:00 local time.  Week 43 of 2026
# ends on Sunday 25 October, the night the clocks go back: it is 169 hours
# long, and it closes at 2026-10-25T23:00:00Z, not at 22:00Z.  The counter's
# lateness horizon is 24 hours, so the week can be sealed from Monday
# 23:00Z (Tuesday 00:00 in Berlin).
#
# Each file examples/league/w*.jsonl is one day's events, admitted at 23:55
# that day in Berlin (the league's backend sends them in a nightly batch)
# into a segment of its own; the archive is the segments.  The walkthrough
# then: counts and ranks the week; shows cnt-seal refusing to close it
# before the horizon has passed; seals it; shows an event of the week that
# arrives after the seal go to the late columns, and the next week count
# without any freeze; on Wednesday retracts the cheater m-dev (cause dq),
# rebuilds the buckets the retraction touches, publishes the corrections
# beside the sealed standings and verifies that the sealed file and the
# seal ledger are unchanged; and shows a republication of the sealed week
# refused.
#
# Every step checks what it shows: the expected standings are worked out
# by hand in the comments below from the events, and the script exits
# non-zero at the first step that differs.  Files go to $BUILD/league
# (kept; emptied first) or to CNT_DEMO_DIR, which must be new or empty.
set -eu
cd "$(dirname "$0")/.."

BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD="$PWD/$BUILD" ;; esac
EX="$PWD/examples/league"
for t in cnt-ingest cnt-dedup cnt-window cnt-accumulate cnt-project cnt-rank cnt-retract cnt-seal cnt-cat cnt-diff; do
	if [ ! -x "$BUILD/bin/$t" ]; then
		echo "league: $BUILD/bin/$t is missing: run 'make' first" >&2
		exit 2
	fi
done
command -v jq >/dev/null 2>&1 || { echo "league: jq is missing: run ./scripts/install-deps.sh" >&2; exit 2; }
PATH="$BUILD/bin:$PATH"
export PATH

if [ -n "${CNT_DEMO_DIR:-}" ]; then
	dir=$CNT_DEMO_DIR
	if [ -d "$dir" ] && [ -n "$(ls -A "$dir")" ]; then
		echo "league: CNT_DEMO_DIR '$dir' is not empty; give a new or empty directory" >&2
		exit 2
	fi
	mkdir -p "$dir"
else
	dir="$BUILD/league"
	rm -rf "$dir"
	mkdir -p "$dir"
fi
cd "$dir"
cp "$EX/definitions.json" defs.json
echo "league: the files it writes are kept in $dir"

section() {
	printf '\n== %s\n' "$1"
}
# run CMD: shows the command as typed, then runs it (through sh, so that
# pipelines and redirections read as they would at a prompt).
run() {
	printf '$ %s\n' "$1"
	sh -c "set -e; $1"
}
# expect WHAT GOT WANT
expect() {
	if [ "$2" != "$3" ]; then
		printf 'league: FAIL: %s\n  got:  %s\n  want: %s\n' "$1" "$2" "$3" >&2
		exit 1
	fi
	printf 'ok: %s\n' "$1"
}
# status CMD: the exit status of CMD (its output shown)
status() {
	printf '$ %s\n' "$1"
	rc=0
	sh -c "$1" 2>&1 || rc=$?
	echo "(exit status $rc)"
	return 0
}
standing() {   # the sealed standings as "member final_value final_rank" lines
	cnt-seal show --season "$1" --sealed sealed -F json |
		jq -r '"\(.member_ref) \(.final_value) \(.final_rank)"'
}

# One day's batch: admitted at 23:55 Berlin time into its own segment, then
# counted (the dedup state spans the nights) and merged into live.avro.
day() {   # day FILE INGEST-TIME
	run "cnt-ingest -d defs.json --now $2 -o seg-$1.avro -r rejects-$1.jsonl $EX/$1.jsonl"
	run "cnt-dedup -d defs.json -s dedup.state seg-$1.avro | cnt-window -d defs.json | cnt-accumulate -o new.avro"
	if [ -f live.avro ]; then
		run "cnt-accumulate -o live.avro live.avro new.avro"
	else
		run "mv new.avro live.avro"
	fi
	rm -f new.avro
}

section "1. Week 43: seven nightly batches (the last on Sunday 23:55 CET, after the clocks went back)"
day w43-1-mon 2026-10-19T21:55:00Z
day w43-2-tue 2026-10-20T21:55:00Z
day w43-3-wed 2026-10-21T21:55:00Z
day w43-4-thu 2026-10-22T21:55:00Z
day w43-5-fri 2026-10-23T21:55:00Z
day w43-6-sat 2026-10-24T21:55:00Z
day w43-7-sun 2026-10-25T22:55:00Z

section "2. Monday: the last batch holds the week's last run (Sunday 22:00 CET, 23 hours late but inside the horizon), a retry and week 44's first runs"
day w44-1-mon 2026-10-26T20:55:00Z

section "3. The live standing of week 43, published as a view"
run "cnt-project -d defs.json -b acme-league -w views --season league-2026-w43 --now 2026-10-26T21:00:00Z live.avro"
run "cnt-rank -w views -b acme-league --now 2026-10-26T21:00:00Z -F table top 10"
# m-dev 30000 + 25000; m-ben 15000 + 6000 (Sunday 23:30 CET: inside the
# week only if the week ends at 23:00Z); m-anna 12000 + 8000; m-cara 9000 +
# 9500 + 1000; m-eli 7000 (its retry is a duplicate, its Monday run is week 44)
got=$(cnt-rank -w views -b acme-league --now 2026-10-26T21:00:00Z top 10 | jq -r '.entries[] | "\(.member_ref)=\(.value)"' | tr '\n' ' ')
expect "week 43 live: m-dev 55000, m-ben 21000, m-anna 20000, m-cara 19500, m-eli 7000" \
	"$got" "m-dev=55000 m-ben=21000 m-anna=20000 m-cara=19500 m-eli=7000 "

section "4. Monday 22:00Z: too early to seal (the horizon ends at 23:00Z)"
status "cnt-seal close -d defs.json --season league-2026-w43 --sealed sealed --now 2026-10-26T22:00:00Z live.avro"
expect "cnt-seal refuses before the horizon (status 2)" "$rc" 2
expect "nothing sealed" "$(ls sealed 2>/dev/null | wc -l | tr -d ' ')" 0

section "5. Tuesday 07:00 CET: the week is sealed"
run "cnt-seal close -d defs.json --season league-2026-w43 --sealed sealed --now 2026-10-27T06:00:00Z live.avro"
run "cnt-seal show --season league-2026-w43 --sealed sealed -F table"
expect "the sealed standings" "$(standing league-2026-w43 | tr '\n' ' ')" \
	"m-dev 55000 1 m-ben 21000 2 m-anna 20000 3 m-cara 19500 4 m-eli 7000 5 "
cp -r sealed sealed.tuesday
status "cnt-seal close -d defs.json --season league-2026-w43 --sealed sealed --now 2026-10-27T06:05:00Z live.avro"
expect "a second seal of the week is refused (status 2)" "$rc" 2

section "6. Tuesday's batch: a week-43 run arriving after the seal is late; week 44 counts on, no freeze"
day w44-2-tue 2026-10-27T10:00:00Z
got=$(cnt-cat live.avro | jq -s '[.[] | select(.member_ref == "m-eli" and .late_count > 0)] | map(.late_sum) | add')
expect "m-eli's Saturday run is in the late columns" "$got" 4000
run "cnt-project -d defs.json -b acme-league -w views --season league-2026-w44 --now 2026-10-27T10:00:00Z live.avro"
got=$(cnt-rank -w views -b acme-league --now 2026-10-27T10:00:00Z top 10 | jq -r '.entries[] | "\(.member_ref)=\(.value)"' | tr '\n' ' ')
expect "week 44 so far: m-eli 5000, m-anna 3000, m-ben 2500" "$got" "m-eli=5000 m-anna=3000 m-ben=2500 "

section "7. Wednesday: m-dev is proved to have cheated; every one of its runs is retracted (cause dq)"
run "cat seg-*.avro > archive.avro"
run "cnt-retract --member m-dev --tenant acme --counter distance_m --cause dq --requester league-ops --authority 'ticket LG-7731' --ledger retractions.jsonl --now 2026-10-28T13:00:00Z -o seg-retract-m-dev.avro archive.avro"
expect "two compensating events" "$(cnt-cat --count seg-retract-m-dev.avro)" 2
# An exact counter: the compensations are counted like any batch and merged.
run "cnt-dedup -d defs.json -s dedup.state seg-retract-m-dev.avro | cnt-window -d defs.json | cnt-accumulate -o comp.avro"
run "cnt-accumulate -o live.avro live.avro comp.avro"
run "cnt-dedup -d defs.json archive.avro seg-retract-m-dev.avro | cnt-window -d defs.json | cnt-accumulate -o rebuilt.avro"
status "cnt-diff live.avro rebuilt.avro"
expect "a rebuild from the archive and the compensations equals the live buckets" "$rc" 0

section "8. The sealed standings do not change; corrections are published beside them"
run "cnt-seal correct -d defs.json --season league-2026-w43 --sealed sealed --retractions retractions.jsonl --now 2026-10-28T13:05:00Z live.avro"
run "cnt-seal show --season league-2026-w43 --sealed sealed -F table"
expect "the sealed standings are unchanged" "$(standing league-2026-w43 | tr '\n' ' ')" \
	"m-dev 55000 1 m-ben 21000 2 m-anna 20000 3 m-cara 19500 4 m-eli 7000 5 "
got=$(cnt-seal show --season league-2026-w43 --sealed sealed -F json |
	jq -r '.member_ref as $m | .corrections[] | "\($m):\(.change):\(.prior_rank)->\(.revised_rank // "-")"' | tr '\n' ' ')
expect "corrections: m-dev removed, everyone below it up one place" "$got" \
	"m-dev:removed:1->- m-ben:rank:2->1 m-anna:rank:3->2 m-cara:rank:4->3 m-eli:rank:5->4 "
got=$(cnt-seal show --season league-2026-w43 --sealed sealed -F json | jq -r '"\(.member_ref)=\(.rank // "-")"' | tr '\n' ' ')
expect "what a reward service reads now: the effective ranks" "$got" "m-dev=- m-ben=1 m-anna=2 m-cara=3 m-eli=4 "
before=$(ls sealed | wc -l)
run "cnt-seal correct -d defs.json --season league-2026-w43 --sealed sealed --retractions retractions.jsonl --now 2026-10-28T13:10:00Z live.avro"
expect "correcting again publishes nothing new" "$(ls sealed | wc -l)" "$before"

section "9. The sealed file and the ledger verify; Tuesday's seal is byte for byte the same"
run "cnt-seal verify --sealed sealed"
for f in $(cd sealed.tuesday && find . -type f); do
	case $f in *ledger*) continue ;; esac   # the ledger grows; verify checks it
	cmp "sealed.tuesday/$f" "sealed/$f"
done
expect "every file sealed on Tuesday is unchanged" ok ok

section "10. Republishing the sealed week is refused; the live board of week 44 publishes"
status "cnt-project -d defs.json -b acme-league -w views --season league-2026-w43 --sealed sealed --now 2026-10-28T14:00:00Z live.avro"
expect "cnt-project refuses a sealed season (status 2)" "$rc" 2
run "cnt-project -d defs.json -b acme-league -w views --season league-2026-w44 --sealed sealed --now 2026-10-28T14:00:00Z live.avro"

section "The walkthrough's files, kept in $dir"
ls -C -F
