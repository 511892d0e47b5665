#!/usr/bin/env bats
# cnt-accumulate: exact 128-bit sums at and past the 64-bit limit, the
# other aggregates, late events kept apart, sketches, canonical bytes for
# shuffled / split / spilled inputs, merge commutativity, associativity and
# sketch idempotence, shards, wrong input, conservation.
#
# Expected sums are computed with Python's unbounded integers from the
# JSON input, never from our output; records are read with cnt-cat (sums
# past 2^53 with Python, since jq rounds them to doubles) or as cnt-diff's
# JSON against an empty bucket file (which adds the sketch estimates).

bats_require_minimum_version 1.5.0
load data/core/common

MAX=9223372036854775807
MIN=-9223372036854775808
LATER=2026-03-01T10:05:00Z    # an on-time ingest for events at 10:00Z (utc: lateness 600 s)

setup() {
	set -o pipefail
	cd "$BATS_TEST_TMPDIR"
}

# buckets OUT [cnt-accumulate options]: events (Avro) on standard input
# through cnt-window and cnt-accumulate into the bucket file OUT.
buckets() {
	local out=$1
	shift
	cnt-window -d "$DEFS" | cnt-accumulate -o "$out" "$@"
}

# records FILE: every record of a bucket file as cnt-diff prints it
# (cnt_bucket_to_json: exact decimal sums, sketch estimates), one a line.
records() {
	[ -e empty.avro ] || ingest "$T0" - </dev/null | buckets empty.avro
	local rc=0
	cnt-diff "$1" empty.avro | jq -c .left || rc=$?
	[ "$rc" -eq 0 ] || [ "$rc" -eq 1 ]
}

# ---- exact sums ------------------------------------------------------------

@test "exact sums at and past the 64-bit limit: sum_high and sum hold the 128-bit value" {
	{
		ev a1 big fit_max $((MAX - 1)); ev a2 big fit_max 1                # 2^63-1: fits
		ev b1 big over1 $MAX; ev b2 big over1 1                            # 2^63: overflow
		for k in 1 2 3 4 5; do ev "c$k" big many $MAX; done                # 5 (2^63-1)
		ev d1 big fit_min $((MIN + 1)); ev d2 big fit_min -1               # -2^63: fits
		ev e1 big under $MIN; ev e2 big under -1                           # -2^63-1
		for k in 1 2 3 4; do ev "f$k" big neg_many $MIN; done              # -2^65
		ev g1 big back $MAX; ev g2 big back $MAX; ev g3 big back $MIN; ev g4 big back $MIN  # -2, via 2^64-2
	} >in.jsonl
	ingest "$LATER" e.avro <in.jsonl
	run --separate-stderr buckets b.avro --stats st.json <e.avro
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"warning: 4 bucket sums do not fit 64 bits"* ]]
	one '.sum_overflows == 4' st.json
	cnt-cat b.avro >b.jsonl
	"$PY" - in.jsonl b.jsonl <<'EOF'
import json, sys
want, mins, maxs = {}, {}, {}
for l in open(sys.argv[1]):
    e = json.loads(l)
    m, d = e["member_ref"], e["delta"]
    want[m] = want.get(m, 0) + d
    mins[m] = min(mins.get(m, d), d)
    maxs[m] = max(maxs.get(m, d), d)
got = [json.loads(l) for l in open(sys.argv[2])]
assert sorted(r["member_ref"] for r in got) == sorted(want), [r["member_ref"] for r in got]
for r in got:
    m = r["member_ref"]
    v = r["sum_high"] * 2**64 + (r["sum"] % 2**64)
    fits = -2**63 <= want[m] < 2**63
    assert v == want[m], (m, v, want[m])
    assert r["sum_overflow"] == (not fits), (m, r["sum_overflow"])
    if fits:
        assert r["sum"] == want[m] and r["sum_high"] == (-1 if want[m] < 0 else 0), (m, r)
    # an exact counter keeps no min or max (cnt-bucket(5))
    assert r["min"] is None and r["max"] is None, (m, r)
    assert r["last_event_count"] == sum(1 for x in open(sys.argv[1]) if json.loads(x)["member_ref"] == m), (m, r)
    assert r["late_count"] == 0 and r["late_sum"] == 0 and not r["late_sum_overflow"]
