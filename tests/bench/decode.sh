#!/bin/sh
# cnt benchmark, decode: the archive read and checked record by record
# (`cnt-cat --count`: every block decompressed, every record decoded by the
# event readers' own decoder, cnt-cat(1)) beside the measuring stick's
# decode-only mode (`limitb --decode-only -t 2`), interleaved in one run.
# See tests/bench/README ("Decode").
#
#   make bench-decode                                 (10 million events, 3 rounds)
#   BENCH_EVENTS=1000000 ROUNDS=5 sh tests/bench/decode.sh
#   LIMITB=/path/to/limitb sh tests/bench/decode.sh   (a stick built already)
#
# Needs the benchmark's archive (made by tests/bench/run.sh's input and
# ingest steps, run here when it is missing) and the measuring stick's
# source (LIMITB_SRC, default ../shared/bench/limit-b/limitb.c).  Exits 1
# when a run failed or the record counts differ, 2 when it could not run.
set -u

BUILD=${BUILD:-build}
BIN=$BUILD/bin
OUT=${BENCH_DIR:-build-bench}
N=${BENCH_EVENTS:-10000000}
ROUNDS=${ROUNDS:-3}
LIMITB_SRC=${LIMITB_SRC:-../shared/bench/limit-b/limitb.c}
LIMITB=${LIMITB:-}
CC=${CC:-cc}

die() { echo "bench-decode: $*" >&2; exit 2; }

case $N in '' | *[!0-9]*) die "BENCH_EVENTS='$N': expected a positive integer" ;; esac
case $ROUNDS in '' | 0 | *[!0-9]*) die "ROUNDS='$ROUNDS': expected a positive integer" ;; esac
[ -x /usr/bin/time ] || die "/usr/bin/time is missing (Debian package 'time'); run scripts/install-deps.sh as root"
[ -x "$BIN/cnt-cat" ] || die "$BIN/cnt-cat is not built: run make first"

if [ "$N" -eq 10000000 ]; then NAME=events; else NAME=events-$N; fi
AVRO=$OUT/$NAME.avro
DIR=$OUT/decode
mkdir -p "$DIR" || die "cannot create '$DIR'"

if [ ! -s "$AVRO" ]; then
	echo "bench-decode: making the input with tests/bench/run.sh ..."
	BENCH_INPUT_ONLY=1 BUILD=$BUILD BENCH_DIR=$OUT BENCH_EVENTS=$N sh tests/bench/run.sh > "$DIR/input.log" 2>&1 ||
		die "tests/bench/run.sh could not make the input; see $DIR/input.log"
	[ -s "$AVRO" ] || die "no archive $AVRO after tests/bench/run.sh; see $DIR/input.log"
fi

if [ -z "$LIMITB" ]; then
	[ -f "$LIMITB_SRC" ] || die "no measuring stick at $LIMITB_SRC (set LIMITB_SRC or LIMITB)"
	$CC -O2 -march=native -o "$DIR/limitb" "$LIMITB_SRC" -lzstd -lpthread 2> "$DIR/limitb.build.err" ||
		die "cannot build $LIMITB_SRC (see $DIR/limitb.build.err)"
	LIMITB=$DIR/limitb
fi

failed=0
TIMES=$DIR/times.tsv
: > "$TIMES"
# run PEER ROUND CMD...: one timed run; appends "peer wall cpu kib" to TIMES.
run() {
	peer=$1 round=$2
	shift 2
	if /usr/bin/time -f '%e %M %U %S' -o "$DIR/$peer.time" "$@" > "$DIR/$peer.out" 2> "$DIR/$peer.err"; then
		read -r s kib u sy < "$DIR/$peer.time"
		printf '%s\t%s\t%s\t%s\n' "$peer" "$s" "$(awk -v u="$u" -v s="$sy" 'BEGIN { printf "%.2f", u + s }')" "$kib" >> "$TIMES"
		echo "round $round: $peer ${s}s"
	else
		echo "bench-decode: $peer failed in round $round:" >&2
		tail -n 5 "$DIR/$peer.err" >&2
		failed=1
	fi
}
r=1
while [ "$r" -le "$ROUNDS" ]; do
	run cnt-cat "$r" "$BIN/cnt-cat" --count "$AVRO"
	run limitb "$r" "$LIMITB" --decode-only -t 2 "$AVRO"
	r=$((r + 1))
done

# both read every record: the counts must agree
ours=$(cat "$DIR/cnt-cat.out" 2>/dev/null)
theirs=$(sed -n 's/^decode-only: \([0-9]*\) records.*/\1/p' "$DIR/limitb.out" 2>/dev/null)
if [ -n "$ours" ] && [ "$ours" = "$theirs" ]; then
	echo "records: both decoded $ours"
else
	echo "records: cnt-cat counted '${ours}', the measuring stick '${theirs}': they DIFFER"
	failed=1
fi

echo
case $ours in '' | *[!0-9]*) recs=$N ;; *) recs=$ours ;; esac
echo "decode: $recs records (of $N events generated), $ROUNDS rounds interleaved, medians"
awk -F '\t' -v n="$recs" '
function median(a, k,   i, j, t) {
	for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
}
{ k[$1]++; w[$1, k[$1]] = $2; c[$1, k[$1]] = $3; m[$1, k[$1]] = $4 }
END {
	printf "%-8s %8s %8s %12s %14s %9s\n", "peer", "wall s", "cpu s", "events/s", "events/cpu-s", "peak MiB"
	split("cnt-cat limitb", order, " ")
	for (o = 1; o <= 2; o++) {
		p = order[o]
		if (!k[p]) continue
		for (i = 1; i <= k[p]; i++) { ww[i] = w[p, i]; cc[i] = c[p, i]; mm[i] = m[p, i] }
		W[p] = median(ww, k[p]); C[p] = median(cc, k[p]); M = median(mm, k[p])
		if (W[p] <= 0) W[p] = 0.01
		if (C[p] <= 0) C[p] = 0.01
		printf "%-8s %8.2f %8.2f %12.0f %14.0f %9.0f\n", p, W[p], C[p], n / W[p], n / C[p], M / 1024
	}
	if (k["cnt-cat"] && k["limitb"])
		printf "decode vs the measuring stick: %.2fx its wall time, %.2fx its CPU time (goal <= 1.25x wall)\n",
			W["cnt-cat"] / W["limitb"], C["cnt-cat"] / C["limitb"]
}' "$TIMES"
exit $failed
