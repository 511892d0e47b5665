#!/bin/sh
# cnt benchmarks: figures, not pass/fail.  See tests/bench/README.
#
#   BUILD=build sh tests/bench/run.sh            (what `make bench` runs)
#   BENCH_EVENTS=100000 sh tests/bench/run.sh    (quick smoke run)
#
# Generates the input once into build-bench/ (regenerated only when missing
# or when the generator or its options changed), then times each pipeline
# step with /usr/bin/time and prints one table row per step.  A step whose
# tool is not built yet is skipped with a note.  Exits 1 if a step that ran
# failed, 2 if the benchmark could not run at all, else 0.
set -u

BUILD=${BUILD:-build}
BIN=$BUILD/bin
OUT=${BENCH_DIR:-build-bench}
N=${BENCH_EVENTS:-10000000}
NOW=2026-11-30T00:00:00Z
SEED=1
DEFS=tests/bench/definitions.json
GEN_SRC=tests/bench/gen-events.c
GEN_ARGS="-n $N --members 1000000 --zipf-s 1.0 --dup-rate 0.02 --days 7 --now $NOW --seed $SEED"
CC=${CC:-cc}
# The Makefile's warning flags (kept in step with WARN there).
WARN="-std=c11 -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
-Wformat=2 -Wvla -Wwrite-strings -Wpointer-arith -Wcast-qual -Wundef -Werror"

die() { echo "bench: $*" >&2; exit 2; }

case $N in
'' | *[!0-9]*) die "BENCH_EVENTS='$N': expected a positive integer" ;;
esac
[ "$N" -gt 0 ] || die "BENCH_EVENTS='$N': expected a positive integer"
[ -f "$GEN_SRC" ] || die "run me from the top of the cnt source tree"
if ! command -v /usr/bin/time >/dev/null 2>&1 || [ ! -x /usr/bin/time ]; then
	die "/usr/bin/time is missing (Debian package 'time'); run scripts/install-deps.sh as root"
fi
mkdir -p "$OUT" || die "cannot create '$OUT'"

if [ "$N" -eq 10000000 ]; then
	NAME=events
else
	NAME=events-$N
fi
JSONL=$OUT/$NAME.jsonl
GENSTATS=$OUT/$NAME.gen.json
STAMP=$OUT/$NAME.stamp
AVRO=$OUT/$NAME.avro

# ---- machine ---------------------------------------------------------------
cpu=$(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo 2>/dev/null | head -n 1)
# shellcheck disable=SC2016 # make expands these, not the shell
flags=$(printf 'bench-print-flags:\n\t@echo $(CC) $(CPPFLAGS) $(ALLCFLAGS) $(ALLLDFLAGS) $(LDLIBS)\n' |
	make --no-print-directory -s -f Makefile -f - BUILD="$BUILD" bench-print-flags 2>/dev/null)
echo "cnt benchmark: $N events"
echo "machine: $(nproc 2>/dev/null || echo '?') CPUs, ${cpu:-unknown CPU}, $(uname -sr)"
echo "compiler: $($CC --version 2>/dev/null | head -n 1)"
echo "build flags: ${flags:-unknown (make not available)}"
echo "tools: $BIN"

# ---- input -----------------------------------------------------------------
# The generator is built with the project's warning flags but not linked with
# lib/, so the input never depends on the code under test.
GEN=$OUT/gen-events
# shellcheck disable=SC2086
$CC $WARN -D_GNU_SOURCE -O2 -o "$GEN.tmp" "$GEN_SRC" -lm || die "cannot build $GEN_SRC"
mv "$GEN.tmp" "$GEN"

want=$(cksum < "$GEN_SRC" | cut -d' ' -f1)" $GEN_ARGS"
have=$(cat "$STAMP" 2>/dev/null)
if [ ! -f "$JSONL" ] || [ ! -f "$GENSTATS" ] || [ "$want" != "$have" ]; then
	echo "generating $JSONL ..."
	rm -f "$STAMP" "$AVRO"
	# shellcheck disable=SC2086
	if ! /usr/bin/time -f '%e %M %U %S' -o "$OUT/gen.time" \
		"$GEN" $GEN_ARGS --stats > "$JSONL.tmp" 2> "$GENSTATS.tmp"; then
		rm -f "$JSONL.tmp" "$GENSTATS.tmp"
		die "gen-events failed"
	fi
	if ! { mv "$JSONL.tmp" "$JSONL" && mv "$GENSTATS.tmp" "$GENSTATS" &&
		echo "$want" > "$STAMP"; }; then
		die "cannot write '$JSONL'"
	fi
	read -r gs _ _ _ < "$OUT/gen.time"
	echo "generated in ${gs}s"
else
	echo "input: $JSONL (cached)"