print(sorted((m, want[m]) for m in want))
EOF
	# cnt-diff's JSON prints the exact decimal value (read without jq,
	# which would round it to a double)
	records b.avro >/dev/null
	{ cnt-diff b.avro empty.avro || true; } | grep -F '"member_ref":"many"' | grep -F '"sum":46116860184273879035,'
	{ cnt-diff b.avro empty.avro || true; } | grep -F '"member_ref":"neg_many"' | grep -F '"sum":-36893488147419103232,'
}

@test "exact late sums past the 64-bit limit: late_sum_high, late_sum_overflow" {
	{ ev a big m $MAX; ev b big m $MAX; ev c big m 2; } | ingest 2026-03-01T12:00:00Z late.avro
	ev d big m 5 | ingest "$LATER" ontime.avro
	cat late.avro ontime.avro | buckets b.avro --stats st.json 2>err
	cnt-cat b.avro | "$PY" -c '
import json, sys
r = json.loads(sys.stdin.read())
assert r["late_count"] == 3 and r["late_sum_high"] * 2**64 + r["late_sum"] % 2**64 == 2**64, r
assert r["late_sum_overflow"] and r["late_sum"] == 0 and r["late_sum_high"] == 1, r
assert r["count"] == 1 and r["sum"] == 5 and not r["sum_overflow"] and r["min"] is None and r["max"] is None, r
assert r["last_event_count"] == 1 and r["max_ingest_count"] == 3, r'
}

@test "128-bit sums merge exactly: parts accumulated separately, then merged, give the same bytes" {
	{ for k in $(seq 6); do ev "p$k" big m $MAX; ev "n$k" big n $MIN; done; } >in.jsonl
	ingest "$LATER" all.avro <in.jsonl
	head -n 5 in.jsonl | ingest "$LATER" p1.avro
	tail -n +6 in.jsonl | ingest "$LATER" p2.avro
	buckets whole.avro <all.avro 2>/dev/null
	buckets b1.avro <p1.avro 2>/dev/null
	buckets b2.avro <p2.avro 2>/dev/null
	cnt-accumulate -o merged.avro b1.avro b2.avro 2>/dev/null
	cmp whole.avro merged.avro
	records merged.avro >/dev/null
	{ cnt-diff merged.avro empty.avro || true; } | grep -F '"member_ref":"m"' | grep -F '"sum":55340232221128654842,'
}

# ---- the other aggregates ----------------------------------------------

@test "count, min, max, last_event_time, max_ingest_time; late events only in late_count and late_sum" {
	# utc/dist (exact) and utc/hi (max), bucket 10:00Z-11:00Z, on time until 11:10:00Z
	jq '.counters += [{tenant_id: "utc", counter_id: "hi", versions: [{version: 1, type: "max", lateness_horizon_s: 600}]}]' \
		"$DEFS" >defs.json
	DEFS=$PWD/defs.json
	for c in dist hi; do
		{
			ev a$c $c m1 5 '' 2026-03-01T10:01:00Z
			ev b$c $c m1 -3 '' 2026-03-01T10:59:59.999Z
			ev c$c $c m1 12 '' 2026-03-01T10:30:00Z
			ev d$c $c m2 7 '' 2026-03-01T10:10:00Z
		} | ingest 2026-03-01T11:05:00Z s1$c.avro "$DEFS"
		ev e$c $c m1 1 '' 2026-03-01T10:02:00Z | ingest 2026-03-01T11:10:00Z s2$c.avro "$DEFS"    # on time, the last one
		{
			ev f$c $c m1 1000 '' 2026-03-01T10:45:00Z     # late: not in count, sum, min, max, last
			ev g$c $c m3 -50 '' 2026-03-01T10:20:00Z      # a member with late events only
			ev h$c $c m3 -60 '' 2026-03-01T10:21:00Z
		} | ingest 2026-03-01T11:10:00.001Z s3$c.avro "$DEFS"
	done
	cat s1dist.avro s2dist.avro s3dist.avro s1hi.avro s2hi.avro s3hi.avro | buckets b.avro
	records b.avro >r.jsonl
	cat r.jsonl
	local t0=$T0_MS
	# an exact counter (dist) has no min or max; the max counter has both;
	# otherwise they are alike
	jq -e -s --argjson t0 "$t0" '
		length == 6 and all(.[]; .bucket_start == $t0 and .bucket_end == $t0 + 3600000 and .shard == 0) and
		(map(.counter_id) == ["dist", "dist", "dist", "hi", "hi", "hi"]) and
		all(.[0:3][]; .min == null and .max == null) and
		(.[3] | .min == -3 and .max == 12) and (.[4] | .min == 7 and .max == 7) and
		(.[5] | .min == null and .max == null) and
		all(.[0, 3]; .member_ref == "m1" and .count == 4 and .sum == 15 and
			.last_event_time == $t0 + 3599999 and .last_event_count == 1 and
			.max_ingest_time == $t0 + 4200001 and .max_ingest_count == 1 and
			.late_count == 1 and .late_sum == 1000 and .sketch_estimate == null) and
		all(.[1, 4]; .member_ref == "m2" and .count == 1 and .sum == 7 and
			.last_event_time == $t0 + 600000 and .max_ingest_time == $t0 + 3900000 and .late_count == 0) and
		all(.[2, 5]; .member_ref == "m3" and .count == 0 and .sum == 0 and
			.last_event_time == null and .last_event_count == 0 and .max_ingest_count == 2 and
			.late_count == 2 and .late_sum == -110)' r.jsonl
}

