#!/bin/sh
# cnt benchmark peers: the counting chain beside DuckDB and the measuring
# stick, interleaved in one run.  See tests/bench/README ("Peers").
#
#   make bench-peers                              (10 million events, 3 rounds)
#   BENCH_EVENTS=1000000 ROUNDS=5 sh tests/bench/peers.sh
#
# Needs the benchmark's archive (made by tests/bench/run.sh's input and
# ingest steps, run here when it is missing), node and npm (DuckDB's node
# package is installed from the npm registry into $OUT/peers, never into
# the project), and the measuring stick's source (LIMITB_SRC, default
# ../shared/bench/limit-b/limitb.c beside the source tree; skipped with a
# note when absent).  Exits 1 when a run failed or the top 100 disagree, 2
# when it could not run at all.
set -u

BUILD=${BUILD:-build}
BIN=$BUILD/bin
OUT=${BENCH_DIR:-build-bench}
N=${BENCH_EVENTS:-10000000}
ROUNDS=${ROUNDS:-3}
NOW=2026-11-30T00:00:00Z
DEFS=tests/bench/definitions.json
LIMITB_SRC=${LIMITB_SRC:-../shared/bench/limit-b/limitb.c}
CC=${CC:-cc}

die() { echo "bench-peers: $*" >&2; exit 2; }

[ -f tests/bench/peers/duck.mjs ] || die "run me from the top of the cnt source tree"
case $N in '' | *[!0-9]*) die "BENCH_EVENTS='$N': expected a positive integer" ;; esac
case $ROUNDS in '' | 0 | *[!0-9]*) die "ROUNDS='$ROUNDS': expected a positive integer" ;; esac
command -v node >/dev/null 2>&1 || die "node is missing (Debian package nodejs)"
command -v npm >/dev/null 2>&1 || die "npm is missing (Debian package npm)"
[ -x /usr/bin/time ] || die "/usr/bin/time is missing (Debian package 'time'); run scripts/install-deps.sh as root"
for t in cnt-count cnt-dedup cnt-window cnt-accumulate cnt-project cnt-rank; do
	[ -x "$BIN/$t" ] || die "$BIN/$t is not built: run make first"
done

if [ "$N" -eq 10000000 ]; then NAME=events; else NAME=events-$N; fi
JSONL=$OUT/$NAME.jsonl
AVRO=$OUT/$NAME.avro
PEERS=$OUT/peers
mkdir -p "$PEERS" || die "cannot create '$PEERS'"

# ---- input: the benchmark's own (generated and ingested by run.sh) ----------
if [ ! -s "$AVRO" ] || [ ! -s "$JSONL" ]; then
	echo "bench-peers: making the input with tests/bench/run.sh ..."
	BENCH_INPUT_ONLY=1 BUILD=$BUILD BENCH_DIR=$OUT BENCH_EVENTS=$N sh tests/bench/run.sh > "$PEERS/input.log" 2>&1 ||
		die "tests/bench/run.sh could not make the input; see $PEERS/input.log"
	[ -s "$AVRO" ] || die "no archive $AVRO after tests/bench/run.sh; see $PEERS/input.log"
fi

# ---- DuckDB: installed into the benchmark's folder, events to Parquet once --
cp tests/bench/peers/package.json tests/bench/peers/duck.mjs "$PEERS/" || die "cannot write '$PEERS'"
if [ ! -d "$PEERS/node_modules/@duckdb/node-api" ]; then
	echo "bench-peers: installing DuckDB's node package into $PEERS ..."
	(cd "$PEERS" && npm install --no-audit --no-fund --loglevel=error) > "$PEERS/npm.log" 2>&1 ||
		die "npm install failed; see $PEERS/npm.log"
fi
DUCK_VERSION=$(sed -n 's/.*"version": *"\([^"]*\)".*/\1/p' "$PEERS/node_modules/@duckdb/node-api/package.json" | head -n 1)
PARQUET=$PEERS/$NAME.parquet
# converted again only when run.sh regenerated the input (its stamp changed)
want=$(cat "$OUT/$NAME.stamp" 2>/dev/null)
if [ ! -s "$PARQUET" ] || [ "$want" != "$(cat "$PARQUET.stamp" 2>/dev/null)" ]; then
	echo "bench-peers: converting $JSONL to Parquet (once, not timed) ..."
	if ! node "$PEERS/duck.mjs" convert "$JSONL" "$PARQUET.tmp"; then
		rm -f "$PARQUET.tmp"
		die "the Parquet conversion failed"
	fi
	{ mv "$PARQUET.tmp" "$PARQUET" && echo "$want" > "$PARQUET.stamp"; } || die "cannot write '$PARQUET'"
