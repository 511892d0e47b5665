#!/bin/sh
# cnt day roll-up benchmark: figures, not pass/fail (`make bench-days`).
#
# A 90-day archive from the benchmark's generator (gen-events.c) is counted
# (cnt-ingest, then cnt-dedup | cnt-window | cnt-accumulate), once without
# and once with day roll-ups (cnt-accumulate -d, cnt-bucket(5)), and boards
# of acme/distance_m (Europe/Berlin) are projected from the same bucket
# file: a 90-day season (local midnight to local midnight) and a 1-day
# board, each from the day records (the default) and from the hourly ones
# (cnt-project --hours); and a day-by-day cnt-series of every member over
# the same 90 days, from the day records and with --hours.  Reported per
# run: the records read (the --stats "in"), and the best of DAYS_REPS
# runs' wall and CPU seconds; then the ratios hours / days, measured in
# the same run.  Views and rows must be the same bytes either way.
#
# Event rate: DAYS_EVENTS events (4.5 million by default: 50,000 a day,
# 3.5 % of the main benchmark's 1.43 million a day, so that the whole runs
# in a couple of minutes on 2 cores) over DAYS_MEMBERS members (10,000,
# Zipf s = 1.0: the hot members are active in most hours of most days).
# Definitions: tests/bench/definitions.json with a 100-day lateness horizon
# (no event is late), a season window and the two boards added.
set -u

BUILD=${BUILD:-build}
BIN=$BUILD/bin
OUT=${BENCH_DIR:-build-bench}/days
N=${DAYS_EVENTS:-4500000}
M=${DAYS_MEMBERS:-10000}
REPS=${DAYS_REPS:-3}
NOW=2026-11-30T00:00:00Z
CC=${CC:-cc}

die() { echo "bench-days: $*" >&2; exit 2; }
[ -f tests/bench/gen-events.c ] || die "run me from the top of the cnt source tree"
for t in cnt-ingest cnt-dedup cnt-window cnt-accumulate cnt-project cnt-cat; do
	[ -x "$BIN/$t" ] || die "$BIN/$t is not built (make tools)"
done
command -v jq >/dev/null || die "jq is missing"
[ -x /usr/bin/time ] || die "/usr/bin/time is missing"
mkdir -p "$OUT" || die "cannot create $OUT"

$CC -std=c11 -D_GNU_SOURCE -O2 -o "$OUT/gen-events" tests/bench/gen-events.c -lm || die "cannot build gen-events"
JSONL=$OUT/events-$N-$M-90.jsonl
if [ ! -s "$JSONL" ]; then
	"$OUT/gen-events" -n "$N" --members "$M" --zipf-s 1.0 --dup-rate 0.02 --days 90 \
		--now "$NOW" --seed 1 > "$JSONL.tmp" 2>/dev/null && mv "$JSONL.tmp" "$JSONL" || die "gen-events failed"
fi
DEFS=$OUT/definitions-days.json
jq '(.counters[].versions[].lateness_horizon_s) = 8640000 |
	(.counters[] | select(.counter_id == "distance_m") | .versions[].windows) += ["season"] |
	.leaderboards += [
	  {"board_id": "season90", "tenant_id": "acme", "counter_id": "distance_m", "window": "season"},
	  {"board_id": "day1", "tenant_id": "acme", "counter_id": "distance_m", "window": "day"}] |
	.seasons += [{"season_id": "s90", "board_id": "season90",
	  "opens_at": "2026-09-01T00:00:00", "closes_at": "2026-11-30T00:00:00"}]' \
	tests/bench/definitions.json > "$DEFS" || die "cannot write $DEFS"

echo "cnt day roll-up benchmark: $N events over 90 days ($((N / 90)) a day), $M members"
echo "input: gen-events -n $N --members $M --zipf-s 1.0 --dup-rate 0.02 --days 90 --now $NOW --seed 1"

# secs FILE: "wall cpu" from /usr/bin/time -f '%e %U %S'
secs() { awk '{ printf "%.2f %.2f", $1, $2 + $3 }' "$1"; }

/usr/bin/time -f '%e %U %S' -o "$OUT/ingest.time" "$BIN/cnt-ingest" -d "$DEFS" --now "$NOW" --max-past 100d \
	-o "$OUT/log.avro" "$JSONL" 2>"$OUT/ingest.err" || die "cnt-ingest failed: $(head -c 300 "$OUT/ingest.err")"
/usr/bin/time -f '%e %U %S' -o "$OUT/window.time" sh -c "'$BIN/cnt-dedup' -d '$DEFS' '$OUT/log.avro' |
	'$BIN/cnt-window' -d '$DEFS' -o '$OUT/win.avro'" 2>"$OUT/window.err" || die "dedup | window failed"
/usr/bin/time -f '%e %U %S' -o "$OUT/acc-hours.time" "$BIN/cnt-accumulate" -o "$OUT/hours.avro" \
	"$OUT/win.avro" 2>"$OUT/acc.err" || die "cnt-accumulate failed"