@test "unique counter: the sketch counts distinct on-time items, late items in late_sketch" {
	{
		for u in u1 u2 u3 u4 u5 u3 u1; do ev "k$u$RANDOM" uniq m1 1 "$u"; done
		ev x uniq m2 1 solo
		ev y dist m1 4
	} | ingest "$LATER" s1.avro
	{ ev l1 uniq m1 1 u1; ev l2 uniq m1 1 u9; } | ingest 2026-03-01T12:00:00Z s2.avro
	cat s1.avro s2.avro | buckets b.avro
	records b.avro >r.jsonl
	cat r.jsonl
	jq -e -s '[.[] | {counter_id, member_ref, count, sum, sketch_estimate, late_sketch_estimate, late_count}] == [
		{counter_id: "dist", member_ref: "m1", count: 1, sum: 4, sketch_estimate: null, late_sketch_estimate: null, late_count: 0},
		{counter_id: "uniq", member_ref: "m1", count: 7, sum: 7, sketch_estimate: 5, late_sketch_estimate: 2, late_count: 2},
		{counter_id: "uniq", member_ref: "m2", count: 1, sum: 1, sketch_estimate: 1, late_sketch_estimate: null, late_count: 0}]' r.jsonl
}

@test "records are sorted by key: strings by bytes (shorter first on a tie), then version, bucket, shard" {
	{
		for m in m10 m2 m1 M m Zeta alpha; do ev "d$m" dist "$m" 1; ev "c$m" clicks "$m" 1; done
		ev k1 dist m1 1 '' "$T0" kol
		ev late1 dist m1 1 '' 2026-03-01T09:00:00Z
		ev neg dist m1 1 '' 1969-12-31T23:00:00Z
	} | cnt-ingest -d "$DEFS" --now "$LATER" --max-past 30000d -o s.avro
	buckets b.avro <s.avro
	cnt-cat b.avro | jq -r '"\(.tenant_id)|\(.counter_id)|\(.member_ref)|\(.bucket_start)"' >got.txt
	cat got.txt
	"$PY" - got.txt <<'EOF'
import sys
rows = [l.rstrip("\n").split("|") for l in open(sys.argv[1])]
keys = [(t.encode(), c.encode(), m.encode(), int(b)) for t, c, m, b in rows]
assert keys == sorted(keys) and len(set(keys)) == len(keys), keys
assert [r[2] for r in rows if r[1] == "clicks"] == ["M", "Zeta", "alpha", "m", "m1", "m10", "m2"]
assert rows[0][0] == "kol"
m1 = [int(r[3]) for r in rows if r[:3] == ["utc", "dist", "m1"]]
assert len(m1) == 3 and m1[0] < 0 < m1[1] < m1[2], m1   # 1969 (negative) first, then 09:00, 10:00
EOF
}

# ---- canonical bytes ---------------------------------------------------

# mixed N SEED: N generated events (data/core/gen-events.py), admitted at 12:01Z.
mixed() {
	"$PY" "$DATA/gen-events.py" "$2" "$1" | cnt-ingest -d "$DEFS" --now 2026-03-01T12:01:00Z -o - - 2>/dev/null
}

