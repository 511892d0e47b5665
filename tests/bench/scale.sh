#!/bin/sh
# cnt scaling benchmark: the counting chain on 1 M, 10 M and 100 M events,
# with the accumulator's memory bounded by --memory, to show that time
# grows linearly in events and that peak memory stays bounded.  See
# tests/bench/README ("Scaling").
#
#   make bench-scale                                  (1 M, 10 M, 100 M)
#   SCALE_SIZES="1000000 4000000" SCALE_MEMORY=256M sh tests/bench/scale.sh
#
# Each size's events come from gen-events with make bench's options (the
# same generator and seed; only -n differs) piped straight into
# cnt-ingest, so no 22 GB JSON file is written at 100 M; the zstandard
# archive is kept as build-bench/scale-N.avro (about 4.7 GB at 100 M) and
# reused while the generator and its options are unchanged.  The chain
# (cnt-count when built, else cnt-dedup | cnt-window | cnt-accumulate) runs
# with -m SCALE_MEMORY, then cnt-project and cnt-rank top 100 as in
# bench-peers.  Exits 1 when a step failed, 2 when it could not run.
set -u

BUILD=${BUILD:-build}
BIN=$BUILD/bin
OUT=${BENCH_DIR:-build-bench}
SIZES=${SCALE_SIZES:-1000000 10000000 100000000}
MEM=${SCALE_MEMORY:-1G}
NOW=2026-11-30T00:00:00Z
DEFS=tests/bench/definitions.json
GEN_SRC=tests/bench/gen-events.c
CC=${CC:-cc}

die() { echo "bench-scale: $*" >&2; exit 2; }

[ -f "$GEN_SRC" ] || die "run me from the top of the cnt source tree"
[ -x /usr/bin/time ] || die "/usr/bin/time is missing (Debian package 'time'); run scripts/install-deps.sh as root"
for t in cnt-ingest cnt-project cnt-rank; do
	[ -x "$BIN/$t" ] || die "$BIN/$t is not built: run make first"
done
for n in $SIZES; do
	case $n in '' | 0 | *[!0-9]*) die "SCALE_SIZES: '$n' is not a positive integer" ;; esac
done
mkdir -p "$OUT/scale" || die "cannot create '$OUT/scale'"
S=$OUT/scale

GEN=$S/gen-events
$CC -std=c11 -D_GNU_SOURCE -O2 -o "$GEN" "$GEN_SRC" -lm || die "cannot build $GEN_SRC"
gen_sum=$(cksum < "$GEN_SRC" | cut -d' ' -f1)

if [ -x "$BIN/cnt-count" ]; then
	chain_name="cnt-count"
else
	chain_name="cnt-dedup | cnt-window | cnt-accumulate"
fi

failed=0
ROWS=$S/rows.tsv
: > "$ROWS"
# timed STEP N CMD...: runs CMD under /usr/bin/time; appends a row.
timed() {
	step=$1 n=$2
	shift 2
	if /usr/bin/time -f '%e %M %U %S' -o "$S/$step.time" "$@" > "$S/$step.out" 2> "$S/$step.err"; then
		read -r s kib u sy < "$S/$step.time"
		printf '%s\t%s\t%s\t%s\t%s\n' "$step" "$n" "$s" "$(awk -v u="$u" -v y="$sy" 'BEGIN { printf "%.2f", u + y }')" "$kib" >> "$ROWS"
		echo "$step: ${s}s"
		return 0
	fi
	echo "bench-scale: $step failed:" >&2
	tail -n 5 "$S/$step.err" >&2
	failed=1
	return 1
}

for n in $SIZES; do
	args="-n $n --members 1000000 --zipf-s 1.0 --dup-rate 0.02 --days 7 --now $NOW --seed 1"
	avro=$S/scale-$n.avro
	want="$gen_sum $args"
	if [ ! -s "$avro" ] || [ "$want" != "$(cat "$avro.stamp" 2>/dev/null)" ]; then
		rm -f "$avro" "$avro.stamp"
		echo "bench-scale: generating and admitting $n events ..."
		if ! timed "ingest-$n" "$n" sh -c "set -e; '$GEN' $args | '$BIN/cnt-ingest' -d '$DEFS' --now $NOW -c zstandard -o '$avro.tmp' -"; then
			rm -f "$avro.tmp"
			continue
		fi
		mv "$avro.tmp" "$avro" && echo "$want" > "$avro.stamp" || die "cannot write '$avro'"
	fi
	rm -rf "$S/views" "$S/buckets.avro" "$S/tmp"
	mkdir -p "$S/tmp"
	if [ -x "$BIN/cnt-count" ]; then
		count="'$BIN/cnt-count' -d '$DEFS' -m $MEM -T '$S/tmp' --stats '$S/count-$n.stats.json' -o '$S/buckets.avro' '$avro'"
	else
		count="'$BIN/cnt-dedup' -d '$DEFS' '$avro' | '$BIN/cnt-window' -d '$DEFS' | '$BIN/cnt-accumulate' -m $MEM -T '$S/tmp' --stats '$S/count-$n.stats.json' -o '$S/buckets.avro'"
	fi
	timed "count-$n" "$n" sh -c "set -e; $count" || continue
	timed "project-$n" "$n" "$BIN/cnt-project" -d "$DEFS" -b acme-distance-all -w "$S/views" --now $NOW "$S/buckets.avro" || continue
	timed "rank-$n" "$n" "$BIN/cnt-rank" -w "$S/views" -b acme-distance-all --now $NOW -F json top 100 || continue
	runs=$(jq -r '.spill_runs // .accumulate.spill_runs // "?"' "$S/count-$n.stats.json" 2>/dev/null)
	echo "count-$n: bucket file $(wc -c < "$S/buckets.avro") bytes, $(jq -r '.out // "?"' "$S/count-$n.stats.json" 2>/dev/null) records, $runs spilled runs, accumulator peak estimate $(jq -r ".peak_memory_estimate // .accumulate.peak_memory_estimate // \"?\"" "$S/count-$n.stats.json" 2>/dev/null) bytes" >> "$S/notes"
done

echo
echo "scaling: chain $chain_name with -m $MEM; then cnt-project, cnt-rank top 100"
awk -F '\t' '
BEGIN { printf "%-18s %11s %8s %8s %12s %10s %9s\n", "step", "events", "wall s", "cpu s", "events/s", "ns/event", "peak MiB" }
{ printf "%-18s %11d %8.2f %8.2f %12.0f %10.0f %9.0f\n", $1, $2, $3, $4, $2 / ($3 > 0 ? $3 : 0.01), $3 * 1e9 / $2, $5 / 1024 }
' "$ROWS"
cat "$S/notes" 2>/dev/null
rm -f "$S/notes"
exit $failed