fi

# ---- the measuring stick, built in the benchmark's folder -------------------
LIMITB=
if [ -f "$LIMITB_SRC" ]; then
	if $CC -O2 -march=native -o "$PEERS/limitb" "$LIMITB_SRC" -lzstd -lpthread 2> "$PEERS/limitb.build.err"; then
		LIMITB=$PEERS/limitb
	else
		echo "bench-peers: cannot build $LIMITB_SRC (see $PEERS/limitb.build.err); the measuring stick is left out" >&2
	fi
else
	echo "bench-peers: no measuring stick at $LIMITB_SRC (set LIMITB_SRC); it is left out" >&2
fi

# ---- the runs, interleaved --------------------------------------------------
failed=0
TIMES=$PEERS/times.tsv
: > "$TIMES"
# run PEER ROUND CMD...: one timed run; appends "peer wall cpu kib" to TIMES.
run() {
	peer=$1 round=$2
	shift 2
	if /usr/bin/time -f '%e %M %U %S' -o "$PEERS/$peer.time" "$@" > "$PEERS/$peer.out" 2> "$PEERS/$peer.err"; then
		read -r s kib u sy < "$PEERS/$peer.time"
		printf '%s\t%s\t%s\t%s\n' "$peer" "$s" "$(awk -v u="$u" -v s="$sy" 'BEGIN { printf "%.2f", u + s }')" "$kib" >> "$TIMES"
		echo "round $round: $peer ${s}s"
	else
		echo "bench-peers: $peer failed in round $round:" >&2
		tail -n 5 "$PEERS/$peer.err" >&2
		failed=1
	fi
}
# chain: the fused counting step (cnt-count); pipe: the same chain with the
# three composable steps, kept to show both
# tail BUCKETS: the projection and the ranked view
tail_of() {
	echo "'$BIN/cnt-project' -d '$DEFS' -b acme-distance-all -w '$PEERS/views' --now $NOW '$1' &&
 '$BIN/cnt-rank' -w '$PEERS/views' -b acme-distance-all --now $NOW -F json top 100"
}
CHAIN="rm -rf '$PEERS/views' && '$BIN/cnt-count' -d '$DEFS' -o '$PEERS/buckets.avro' '$AVRO' &&
 $(tail_of "$PEERS/buckets.avro") > '$PEERS/chain.json'"
PIPE="rm -rf '$PEERS/views' && '$BIN/cnt-dedup' -d '$DEFS' '$AVRO' | '$BIN/cnt-window' -d '$DEFS' |
 '$BIN/cnt-accumulate' -d '$DEFS' -o '$PEERS/pipe-buckets.avro' &&
 $(tail_of "$PEERS/pipe-buckets.avro") > '$PEERS/pipe.json'"
# before: the pipe of an older build (BENCH_BEFORE=its bin directory), so
# that a change is measured against what it replaced in the same run
BEFORE=${BENCH_BEFORE:-}
if [ -n "$BEFORE" ]; then
	for t in cnt-dedup cnt-window cnt-accumulate cnt-project cnt-rank; do
		[ -x "$BEFORE/$t" ] || die "BENCH_BEFORE: $BEFORE/$t is missing"
	done
fi
OLD="rm -rf '$PEERS/old-views' && '$BEFORE/cnt-dedup' -d '$DEFS' '$AVRO' | '$BEFORE/cnt-window' -d '$DEFS' |
 '$BEFORE/cnt-accumulate' -o '$PEERS/old-buckets.avro' &&
 '$BEFORE/cnt-project' -d '$DEFS' -b acme-distance-all -w '$PEERS/old-views' --now $NOW '$PEERS/old-buckets.avro' &&
 '$BEFORE/cnt-rank' -w '$PEERS/old-views' -b acme-distance-all --now $NOW -F json top 100 > '$PEERS/before.json'"
r=1
while [ "$r" -le "$ROUNDS" ]; do
	run chain "$r" sh -c "set -e; $CHAIN"
	run pipe "$r" sh -c "set -e; $PIPE"
	[ -n "$BEFORE" ] && run before "$r" sh -c "set -e; $OLD"
	run duckdb "$r" node "$PEERS/duck.mjs" run "$PARQUET" "$PEERS/duckdb.top" "$NOW"
	[ -n "$LIMITB" ] && run limitb "$r" "$LIMITB" -t 2 -o "$PEERS/limitb.bin" -b "$PEERS/limitb.board" "$AVRO"
	r=$((r + 1))