@test "shuffled input gives byte-identical output" {
	"$PY" "$DATA/gen-events.py" 3 400 >in.jsonl
	"$PY" -c 'import random, sys; l = open(sys.argv[1]).readlines(); random.Random(9).shuffle(l); sys.stdout.write("".join(l))' \
		in.jsonl >shuf.jsonl
	tac in.jsonl >rev.jsonl
	for f in in shuf rev; do
		cnt-ingest -d "$DEFS" --now 2026-03-01T12:01:00Z -o "$f.avro" "$f.jsonl" 2>/dev/null
		cnt-window -d "$DEFS" "$f.avro" | cnt-accumulate -o "b-$f.avro"
	done
	! cmp -s in.avro shuf.avro   # the events did come in another order
	cmp b-in.avro b-shuf.avro
	cmp b-in.avro b-rev.avro
}

@test "split input accumulated separately, then merged, gives the same bytes as the whole" {
	mixed 400 4 >all.avro
	cnt-window -d "$DEFS" -o w.avro all.avro
	cnt-accumulate -o whole.avro w.avro
	cnt-cat w.avro >w.jsonl
	[ "$(wc -l <w.jsonl)" -gt 300 ]
	# three parts of the windowed events, cut by record number, re-encoded by cnt-window
	cnt-cat all.avro | awk 'NR % 3 == 0' | jq -c '{idempotency_key, tenant_id, counter_id, member_ref, delta, item, event_time} | with_entries(select(.value != null))' \
		| ingest 2026-03-01T12:01:00Z p0.avro
	cnt-cat all.avro | awk 'NR % 3 != 0' | jq -c '{idempotency_key, tenant_id, counter_id, member_ref, delta, item, event_time} | with_entries(select(.value != null))' \
		| ingest 2026-03-01T12:01:00Z p1.avro
	cnt-window -d "$DEFS" p0.avro | cnt-accumulate -o b0.avro
	cnt-window -d "$DEFS" p1.avro | cnt-accumulate -o b1.avro
	! cmp -s b0.avro whole.avro
	cnt-accumulate -o merged.avro b0.avro b1.avro
	cmp whole.avro merged.avro
	# and a bucket file mixed with windowed events
	cnt-window -d "$DEFS" p1.avro >w1.avro
	cnt-accumulate -o mixed.avro b0.avro w1.avro
	cmp whole.avro mixed.avro
}

@test "-m: spilling sorted runs to disk gives the same bytes as the in-memory path" {
	# 12000 groups (two events each) pass a 1 MiB limit several times; the
	# 8000 dist groups sum two INT64_MAX deltas, past 64 bits
	awk -v t="$T0_MS" 'BEGIN { for (i = 0; i < 24000; i++)
		printf "{\"idempotency_key\":\"s%d\",\"tenant_id\":\"utc\",\"counter_id\":\"%s\",\"member_ref\":\"m%d\",\"delta\":%s,\"event_time\":%.0f%s}\n",
			i, (i % 3 ? "dist" : "uniq"), (i * 7919) % 12000, (i % 3 ? "9223372036854775807" : i), t + (i % 50) * 1000,
			(i % 3 ? "" : ",\"item\":\"u" i % 7 "\"") }' >in.jsonl
	ingest "$LATER" e.avro <in.jsonl
	cnt-window -d "$DEFS" -o w.avro e.avro
	mkdir spill
	cnt-accumulate -o mem.avro --stats mem.json w.avro 2>/dev/null
	cnt-accumulate -m 1M -T spill -o disk.avro --stats disk.json w.avro 2>/dev/null
	one '.spill_runs == 0 and .out == 12000 and .sum_overflows == 8000' mem.json
	# regression: records written to a run were counted as overflows too
	one '.spill_runs > 0 and .out == 12000 and .memory_limit == 1048576 and .sum_overflows == 8000' disk.json
	cmp mem.avro disk.avro
	[ -z "$(ls -A spill)" ]        # the runs are gone
	# merging bucket files spills the same way
	cnt-accumulate -m 1M -T spill -o remerge.avro --stats re.json disk.avro mem.avro 2>/dev/null
	cnt-accumulate -o remerge-mem.avro disk.avro mem.avro 2>/dev/null
	one '.spill_runs > 0 and .buckets_in == 24000' re.json
	# conservation through spills and merges: every event is in one output record
	one '.balanced and .events == 24000 and .events_out == 24000' disk.json
	one '.balanced and .events == 0 and .events_in_buckets == 48000 and .events_out == 48000' re.json
	cmp remerge.avro remerge-mem.avro
	run cnt-accumulate -m 10K -o x.avro w.avro
	[ "$status" -eq 2 ]
	[[ "$output" == *"--memory: '10K'"* ]]
}

