#!/bin/sh
# cnt benchmark: hot keys and partitions.  Does the hottest member (m1,
# 6.95 % of the benchmark's events) bound a partition's time, and does a
# shard map (cnt-shardmap) take that bound away?  See tests/bench/README
# ("Hot keys").
#
#   make bench-hot                                 (1 million events, 16 parts)
#   BENCH_EVENTS=10000000 PARTS=8 ROUNDS=1 sh tests/bench/hot.sh
#
# Steps, on the benchmark's archive (made by tests/bench/run.sh when missing):
#   1. the one-machine chain, cnt-dedup | cnt-window --stats | cnt-accumulate,
#      whose --stats top_keys give the observed write rates;
#   2. cnt-shardmap derive (target HOT_TARGET, default 0.01) makes the map;
#   3. cnt-partition --parts PARTS without and with --shard-map;
#   4. each part's counting chain (a fresh dedup state; cnt-window with the
#      map in the mapped run), timed with /usr/bin/time ROUNDS times (default
#      3; the least CPU and wall time kept, the machine being shared), plain
#      and mapped parts interleaved;
#   5. each run's parts merged by cnt-accumulate and compared byte for byte
#      with the one-machine run (with the same map for the mapped run).
# Prints, per run: the largest part's events and chain time against the
# mean part's (the ratio is what bounds a parallel run: its wall time is the
# slowest part's), and which part holds vidco/views/m1.  Figures, never a
# pass/fail test: exits 1 when a step failed or a merge differs, 2 when it
# could not run.
set -u

BUILD=${BUILD:-build}
BIN=$BUILD/bin
OUT=${BENCH_DIR:-build-bench}
N=${BENCH_EVENTS:-1000000}
PARTS=${PARTS:-16}
TARGET=${HOT_TARGET:-0.01}
ROUNDS=${ROUNDS:-3}
NOW=2026-11-30T00:00:00Z
DEFS=tests/bench/definitions.json

die() { echo "bench-hot: $*" >&2; exit 2; }

[ -f tests/bench/run.sh ] || die "run me from the top of the cnt source tree"
case $N in '' | *[!0-9]*) die "BENCH_EVENTS='$N': expected a positive integer" ;; esac
case $PARTS in '' | 0 | 1 | *[!0-9]*) die "PARTS='$PARTS': expected an integer above 1" ;; esac
case $ROUNDS in '' | 0 | *[!0-9]*) die "ROUNDS='$ROUNDS': expected a positive integer" ;; esac
[ -x /usr/bin/time ] || die "/usr/bin/time is missing (Debian package 'time'); run scripts/install-deps.sh as root"
command -v jq >/dev/null 2>&1 || die "jq is missing"
for t in cnt-dedup cnt-window cnt-accumulate cnt-partition cnt-shardmap cnt-cat; do
	[ -x "$BIN/$t" ] || die "$BIN/$t is not built: run make first"
done

if [ "$N" -eq 10000000 ]; then NAME=events; else NAME=events-$N; fi
AVRO=${BENCH_INPUT:-$OUT/$NAME.avro}
W=$OUT/hot
rm -rf "$W" && mkdir -p "$W" || die "cannot create '$W'"
if [ ! -s "$AVRO" ]; then
	echo "bench-hot: making the input with tests/bench/run.sh ..."
	BENCH_INPUT_ONLY=1 BUILD=$BUILD BENCH_DIR=$OUT BENCH_EVENTS=$N sh tests/bench/run.sh >"$W/input.log" 2>&1 ||
		die "tests/bench/run.sh could not make the input; see $W/input.log"
	[ -s "$AVRO" ] || die "no archive $AVRO; see $W/input.log"
fi
fail=0
step_failed() { echo "bench-hot: $1 failed; see $W/$2" >&2; fail=1; }

# chain IN STATE OUT OPTION VALUE: the counting chain of one part (a fresh
# dedup state; cnt-window given OPTION VALUE), ROUNDS times; OUT.time gets
# "wall cpu" of the round with the least CPU time and the least wall time
chain() {
	r=0
	while [ "$r" -lt "$ROUNDS" ]; do
		rm -f "$2"
		/usr/bin/time -f '%e %U %S' -o "$3.time.$r" sh -c '
			"$0/cnt-dedup" -d "$1" -s "$2" "$3" | "$0/cnt-window" -d "$1" "$5" "$6" | "$0/cnt-accumulate" -o "$4"
		' "$BIN" "$DEFS" "$2" "$1" "$3" "$4" "$5" 2>"$3.err" || return 1
		r=$((r + 1))
	done
	cat "$3".time.* | awk 'NR == 1 || $1 < w { w = $1 } NR == 1 || $2 + $3 < c { c = $2 + $3 } END { print w, c }' >"$3.time"
}

echo "bench-hot: $N events ($AVRO), $PARTS parts, target share $TARGET"
# 1-2: observed rates and the map
"$BIN/cnt-dedup" -d "$DEFS" "$AVRO" | "$BIN/cnt-window" -d "$DEFS" --stats "$W/window.json" |
	"$BIN/cnt-accumulate" -o "$W/one.plain.avro" 2>"$W/one.err" || step_failed "the one-machine chain" one.err
"$BIN/cnt-shardmap" derive --now "$NOW" --target "$TARGET" -o "$W/map.json" --stats "$W/derive.json" "$W/window.json" \
	2>"$W/derive.err" || { step_failed "cnt-shardmap derive" derive.err; exit 1; }
