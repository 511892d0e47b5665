#!/usr/bin/env bats
# Estimates of approx counters (issue 11, part 3; needs part 1's
# `type: "approx"` and `tolerated_error` in the definitions).  Bucket files
# are written here by an independent writer (python3-avro) with chosen
# sum and sum_var, so every bound is computed by hand: E = ceil(1.96 *
# sqrt(V)) for the summed variance V of a member's buckets.  Checked: every
# cnt-rank question (JSON and table), cnt-series views, an unknown bound
# (a negative variance), and cnt-diff -d with the declared tolerance (5 %)
# on bucket files and views.

bats_require_minimum_version 1.5.0
load data/views/common

H=3600000
T0=1772359200000   # 2026-03-01T10:00:00Z

setup() {
	set -o pipefail
	cd "$BATS_TEST_TMPDIR"
	# the views' definitions plus utc/apx (approx, 5 %) and its board
	jq '.counters += [{"tenant_id":"utc","counter_id":"apx","versions":[{"version":1,"type":"approx",
		"tolerated_error":0.05,"bounds_lo":-1000000,"bounds_hi":1000000,"lateness_horizon_s":31536000}]}] |
	    .leaderboards += [{"board_id":"ov_apx","tenant_id":"utc","counter_id":"apx","window":"all_time",
		"materialised_cap":10,"freshness_budget_s":600}]' "$DEFS" >defs.json
	D=$PWD/defs.json
}

# craft OUT: bucket records of utc/apx v1 from lines "member hour sum
# sum_var" on standard input (count = sum, sampled = sum / 4), written by
# python3-avro with cnt's bucket schema, sorted by key.
craft() {
	cat >"$1.lines"
	"$PY" - "$BATS_TEST_DIRNAME/../lib/model/schemas/bucket_aggregate.avsc" "$1" "$1.lines" <<'PYEOF'
import sys, avro.schema, avro.datafile, avro.io
from datetime import datetime, timezone
def ts(ms):
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc)
schema = avro.schema.parse(open(sys.argv[1]).read())
rows = []
for line in open(sys.argv[3]):
    m, h, s, v = line.split()
    h, s, v = int(h), int(s), int(v)
    start = 1772359200000 + h * 3600000
    rows.append({"tenant_id": "utc", "counter_id": "apx", "counter_version": 1, "member_ref": m,
        "dim": "", "dim_value": "", "bucket_start": ts(start), "bucket_end": ts(start + 3600000), "shard": 0,
        "count": s, "sum": s, "sum_high": -1 if s < 0 else 0, "sum_overflow": False, "min": None, "max": None,
        "last_event_time": ts(start + 60000), "max_ingest_time": ts(start + 120000), "late_count": 0, "late_sum": 0,
        "late_sum_high": 0, "late_sum_overflow": False, "sketch": None, "late_sketch": None,
        "last_event_count": 1, "max_ingest_count": 1, "sampled": max(s // 4, 1),
        "sum_var": v, "sum_var_high": -1 if v < 0 else 0})
rows.sort(key=lambda r: (r["member_ref"].encode(), r["bucket_start"]))
with open(sys.argv[2], "wb") as f:
    w = avro.datafile.DataFileWriter(f, avro.io.DatumWriter(), schema)
    for r in rows:
        w.append(r)
    w.close()
PYEOF
}

# a: 10000 over two hours, V = 10000 + 20000 = 30000: E = ceil(339.48) = 340
# b: 5000, V = 2500: E = 98 exactly (1.96 * 50)
# c: 100, V = 0: E = 0 (every event kept)
standard() {
	printf 'a 0 4000 10000\na 1 6000 20000\nb 0 5000 2500\nc 0 100 0\n' | craft b.avro
	cnt-project -d "$D" -b ov_apx -w views --now 2026-03-02T00:00:00Z b.avro
}

@test "approx board, top: each member's summed variance gives its bound, JSON and table" {
	standard
	run -0 cnt-rank -w views -b ov_apx top 3
	echo "$output" | one '.estimate == true and
		[.entries[] | [.member_ref, .value, .estimate, .error]] ==
		[["a", 10000, true, 340], ["b", 5000, true, 98], ["c", 100, true, 0]]'
	run -0 cnt-rank -w views -b ov_apx -F table top 3
	echo "$output" | grep -E '^ +1  a +~10000 \+-340$'
	echo "$output" | grep -E '^ +2  b +~5000 \+-98$'
	echo "$output" | grep -E '^ +3  c +~100 \+-0$'
	desc views/ov_apx/global/current | jq -e '.counter_type == "approx" and .errors == true and has("precision") == false'
}