# ---- merge properties --------------------------------------------------

# Three bucket files over the same members and buckets (overlapping keys,
# sketches, late parts, min/max from different sides).
make_abc() {
	mixed 150 11 | buckets A.avro
	mixed 150 12 | buckets B.avro
	mixed 150 13 | buckets C.avro
}

@test "merge is commutative: A+B and B+A give the same bytes" {
	make_abc
	cnt-accumulate -o AB.avro A.avro B.avro
	cnt-accumulate -o BA.avro B.avro A.avro
	cmp AB.avro BA.avro
	! cmp -s AB.avro A.avro
	# the keys overlap, so this did merge records
	[ "$(cnt-cat --count AB.avro)" -lt $(($(cnt-cat --count A.avro) + $(cnt-cat --count B.avro))) ]
}

@test "merge is associative: (A+B)+C, A+(B+C) and A+B+C give the same bytes" {
	make_abc
	cnt-accumulate -o AB.avro A.avro B.avro
	cnt-accumulate -o BC.avro B.avro C.avro
	cnt-accumulate -o AB_C.avro AB.avro C.avro
	cnt-accumulate -o A_BC.avro A.avro BC.avro
	cnt-accumulate -o ABC.avro C.avro A.avro B.avro
	cmp AB_C.avro A_BC.avro
	cmp AB_C.avro ABC.avro
}

@test "sketches are idempotent under merge (A+A keeps the sketch bytes); sums, by nature, are not" {
	mixed 200 21 | buckets A.avro
	cnt-accumulate -o AA.avro A.avro A.avro
	cnt-cat A.avro >a.jsonl
	cnt-cat AA.avro >aa.jsonl
	[ "$(jq -s 'map(select(.sketch != null)) | length' a.jsonl)" -gt 0 ]
	# same keys, same sketches and extremes; counts and sums doubled (a sum
	# counts events: merging a file with itself counts them twice, which
	# is why dedup happens before accumulation, not in the merge)
	jq -e -n --slurpfile a a.jsonl --slurpfile aa aa.jsonl '
		($a | length) == ($aa | length) and
		all(range($a | length); . as $i | $a[$i] as $x | $aa[$i] as $y |
			$y.sketch == $x.sketch and $y.late_sketch == $x.late_sketch and
			$y.min == $x.min and $y.max == $x.max and $y.last_event_time == $x.last_event_time and
			$y.max_ingest_time == $x.max_ingest_time and
			$y.count == 2 * $x.count and $y.sum == 2 * $x.sum and
			$y.late_count == 2 * $x.late_count and $y.late_sum == 2 * $x.late_sum)'
}

# ---- shards ------------------------------------------------------------

@test "several shards: separate records per shard, and fanned in they equal the unsharded totals" {
	mixed 300 31 >e.avro
	cnt-window -d "$DEFS" --shards 3 e.avro | cnt-accumulate -o sh.avro
	cnt-window -d "$DEFS" e.avro | cnt-accumulate -o one.avro
	cnt-cat sh.avro >sh.jsonl
	jq -e -s '([.[].shard] | unique) == [0, 1, 2]' sh.jsonl
	# fan-in: per key without the shard, sums, counts, extremes agree
	fan='group_by([.tenant_id, .counter_id, .member_ref, .bucket_start]) | map({
		k: [.[0].tenant_id, .[0].counter_id, .[0].member_ref, .[0].bucket_start],
		count: (map(.count) | add), sum: (map(.sum) | add), late: (map(.late_count) | add),
		late_sum: (map(.late_sum) | add), min: (map(.min | values) | min), max: (map(.max | values) | max),
		last: (map(.last_event_time | values) | max), mit: (map(.max_ingest_time) | max)})'
	diff <(jq -s -c "$fan" sh.jsonl) <(cnt-cat one.avro | jq -s -c "$fan")
	# shards accumulated separately (the events split by shard) merge to the same bytes
	cnt-window -d "$DEFS" --shards 3 -o w.avro e.avro
	"$PY" - w.avro <<'EOF'
import json, sys, subprocess
# split the windowed events by shard, keeping cnt-window's own bytes: copy the
# file's records through python3-avro, an independent Avro implementation
import avro.datafile, avro.io
r = avro.datafile.DataFileReader(open(sys.argv[1], "rb"), avro.io.DatumReader())
schema = r.schema
recs = list(r)
for s in range(3):
    with open(f"w{s}.avro", "wb") as f:
        w = avro.datafile.DataFileWriter(f, avro.io.DatumWriter(), avro.schema.parse(schema))
        w.set_meta("cnt.fingerprints", r.get_meta("cnt.fingerprints"))  # as cnt-window wrote them
        for x in recs:
            if x["shard"] == s:
                w.append(x)
        w.close()