done

# ---- the top 100 must agree -------------------------------------------------
jq -r '.entries[] | "\(.rank)\t\(.member_ref)\t\(.value)"' \
	"$PEERS/chain.json" > "$PEERS/chain.top" 2> /dev/null || failed=1
agree() { # NAME FILE
	if [ -s "$PEERS/chain.top" ] && cmp -s "$PEERS/chain.top" "$2"; then
		echo "top 100: the chain and $1 agree"
	else
		echo "top 100: the chain and $1 DISAGREE (diff $PEERS/chain.top $2)"
		failed=1
	fi
}
jq -r '.entries[] | "\(.rank)\t\(.member_ref)\t\(.value)"' \
	"$PEERS/pipe.json" > "$PEERS/pipe.top" 2> /dev/null || failed=1
agree DuckDB "$PEERS/duckdb.top"
agree "the pipe" "$PEERS/pipe.top"
if [ -n "$BEFORE" ]; then
	jq -r '.entries[] | "\(.rank)\t\(.member_ref)\t\(.value)"' "$PEERS/before.json" > "$PEERS/before.top" 2> /dev/null || failed=1
	agree "the older build ($BEFORE)" "$PEERS/before.top"
fi
if cmp -s "$PEERS/buckets.avro" "$PEERS/pipe-buckets.avro"; then
	echo "buckets: cnt-count and the pipe wrote the same bytes"
else
	echo "buckets: cnt-count and the pipe DIFFER (cmp $PEERS/buckets.avro $PEERS/pipe-buckets.avro)"
	failed=1
fi
if [ -n "$LIMITB" ]; then
	grep -v '^#' "$PEERS/limitb.board" | grep -v '^hist' | cut -f 1-3 > "$PEERS/limitb.top"
	agree "the measuring stick" "$PEERS/limitb.top"
fi

# ---- medians and ratios -----------------------------------------------------
echo
echo "peers: $N events, $ROUNDS rounds interleaved, medians; DuckDB $DUCK_VERSION (2 threads, from Parquet)"
awk -F '\t' -v n="$N" '
function median(a, k,   i, j, t) {
	for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
}
{ k[$1]++; w[$1, k[$1]] = $2; c[$1, k[$1]] = $3; m[$1, k[$1]] = $4 }
END {
	printf "%-8s %8s %8s %12s %14s %9s\n", "peer", "wall s", "cpu s", "events/s", "events/cpu-s", "peak MiB"
	split("chain pipe before duckdb limitb", order, " ")
	for (o = 1; o <= 5; o++) {
		p = order[o]
		if (!k[p]) continue
		for (i = 1; i <= k[p]; i++) { ww[i] = w[p, i]; cc[i] = c[p, i]; mm[i] = m[p, i] }
		W[p] = median(ww, k[p]); C[p] = median(cc, k[p]); M = median(mm, k[p])
		printf "%-8s %8.2f %8.2f %12.0f %14.0f %9.0f\n", p, W[p], C[p], n / W[p], n / C[p], M / 1024
	}
	if (k["chain"] && k["duckdb"])
		printf "chain vs DuckDB: %.2fx its wall-clock speed, %.2fx its events per CPU-second (goal >= 2x, >= 1.5x)\n",
			W["duckdb"] / W["chain"], C["duckdb"] / C["chain"]
	if (k["chain"] && k["limitb"])
		printf "chain vs the measuring stick: %.2fx its wall time (goal <= 1.25x)\n", W["chain"] / W["limitb"]
	if (k["chain"] && k["pipe"])
		printf "chain (cnt-count) vs the pipe: %.2fx its wall-clock speed, %.2fx its events per CPU-second\n",
			W["pipe"] / W["chain"], C["pipe"] / C["chain"]
	if (k["chain"] && k["before"])
		printf "chain vs the older build (before): %.2fx its wall-clock speed, %.2fx its events per CPU-second\n",
			W["before"] / W["chain"], C["before"] / C["chain"]
}' "$TIMES"

# ---- decode: cnt-cat --count beside the stick's --decode-only (decode.sh) ---
if [ -n "$LIMITB" ]; then
	echo
	LIMITB=$LIMITB BUILD=$BUILD BENCH_DIR=$OUT BENCH_EVENTS=$N ROUNDS=$ROUNDS sh tests/bench/decode.sh || failed=1
fi
exit $failed