fi
# field NAME FILE: the integer value of "NAME" in a one-line JSON object
field() { jq -r ".$1 // empty" "$2" 2>/dev/null; }  # a top-level number of a stats file
gen_dups=$(field duplicates "$GENSTATS")
echo "input: $(wc -c < "$JSONL") bytes, $N lines, $gen_dups duplicate keys (generator --stats)"

# ---- steps -----------------------------------------------------------------
failed=0
ROWS=$OUT/$NAME.rows
: > "$ROWS"
rm -f "$OUT/$NAME.notes"

row() { # step events seconds peak_kib cpu_seconds
	printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" >> "$ROWS"
}
note() { # step text
	printf '%s\t-\t%s\n' "$1" "$2" >> "$ROWS"
}

# has_bin TOOL: is $BIN/TOOL built?
has_bin() { [ -x "$BIN/$1" ]; }

# measure STEP CMD...: runs CMD under /usr/bin/time, stdout to
# $step_stdout if set (else $OUT/STEP.out), stderr to $OUT/STEP.err.
# Returns non-zero if CMD failed; else sets last_s, last_kib, last_cpu.
measure() {
	step=$1
	shift
	/usr/bin/time -f '%e %M %U %S' -o "$OUT/$step.time" "$@" \
		> "${step_stdout:-$OUT/$step.out}" 2> "$OUT/$step.err"
	rc=$?
	if [ $rc -ne 0 ]; then
		failed=1
		note "$step" "FAILED (exit $rc), see $OUT/$step.err"
		echo "bench: $step failed (exit $rc):" >&2
		tail -n 5 "$OUT/$step.err" >&2
		return 1
	fi
	read -r last_s last_kib last_u last_sy < "$OUT/$step.time"
	last_cpu=$(awk -v u="$last_u" -v s="$last_sy" 'BEGIN { printf "%.2f", u + s }')
	return 0
}

# Tools that take --stats FILE report their own record counts there.
stats_opt() { # TOOL STEP
	if "$BIN/$1" --help 2>&1 | grep -q -e '--stats'; then
		echo "--stats $OUT/$2.stats.json"
	fi
}

# baseline: reading the input, so the other figures can be put in proportion
step_stdout=/dev/null
measure read-input cat "$JSONL" && row "read-input (cat)" "$N" "$last_s" "$last_kib" "$last_cpu"
step_stdout=

# a) admission: JSON lines -> zstandard archive; and to a null-codec stream
rm -f "$AVRO"
if has_bin cnt-ingest; then
	for variant in zstandard null; do
		step=ingest-$variant
		if [ $variant = zstandard ]; then dest=$AVRO; else dest=/dev/null; fi
		rm -f "$OUT/$step.stats.json"
		# shellcheck disable=SC2046
		if measure "$step" "$BIN/cnt-ingest" -d "$DEFS" --now "$NOW" -c $variant \
			-o "$dest" $(stats_opt cnt-ingest "$step") "$JSONL"; then
			n_in=$(field in "$OUT/$step.stats.json")
			row "$step" "${n_in:-$N}" "$last_s" "$last_kib" "$last_cpu"
			if [ -f "$OUT/$step.stats.json" ]; then
				echo "$step: $(cat "$OUT/$step.stats.json")" >> "$OUT/$NAME.notes"
			fi
		elif [ $variant = zstandard ]; then
			rm -f "$AVRO"
		fi
	done
else
	note "ingest" "skipped: $BIN/cnt-ingest not built"
fi

# tests/bench/peers.sh needs only the input and the archive
if [ -n "${BENCH_INPUT_ONLY:-}" ]; then
	exit $failed
fi

# b) decoding: count every record of the zstandard archive
if ! has_bin cnt-cat; then
	note "cat-count" "skipped: $BIN/cnt-cat not built"
elif [ ! -s "$AVRO" ]; then
	note "cat-count" "skipped: no archive $AVRO (ingest failed or did not run)"
else
	if measure cat-count "$BIN/cnt-cat" --count "$AVRO"; then
		records=$(sed -n 's/[^0-9]*\([0-9][0-9]*\).*/\1/p' "$OUT/cat-count.out" | head -n 1)
		row "cat-count" "${records:-?}" "$last_s" "$last_kib" "$last_cpu"
	fi
fi