echo
echo "hottest keys (cnt-window --stats top_keys) and their shards in the map:"
jq -r --slurpfile m "$W/map.json" '.top_keys[:6][] | . as $k |
	([$m[0].keys[] | select(.tenant_id == $k.tenant_id and .counter_id == $k.counter_id and
		.member_ref == $k.member_ref) | .shards] | first // 1) as $s |
	"  \(.tenant_id)/\(.counter_id)/\(.member_ref)  \(.share * 100 * 100 | round / 100) %  \($s) shards"' "$W/window.json"
jq -r '"  map: \(.keys) keys, \(.hot) hot, at most \(.max_shards) shards"' "$W/derive.json"

# 3: the parts
mkdir -p "$W/plain" "$W/mapped"
"$BIN/cnt-partition" -d "$DEFS" --parts "$PARTS" -o "$W/plain/p" --stats "$W/plain.json" "$AVRO" 2>"$W/plain.err" ||
	{ step_failed "cnt-partition" plain.err; exit 1; }
"$BIN/cnt-partition" -d "$DEFS" --parts "$PARTS" -o "$W/mapped/p" --shard-map "$W/map.json" --stats "$W/mapped.json" \
	"$AVRO" 2>"$W/mapped.err" || { step_failed "cnt-partition --shard-map" mapped.err; exit 1; }

# 4: every part's chain, plain and mapped interleaved
i=0
while [ "$i" -lt "$PARTS" ]; do
	chain "$W/plain/p.$i.avro" "$W/plain/s.$i" "$W/plain/b.$i.avro" --shards 1 || step_failed "the chain of plain part $i" "plain/b.$i.avro.err"
	chain "$W/mapped/p.$i.avro" "$W/mapped/s.$i" "$W/mapped/b.$i.avro" --shard-map "$W/map.json" ||
		step_failed "the chain of mapped part $i" "mapped/b.$i.avro.err"
	i=$((i + 1))
done

# 5: the merges against the one-machine runs
"$BIN/cnt-dedup" -d "$DEFS" "$AVRO" | "$BIN/cnt-window" -d "$DEFS" --shard-map "$W/map.json" |
	"$BIN/cnt-accumulate" -o "$W/one.mapped.avro" 2>>"$W/one.err" || step_failed "the one-machine chain with the map" one.err
for m in plain mapped; do
	"$BIN/cnt-accumulate" -o "$W/$m.merged.avro" "$W/$m"/b.*.avro 2>"$W/$m.merge.err" || step_failed "the $m merge" "$m.merge.err"
	if cmp -s "$W/$m.merged.avro" "$W/one.$m.avro"; then
		echo "  $m: the merged parts are byte-identical to the one-machine run"
	else
		echo "  $m: the merged parts DIFFER from the one-machine run" >&2
		fail=1
	fi
done

# the table: per run, the largest part against the mean part
hot_part() {   # the part holding most of vidco/views/m1
	j=0 best=-1 bestn=0
	while [ "$j" -lt "$PARTS" ]; do
		c=$("$BIN/cnt-cat" "$W/$1/p.$j.avro" | grep -c '"tenant_id":"vidco","counter_id":"views","counter_version":1,"member_ref":"m1",')
		if [ "$c" -gt "$bestn" ]; then best=$j bestn=$c; fi
		j=$((j + 1))
	done
	echo "$best $bestn"
}
echo
printf '%-7s %9s %9s %6s %9s %9s %6s %9s %6s %9s %6s  %s\n' run "max part" "mean" ratio "its cpu" "mean cpu" ratio \
	"max cpu" ratio "max wall" ratio "vidco/views/m1"
for m in plain mapped; do
	i=0
	while [ "$i" -lt "$PARTS" ]; do
		printf '%s %s\n' "$(jq ".parts[$i]" "$W/$m.json")" "$(cat "$W/$m/b.$i.avro.time")"
		i=$((i + 1))
	done >"$W/$m.table"
	set -- $(hot_part "$m")
	hp=$1 hn=$2
	# per part "events wall cpu": the largest part by events and its cpu,
	# the slowest part by cpu and by wall time, against the means
	awk -v run="$m" -v hp="$hp" -v hn="$hn" '
		{ se += $1; sw += $2; sc += $3
		  if ($1 > mev) { mev = $1; lcpu = $3 }
		  if ($3 > mcpu) mcpu = $3; if ($2 > mwall) mwall = $2 }
		END { n = NR; printf "%-7s %9d %9.0f %6.2f %9.2f %9.2f %6.2f %9.2f %6.2f %9.2f %6.2f  %d events in part %d\n",
			run, mev, se / n, mev / (se / n), lcpu, sc / n, lcpu / (sc / n), mcpu, mcpu / (sc / n),
			mwall, mwall / (sw / n), hn, hp }
	' "$W/$m.table"
done
echo
echo "max part: the largest part's events, its cpu: the CPU seconds of its chain; max cpu, max wall: the"
echo "slowest part's chain (least of $ROUNDS rounds); ratios against the mean part.  A parallel run's wall"
echo "time is its slowest part's: the ratio bounds its speed-up."
echo "per-part figures: $W/plain.table, $W/mapped.table (events wall cpu)"
exit "$fail"