@test "approx board, rank, value and around: the member's bound, JSON and table" {
	standard
	for q in "rank b" "value b" "around b 1"; do
		# shellcheck disable=SC2086
		run -0 cnt-rank -w views -b ov_apx $q
		echo "$output" | one '.value == 5000 and .estimate == true and .error == 98'
		# shellcheck disable=SC2086
		run -0 cnt-rank -w views -b ov_apx -F table $q
		echo "$output" | grep -F 'b: value ~5000 +-98'
	done
	run -0 cnt-rank -w views -b ov_apx around b 1
	echo "$output" | one '[.neighbourhood[] | .error] == [340, 98, 0]'
}

@test "a negative summed variance (only a corrupt bucket has one): the bound is unknown and says so" {
	printf 'a 0 4000 -5\nb 0 5000 2500\n' | craft b.avro
	cnt-project -d "$D" -b ov_apx -w views --now 2026-03-02T00:00:00Z b.avro
	run -0 cnt-rank -w views -b ov_apx value a
	echo "$output" | one '.estimate == true and .error == null'
	run -0 cnt-rank -w views -b ov_apx -F table value a
	echo "$output" | grep -F 'a: value ~4000 +-?'
	run -0 cnt-rank -w views -b ov_apx verify
}

@test "cnt-series: an approx counter's views are an estimate with the bound of their summed variance" {
	printf 'a 0 4000 10000\nb 0 5000 20000\n' | craft b.avro
	run -0 cnt-series -d "$D" --counter utc/apx --from 2026-03-01 --to 2026-03-02 -F json b.avro
	# V = 30000: E = 340
	echo "$output" | one '.views == 9000 and .views_estimate == true and .views_error == 340'
	run -0 cnt-series -d "$D" --counter utc/apx --from 2026-03-01 --to 2026-03-02 b.avro
	echo "$output" | grep -E '^2026-03-01 +~9000 \+-340 +-$'
}

@test "cnt-diff -d: approx records agree within the declared 5 %, not beyond; --tolerance overrides" {
	printf 'a 0 10000 30000\nb 0 5000 2500\n' | craft l.avro
	printf 'a 0 10400 31000\nb 0 4900 2400\n' | craft near.avro   # 3.8 % and 2 %
	printf 'a 0 11000 33000\nb 0 5000 2500\n' | craft far.avro    # 9.1 %
	run -1 cnt-diff -q l.avro near.avro
	run -0 --separate-stderr cnt-diff -d "$D" -v --stats st.json l.avro near.avro
	[ -z "$output" ]
	echo "$stderr" | grep -F "utc/apx v1: approx, tolerance 0.05 (declared)"
	one '.equal and .counters[0].type == "approx" and .counters[0].tolerance == 0.05 and
		.counters[0].tolerance_from == "declared"' st.json
	run -1 cnt-diff -d "$D" l.avro far.avro
	echo "$output" | one '.key.member_ref == "a" and .left.sum == 10000 and .right.sum == 11000'
	run -0 --separate-stderr cnt-diff -d "$D" -v --tolerance 0.1 l.avro far.avro
	echo "$stderr" | grep -F "utc/apx v1: approx, tolerance 0.1 (--tolerance)"
}

@test "cnt-diff -d on approx views: the declared tolerance applies and is named" {
	printf 'a 0 10000 30000\nb 0 5000 2500\n' | craft l.avro
	printf 'a 0 10400 31000\nb 0 5000 2500\n' | craft r.avro
	cnt-project -d "$D" -b ov_apx -w L --now 2026-03-02T00:00:00Z l.avro
	cnt-project -d "$D" -b ov_apx -w R --now 2026-03-02T00:00:00Z r.avro
	run -1 cnt-diff L/ov_apx/global/current R/ov_apx/global/current
	run -0 --separate-stderr cnt-diff -d "$D" -v --stats st.json L/ov_apx/global/current R/ov_apx/global/current
	echo "$stderr" | grep -F "tolerance 0.05 (declared)"
	one '.tolerance_from == "declared"' st.json
}

@test "the pipeline: an approx counter's answers from ingested events are estimates with a bound" {
	seq 1 2000 | awk '{printf "{\"idempotency_key\":\"k%d\",\"tenant_id\":\"utc\",\"counter_id\":\"apx\",\"member_ref\":\"m%d\",\"delta\":1,\"event_time\":\"2026-03-01T10:00:00Z\"}\n", $1, $1 % 2}' >ev.jsonl
	cnt-ingest -d "$D" --now 2026-03-01T12:00:00Z --max-past 400d -o log.avro ev.jsonl
	cnt-dedup -d "$D" log.avro | cnt-window -d "$D" | cnt-accumulate -o b.avro
	cnt-project -d "$D" -b ov_apx -w views --now 2026-03-02T00:00:00Z b.avro
	run -0 cnt-rank -w views -b ov_apx top 2
	echo "$output" | one '.estimate == true and all(.entries[]; .estimate == true and .error >= 0)'
	run -0 cnt-explain -d "$D" -b ov_apx --member m1 --now 2026-03-02T00:00:00Z -F json log.avro
	echo "$output" | jq -e 'select(.kind == "standing") | .estimate == true and .error >= 0'
}