# c) the counting core, stage by stage (intermediate files use the null
#    codec, as a pipe would), then the whole pipeline in one shell pipeline,
#    whose bucket file must be byte-identical to the staged one.
MID=$OUT/mid
mkdir -p "$MID"
stage() { # STEP TOOL ARGS... (the last argument is the input)
	st=$1
	shift
	# shellcheck disable=SC2046
	if measure "$st" "$@" $(stats_opt "${1##*/}" "$st"); then
		n_in=$(field in "$OUT/$st.stats.json")
		row "$st" "${n_in:-$N}" "$last_s" "$last_kib" "$last_cpu"
		return 0
	fi
	return 1
}
if has_bin cnt-dedup && has_bin cnt-window && has_bin cnt-accumulate && [ -s "$AVRO" ]; then
	rm -f "$MID"/*.avro "$MID"/state
	stage dedup "$BIN/cnt-dedup" -d "$DEFS" -c null -o "$MID/dedup.avro" "$AVRO" &&
	stage window "$BIN/cnt-window" -d "$DEFS" -c null -o "$MID/window.avro" "$MID/dedup.avro" &&
	stage accumulate "$BIN/cnt-accumulate" -o "$MID/buckets.avro" "$MID/window.avro"
	if measure pipeline sh -c "'$BIN/cnt-dedup' -d '$DEFS' '$AVRO' | '$BIN/cnt-window' -d '$DEFS' | '$BIN/cnt-accumulate' -o '$MID/buckets-pipe.avro'"; then
		row "pipeline" "$N" "$last_s" "$last_kib" "$last_cpu"
		if cmp -s "$MID/buckets.avro" "$MID/buckets-pipe.avro"; then
			note "pipeline" "bucket file identical to the staged run ($(wc -c < "$MID/buckets.avro") bytes)"
		else
			note "pipeline" "DIFFERS from the staged run: determinism broken"
			failed=1
		fi
	fi
else
	note "core" "skipped: cnt-dedup, cnt-window, cnt-accumulate or the archive missing"
fi
# c3) creator analytics: the input counted again under the same
#     definitions but with the views counter declaring the dimensions
#     region and device (the generator's attrs), so the bucket file holds
#     their breakdown records: one pipeline (compare it with "pipeline"
#     above for what the breakdowns cost); then cnt-series answers
#     dashboard questions from that bucket file: one video by device per
#     day, and every video per hour.  The rows above are unchanged: they
#     use the plain definitions.
DDEFS=$OUT/definitions-dims.json
if has_bin cnt-series && has_bin cnt-ingest &&
	jq '(.counters[] | select(.counter_id == "views") | .versions[0].dimensions) = ["region", "device"]' \
		"$DEFS" > "$DDEFS"; then
	if measure pipeline-dims sh -c "'$BIN/cnt-ingest' -d '$DDEFS' --now $NOW -c null '$JSONL' | '$BIN/cnt-dedup' -d '$DDEFS' |
		'$BIN/cnt-window' -d '$DDEFS' | '$BIN/cnt-accumulate' --stats '$OUT/accumulate-dims.stats.json' -o '$MID/buckets-dims.avro'"; then
		row "pipeline-dims" "$N" "$last_s" "$last_kib" "$last_cpu"
		note "buckets-dims" "$(wc -c < "$MID/buckets-dims.avro") bytes, $(field out "$OUT/accumulate-dims.stats.json") records, $(field dim_records "$OUT/accumulate-dims.stats.json") of them breakdowns"
		for q in "series-video-day|--member m1 --by device" "series-all-hour|--granularity hour"; do
			st=${q%%|*}
			# shellcheck disable=SC2086
			if measure "$st" "$BIN/cnt-series" -d "$DDEFS" --counter vidco/views --from 2026-11-23 --to 2026-11-30 \
				-F json --stats "$OUT/$st.stats.json" ${q#*|} "$MID/buckets-dims.avro"; then
				row "$st" "$(field in "$OUT/$st.stats.json")" "$last_s" "$last_kib" "$last_cpu"
				note "$st" "${q#*|}: $(field out "$OUT/$st.stats.json") rows from $(field in "$OUT/$st.stats.json") bucket records"
			fi
		done
	fi
else
	note "series" "skipped: cnt-series or cnt-ingest not built"
fi
# c1) a dispute answered from the archive: cnt-explain re-derives the
#     standing of the first event's member on acme-distance-all from the
#     whole archive (two passes), with every one of its events.
if has_bin cnt-explain && has_bin cnt-cat && [ -s "$AVRO" ]; then
	member=$("$BIN/cnt-cat" --head 1 "$AVRO" | jq -r .member_ref)
	if measure explain "$BIN/cnt-explain" -d "$DEFS" -b acme-distance-all --member "$member" --now "$NOW" \
		--stats "$OUT/explain.stats.json" "$AVRO"; then
		row "explain" "$(field in "$OUT/explain.stats.json")" "$last_s" "$last_kib" "$last_cpu"
		note "explain" "member $member: $(sed -n 2p "$OUT/explain.out")"
	fi
else
	note "explain" "skipped: cnt-explain not built or no archive"
fi
# c2) dedup state for DEDUP_KEYS remembered keys (50 million by default;
#     BENCH_EVENTS when set smaller): memory and state-file bytes per key.
DEDUP_KEYS=${DEDUP_KEYS:-50000000}
[ "$N" -lt "$DEDUP_KEYS" ] && [ -n "${BENCH_EVENTS:-}" ] && DEDUP_KEYS=$N
LIBS="-lzstd -lz -lsnappy -llzma -lbz2 -lcsv -ljansson -lxxhash -lm -lpthread"
if $CC $WARN -D_GNU_SOURCE -O2 -Ilib -I"$BUILD/gen" -o "$OUT/dedup-keys" tests/bench/dedup-keys.c \
	"$BUILD/libcnt.a" $LIBS; then
	if q=$("$OUT/dedup-keys" "$DEDUP_KEYS" "$OUT/dedup-keys.state"); then
		note "dedup state" "$q"
	else
		note "dedup state" "FAILED"
		failed=1
	fi
else
	note "dedup state" "skipped: cannot build tests/bench/dedup-keys.c"
fi

# d) ranked views: a bucket file of VIEW_MEMBERS members (10 million, or
#    BENCH_EVENTS when that is set smaller), the view built from it, and
#    1,000 rank queries, each its own process (process start included).
VIEW_MEMBERS=${VIEW_MEMBERS:-10000000}
[ "$N" -lt "$VIEW_MEMBERS" ] && [ -n "${BENCH_EVENTS:-}" ] && VIEW_MEMBERS=$N
if has_bin cnt-project && has_bin cnt-rank; then
	$CC $WARN -D_GNU_SOURCE -O2 -Ilib -I"$BUILD/gen" -o "$OUT/gen-buckets" tests/bench/gen-buckets.c \
		"$BUILD/libcnt.a" $LIBS || die "cannot build tests/bench/gen-buckets.c"
	$CC $WARN -D_GNU_SOURCE -O2 -o "$OUT/timecalls" tests/bench/timecalls.c || die "cannot build tests/bench/timecalls.c"
	VB=build-bench/buckets-$VIEW_MEMBERS.avro
	[ -s "$VB" ] || "$OUT/gen-buckets" -n "$VIEW_MEMBERS" --bucket 2026-11-23T00:00:00Z > "$VB" || die "gen-buckets failed"
	rm -rf "$OUT/views"
	if measure project "$BIN/cnt-project" -d "$DEFS" -b acme-distance-all -w "$OUT/views" --now "$NOW" "$VB"; then
		row "project (view)" "$VIEW_MEMBERS" "$last_s" "$last_kib" "$last_cpu"
		note "view size" "$(du -sb "$OUT/views/acme-distance-all/global/v000001" | cut -f1) bytes for $VIEW_MEMBERS members ($(du -b "$OUT/views/acme-distance-all/global/v000001/index.bin" | cut -f1) index.bin)"
		q=$("$OUT/timecalls" 1000 "$VIEW_MEMBERS" "$BIN/cnt-rank" -w "$OUT/views" -b acme-distance-all --now "$NOW" rank @M) ||
			{ note "rank" "FAILED"; failed=1; }
		note "rank (1000 calls)" "$q"
	fi
else
	note "views" "skipped: cnt-project or cnt-rank not built"
fi

# ---- report ----------------------------------------------------------------
echo
awk -F '\t' '
BEGIN { printf "%-20s %10s %8s %12s %7s %9s\n", "step", "events", "seconds", "events/s", "cpu s", "peak MiB" }
$2 == "-" { printf "%-20s %s\n", $1, $3; next }
{
	rate = ($3 > 0 && $2 ~ /^[0-9]+$/) ? sprintf("%.0f", $2 / $3) : "-"
	printf "%-20s %10s %8.2f %12s %7s %9.1f\n", $1, $2, $3, rate, $5, $4 / 1024
}' "$ROWS"

if [ -s "$AVRO" ]; then
	awk -v b="$(wc -c < "$AVRO")" -v n="$N" 'BEGIN {
		printf "\narchive: %d bytes (%.1f bytes/event, zstandard)\n", b, b / n }'
fi
if [ -f "$OUT/$NAME.notes" ]; then
	echo
	cat "$OUT/$NAME.notes"
	rm -f "$OUT/$NAME.notes"
	d=$(field duplicate "$OUT/ingest-zstandard.stats.json")
	[ -n "$d" ] || d=$(field duplicates "$OUT/ingest-zstandard.stats.json")
	[ -n "$d" ] && echo "duplicates: ingest $d, generator $gen_dups"
fi
echo "(events/s = events / elapsed seconds; 'cpu s' = user + system time)"
exit $failed