/usr/bin/time -f '%e %U %S' -o "$OUT/acc-days.time" "$BIN/cnt-accumulate" -d "$DEFS" -o "$OUT/days.avro" \
	--stats "$OUT/acc-days.json" "$OUT/win.avro" 2>"$OUT/acc.err" || die "cnt-accumulate -d failed"
H=$(jq '.out' "$OUT/acc-days.json")
D=$(jq '.day_records' "$OUT/acc-days.json")
printf 'ingest             %s s wall, %s s CPU\n' $(secs "$OUT/ingest.time")
printf 'dedup | window     %s s wall, %s s CPU\n' $(secs "$OUT/window.time")
printf 'accumulate         %s s wall, %s s CPU (hourly records only: %s records, %s bytes)\n' \
	$(secs "$OUT/acc-hours.time") "$H" "$(stat -c %s "$OUT/hours.avro")"
printf 'accumulate -d      %s s wall, %s s CPU (+ %s day records: %s bytes in all)\n' \
	$(secs "$OUT/acc-days.time") "$D" "$(stat -c %s "$OUT/days.avro")"

# best NAME CMD...: runs CMD (its output to $OUT/NAME.out) REPS times, each
# after removing CLEAN (a directory, when set); the run of least CPU time
# goes to $OUT/NAME.time; then prints the records it read and whether day
# records were used (its --stats in $OUT/NAME.json)
best() {
	name=$1
	shift
	least=''
	i=0
	while [ $i -lt "$REPS" ]; do
		[ -z "${CLEAN:-}" ] || rm -rf "$CLEAN"
		/usr/bin/time -f '%e %U %S' -o "$OUT/$name.t" "$@" >"$OUT/$name.out" 2>"$OUT/$name.err" ||
			die "$name failed: $(cat "$OUT/$name.err")"
		cpu=$(awk '{ print $2 + $3 }' "$OUT/$name.t")
		if [ -z "$least" ] || awk -v a="$cpu" -v b="$least" 'BEGIN { exit !(a < b) }'; then
			least=$cpu
			cp "$OUT/$name.t" "$OUT/$name.time"
		fi
		i=$((i + 1))
	done
	set -- $(secs "$OUT/$name.time")
	printf '%-22s %10s records  %6s s wall  %6s s CPU  day records used: %s\n' "$name" \
		"$(jq .in "$OUT/$name.json")" "$1" "$2" "$(jq .day_rollups "$OUT/$name.json")"
}

# project NAME ARGS...: cnt-project, views into $OUT/views-NAME
project() {
	name=$1
	shift
	CLEAN=$OUT/views-$name
	best "$name" "$BIN/cnt-project" -d "$DEFS" -w "$OUT/views-$name" --stats "$OUT/$name.json" "$@" "$OUT/days.avro"
	CLEAN=
}

echo
echo "cnt-project of acme/distance_m on the same bucket file (best of $REPS):"
project season90-days -b season90 --season s90 --now "$NOW"
project season90-hours -b season90 --season s90 --now "$NOW" --hours
project day1-days -b day1 --now 2026-11-29T12:00:00Z
project day1-hours -b day1 --now 2026-11-29T12:00:00Z --hours
for b in season90 day1; do
	cmp -s "$OUT/views-$b-days/$b/global/current/view.avro" "$OUT/views-$b-hours/$b/global/current/view.avro" ||
		die "$b: the views from days and from hours differ"
done
echo "(views from day records and from hours: the same bytes)"

# series NAME ARGS...: cnt-series, the rows into $OUT/NAME.out
series() {
	name=$1
	shift
	best "$name" "$BIN/cnt-series" -d "$DEFS" --counter acme/distance_m --from 2026-09-01 --to 2026-11-30 \
		-F json --stats "$OUT/$name.json" "$@" "$OUT/days.avro"
}

echo
echo "cnt-series of acme/distance_m, every member, day by day over 90 days (best of $REPS):"
series series90-days
series series90-hours --hours
cmp -s "$OUT/series90-days.out" "$OUT/series90-hours.out" || die "cnt-series: the rows from days and from hours differ"
echo "(rows from day records and from hours: the same bytes)"

cpu() { awk '{ print $2 + $3 }' "$OUT/$1.time"; }
awk -v sh="$(cpu season90-hours)" -v sd="$(cpu season90-days)" -v dh="$(cpu day1-hours)" -v dd="$(cpu day1-days)" \
	-v H="$H" -v D="$D" 'BEGIN {
	printf "hourly / day records in the file: %.1f\n", H / D
	printf "CPU, hours / days: season90 %.1fx, day1 %.1fx\n", sh / (sd > 0 ? sd : 0.01), dh / (dd > 0 ? dd : 0.01)
	printf "CPU, season90 / day1: from days %.2fx, from hours %.2fx\n", sd / (dd > 0 ? dd : 0.01), sh / (dh > 0 ? dh : 0.01)
}'
awk -v h="$(cpu series90-hours)" -v d="$(cpu series90-days)" 'BEGIN {
	printf "CPU, cnt-series over 90 days, hours / days: %.1fx\n", h / (d > 0 ? d : 0.01)
}'
