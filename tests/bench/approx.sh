#!/bin/sh
# cnt approximate-counter benchmark: figures, not pass/fail (`make
# bench-approx`).  The benchmark's generator (gen-events.c) writes
# BENCH_EVENTS events (1 million by default) over APPROX_MEMBERS members
# (1000) and APPROX_DAYS days (1): per (member, local hour) keys hot enough
# to be sampled.  (At the main benchmark's million members over 7 days
# almost no key reaches K events an hour, so approx keeps every event.)
# The benchmark's definitions are counted twice: as they are, and with
# their exact counters (acme/distance_m, delta 1..5000; acme/workouts,
# delta 1) declared approx with tolerated_error APPROX_EPS (0.05).
# Reported: the realised relative error |approx - exact| / exact, p50, p95
# and p99 and the share above the declaration, over the sampled keys
# (bucket records whose exact count is at least K) and over member-day
# totals with at least K events; archive bytes; and the time of ingest
# and of the counting chain (dedup | window | accumulate) for each.
set -u

BUILD=${BUILD:-build}
BIN=$BUILD/bin
OUT=${BENCH_DIR:-build-bench}/approx
N=${BENCH_EVENTS:-1000000}
M=${APPROX_MEMBERS:-1000}
DAYS=${APPROX_DAYS:-1}
EPS=${APPROX_EPS:-0.05}
NOW=2026-11-30T00:00:00Z
DEFS=tests/bench/definitions.json
CC=${CC:-cc}

die() { echo "bench-approx: $*" >&2; exit 2; }
[ -f tests/bench/gen-events.c ] || die "run me from the top of the cnt source tree"
for t in cnt-ingest cnt-dedup cnt-window cnt-accumulate cnt-cat; do
	[ -x "$BIN/$t" ] || die "$BIN/$t is not built (make tools)"
done
command -v jq >/dev/null || die "jq is missing"
[ -x /usr/bin/time ] || die "/usr/bin/time is missing"
mkdir -p "$OUT" || die "cannot create $OUT"

$CC -std=c11 -D_GNU_SOURCE -O2 -o "$OUT/gen-events" tests/bench/gen-events.c -lm || die "cannot build gen-events"
JSONL=$OUT/events-$N-$M-$DAYS.jsonl
if [ ! -s "$JSONL" ]; then
	"$OUT/gen-events" -n "$N" --members "$M" --zipf-s 1.0 --dup-rate 0.02 --days "$DAYS" \
		--now "$NOW" --seed 1 > "$JSONL.tmp" 2>/dev/null && mv "$JSONL.tmp" "$JSONL" || die "gen-events failed"
fi
ADEFS=$OUT/definitions-approx.json
jq --argjson e "$EPS" '(.counters[].versions[] | select(.type == "exact")) |= (.type = "approx" | .tolerated_error = $e)' \
	"$DEFS" > "$ADEFS" || die "cannot write $ADEFS"

echo "cnt approx benchmark: $N events, $M members, $DAYS day(s), tolerated_error $EPS"
echo "input: gen-events -n $N --members $M --zipf-s 1.0 --dup-rate 0.02 --days $DAYS --seed 1"
for v in exact approx; do
	d=$DEFS
	[ $v = approx ] && d=$ADEFS
	/usr/bin/time -f '%e %U %S' -o "$OUT/ingest-$v.time" "$BIN/cnt-ingest" -d "$d" --now "$NOW" \
		-o "$OUT/log-$v.avro" --stats "$OUT/ingest-$v.json" "$JSONL" 2>/dev/null || die "cnt-ingest ($v) failed"
	/usr/bin/time -f '%e %U %S' -o "$OUT/chain-$v.time" sh -c "'$BIN/cnt-dedup' -d '$d' '$OUT/log-$v.avro' |
		'$BIN/cnt-window' -d '$d' | '$BIN/cnt-accumulate' -o '$OUT/buckets-$v.avro'" || die "chain ($v) failed"
	"$BIN/cnt-cat" "$OUT/buckets-$v.avro" > "$OUT/buckets-$v.jsonl" || die "cnt-cat failed"
done
python3 - "$OUT" "$EPS" <<'PYEOF'
import json, math, os, sys
from collections import defaultdict
out, eps = sys.argv[1], float(sys.argv[2])
K = math.ceil(1.96 * 1.96 * 0.375 / (eps * eps))
def load(v):
    r = {}
    for l in open(os.path.join(out, "buckets-%s.jsonl" % v)):
        b = json.loads(l)
        if b["dim"] or b["counter_id"] not in ("distance_m", "workouts"):
            continue
        r[(b["counter_id"], b["member_ref"], b["bucket_start"])] = (b["count"], b["sum"], b["sampled"])
    return r
ex, ap = load("exact"), load("approx")
def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, max(0, int(math.ceil(q * len(v))) - 1))] if v else float("nan")
def line(name, errs):
    n = len(errs)
    over = sum(1 for e in errs if e > eps)
    print("  %-34s %7d  p50 %.4f  p95 %.4f  p99 %.4f  above %.2f: %.1f %%" %
          (name, n, pct(errs, .5), pct(errs, .95), pct(errs, .99), eps, 100.0 * over / n if n else 0))
print("K = %d (ceil(1.96^2 * 3/8 / %g^2))" % (K, eps))
print("realised relative error |approx - exact| / exact:")
for c in ("distance_m", "workouts"):
    keys = [k for k in ex if k[0] == c]
    hot = [abs(ap.get(k, (0, 0, 0))[1] - ex[k][1]) / ex[k][1] for k in keys if ex[k][0] >= K and ex[k][1]]
    line("%s keys (member-hour >= K)" % c, hot)
    day = defaultdict(lambda: [0, 0, 0])
    for k in keys:
        d = day[(k[1], k[2] // 86400000)]
        d[0] += ex[k][0]; d[1] += ex[k][1]; d[2] += ap.get(k, (0, 0, 0))[1]
    line("%s member-days (>= K events)" % c, [abs(a - e) / e for n, e, a in day.values() if n >= K and e])
    print("  %-34s %7d of %d keys sampled" % (c + " keys", sum(1 for k in keys if ex[k][0] >= K), len(keys)))
def stats(v):
    return json.load(open(os.path.join(out, "ingest-%s.json" % v)))
def secs(f):
    e, u, s = open(os.path.join(out, f)).read().split()
    return float(e), float(u) + float(s)
se, sa = stats("exact"), stats("approx")
be, ba = (os.path.getsize(os.path.join(out, "log-%s.avro" % v)) for v in ("exact", "approx"))
print("archive: exact %d events %d bytes; approx %d events %d bytes (%.1f %%), sampled_out %d" %
      (se["out"], be, sa["out"], ba, 100.0 * ba / be, sa["sampled_out"]))
for step in ("ingest", "chain"):
    (we, ce), (wa, ca) = secs("%s-exact.time" % step), secs("%s-approx.time" % step)
    print("%-7s exact %6.2f s wall %6.2f s cpu; approx %6.2f s wall %6.2f s cpu" % (step, we, ce, wa, ca))
PYEOF