EOF
	for s in 0 1 2; do cnt-accumulate -o "b$s.avro" "w$s.avro"; done
	cnt-accumulate -o merged.avro b2.avro b0.avro b1.avro
	cmp sh.avro merged.avro
}

# ---- errors and stats --------------------------------------------------

@test "wrong input type (an events file) -> status 2 naming the expected types, no output" {
	ev a dist m1 1 | ingest "$LATER" e.avro
	run cnt-accumulate -o out.avro e.avro
	[ "$status" -eq 2 ]
	[ "$output" = "cnt-accumulate: 'e.avro' holds cnt.CountingEvent records; cnt-accumulate reads cnt.WindowedEvent (from cnt-window) or cnt.BucketAggregate (bucket files)" ]
	[ ! -e out.avro ]
	[ -z "$(ls -A | grep '^\.')" ]
	echo 'not avro' >junk
	run cnt-accumulate -o out.avro junk
	[ "$status" -eq 2 ]
	[[ "$output" == "cnt-accumulate: "*junk* ]]
	run cnt-accumulate -o out.avro missing.avro
	[ "$status" -eq 2 ]
	[[ "$output" == *"cannot open 'missing.avro'"* ]]
}

@test "--stats: conservation (every event is in a count or a late_count), records out" {
	mixed 300 41 >e.avro
	cnt-window -d "$DEFS" --stats ws.json -o w.avro e.avro
	cnt-accumulate --stats as.json -o b.avro w.avro
	cnt-cat b.avro >b.jsonl
	jq -e -n --slurpfile w ws.json --slurpfile a as.json --slurpfile b b.jsonl '
		$w[0].out == $a[0].events and $a[0].in == $a[0].events + $a[0].buckets_in and
		$a[0].events == ([$b[] | .count + .late_count] | add) and
		$a[0].late == ([$b[].late_count] | add) and $a[0].late == $w[0].late and
		$a[0].late > 0 and $a[0].out == ($b | length) and $a[0].tool == "cnt-accumulate"'
	# merging: buckets in, the same records out
	cnt-accumulate --stats m.json -o m.avro b.avro
	cmp b.avro m.avro
	jq -e -n --slurpfile m m.json --slurpfile b b.jsonl '$m[0].buckets_in == ($b | length) and $m[0].events == 0 and $m[0].out == ($b | length)'
}

@test "spill runs have no name: a run killed while spilling leaves nothing in the spill directory" {
	awk -v t="$T0_MS" 'BEGIN { for (i = 0; i < 24000; i++)
		printf "{\"idempotency_key\":\"s%d\",\"tenant_id\":\"utc\",\"counter_id\":\"dist\",\"member_ref\":\"m%d\",\"delta\":1,\"event_time\":%.0f}\n",
			i, i, t + (i % 50) * 1000 }' | ingest "$LATER" e.avro
	cnt-window -d "$DEFS" -c null -o w.avro e.avro
	mkdir spill
	mkfifo in.fifo
	cnt-accumulate -m 1M -T spill -o out.avro in.fifo 3>&- &
	pid=$!
	# all of w.avro is read (and spilled: 24000 groups pass 1 MiB), then
	# the tool waits for the rest of its input
	exec 4>in.fifo
	cat w.avro >&4
	runs=0
	for _ in $(seq 200); do
		runs=$(find "/proc/$pid/fd" -lname "$PWD/spill/*" 2>/dev/null | wc -l)
		[ "$runs" -ge 2 ] && break
		sleep 0.05
	done
	[ "$runs" -ge 2 ]                 # runs are open in spill/ ...
	[ -z "$(ls -A spill)" ]           # ... and none has a name there
	kill -9 "$pid"
	exec 4>&-
	wait "$pid" 2>/dev/null || true
	[ -z "$(ls -A spill)" ]
	# the output's temporary is the next run's to remove
	[ "$(ls -A | grep -c "^\.out\.avro\.tmp-$pid-")" -eq 1 ]
	cnt-accumulate -o out.avro w.avro
	[ "$(ls -A | grep -c '^\.')" -eq 0 ]
}
