#!/usr/bin/env bats
# Approximate counters (cnt-definitions(5) type approx): the declaration,
# deterministic sampling at cnt-ingest, weights through window and
# accumulate, compensations, rebuilds byte-identical, and the error
# realised against the declaration on generated data.  Expected figures
# are computed by python3 from the archived events (cnt-cat), not by the
# code under test.

bats_require_minimum_version 1.5.0

BIN="$BATS_TEST_DIRNAME/../${BUILD:-build}/bin"
PY=/usr/bin/python3
NOW=2026-03-01T12:00:00Z

setup() {
	set -o pipefail
	cd "$BATS_TEST_TMPDIR"
	export PATH="$BIN:$PATH"
	# tolerated_error 0.2: K = ceil(1.96^2 * 3/8 / 0.04) = 37
	cat > defs.json <<'JSON'
{"format": "cnt-definitions/1",
 "tenants": [{"tenant_id": "t", "timezone": "UTC"}],
 "counters": [
  {"tenant_id": "t", "counter_id": "va", "versions": [{"version": 1, "type": "approx",
    "tolerated_error": 0.2, "bounds_lo": 0, "bounds_hi": 100, "windows": ["all_time", "day"]}]},
  {"tenant_id": "t", "counter_id": "ve", "versions": [{"version": 1, "type": "exact",
    "bounds_lo": 0, "bounds_hi": 100, "windows": ["all_time", "day"]}]}],
 "leaderboards": [{"board_id": "top", "tenant_id": "t", "counter_id": "va", "window": "day"}]}
JSON
	# m1: 300 events in one hour, deltas 1..3; m2: 10 events; the same
	# events for the exact twin
	"$PY" - > ev.jsonl <<'PYEOF'
import json
for c in ("va", "ve"):
    for m, n in (("m1", 300), ("m2", 10)):
        for i in range(n):
            print(json.dumps({"idempotency_key": "k-%s-%d" % (m, i), "tenant_id": "t",
                "counter_id": c, "member_ref": m, "delta": 1 + i % 3,
                "event_time": 1772362800000 + i * 1000, "attrs": {"device": "web"}}))
PYEOF
}

ingest() { cnt-ingest -d defs.json --now "$NOW" "$@"; }
chain() { # LOG -> buckets on stdout
	cnt-dedup -d defs.json "$1" | cnt-window -d defs.json | cnt-accumulate
}
# events of LOG as JSON lines
events() { cnt-cat -F json "$1"; }

@test "definitions: approx needs tolerated_error and narrow bounds; tolerated_error refused for exact" {
	mk() { printf '{"format":"cnt-definitions/1","tenants":[{"tenant_id":"t","timezone":"UTC"}],"counters":[{"tenant_id":"t","counter_id":"c","versions":[{"version":1,%s}]%s}]}' "$1" "${2:-}" > d.json; }
	mk '"type":"approx","bounds_lo":0,"bounds_hi":10'
	run -2 cnt-defs check d.json d.json
	[[ "$output" == *"tolerated_error: required for type 'approx'"* ]]
	mk '"type":"exact","tolerated_error":0.1'
	run -2 cnt-defs check d.json d.json
	[[ "$output" == *"tolerated_error: not allowed for a counter of type exact (it counts exactly)"* ]]
	mk '"type":"approx","tolerated_error":0.6,"bounds_lo":0,"bounds_hi":10'
	run -2 cnt-defs check d.json d.json
	[[ "$output" == *"tolerated_error: 0.6 is out of range (0, 0.5]"* ]]
	mk '"type":"approx","tolerated_error":"x","bounds_lo":0,"bounds_hi":10'
	run -2 cnt-defs check d.json d.json
	[[ "$output" == *"tolerated_error: expected a number, got string"* ]]
	mk '"type":"approx","tolerated_error":0.1'
	run -2 cnt-defs check d.json d.json
	[[ "$output" == *"bounds_lo: an approx counter needs bounds_lo and bounds_hi within [-1073741824, 1073741824]"* ]]
	mk '"type":"approx","tolerated_error":0.1,"bounds_lo":0,"bounds_hi":1073741825'
	run -2 cnt-defs check d.json d.json
	[[ "$output" == *"bounds_hi: an approx counter needs"* ]]
	mk '"type":"approx","tolerated_error":0.1,"bounds_lo":-1073741824,"bounds_hi":1073741824' \
		',"holds":[{"signal":"rate","window_s":60,"ceiling":5}]'
	run -2 cnt-defs check d.json d.json
	[[ "$output" == *'$.counters[0].holds: not allowed on a counter with an approx version (version 1)'* ]]
	mk '"type":"approx","tolerated_error":0.1,"bounds_lo":-1073741824,"bounds_hi":1073741824'
	run -0 cnt-defs check d.json d.json
}

@test "definitions: changing tolerated_error under counted data is refused; exact fingerprints unchanged" {
	sed 's/"tolerated_error": 0.2/"tolerated_error": 0.1/' defs.json > d2.json
	run -1 cnt-defs check defs.json d2.json
	[[ "$output" == *"tolerated_error"* ]]
	# the exact twin's fingerprint has no tolerated_error key
	ingest -o log.avro ev.jsonl
	cnt-cat --meta log.avro > meta.txt
	! grep -q '"counter_id":"ve"[^}]*tolerated_error' meta.txt
	grep -q 'tolerated_error' meta.txt
}

@test "ingest: attrs keys beginning cnt. are rejected reserved_attr" {
	printf '%s\n' '{"idempotency_key":"x1","tenant_id":"t","counter_id":"ve","member_ref":"m","delta":1,"event_time":1772362800000,"attrs":{"cnt.sample":"3"}}' \
		'{"idempotency_key":"x2","tenant_id":"t","counter_id":"ve","member_ref":"m","delta":1,"event_time":1772362800000,"attrs":{"cnt":"ok","cnt_x":"ok"}}' > r.jsonl
	run -0 ingest -o log.avro -r rej.jsonl --stats st.json r.jsonl
	jq -e '.reason == "reserved_attr" and .field == "attrs"' rej.jsonl
	jq -e '.rejected_by_reason.reserved_attr == 1 and .out == 1 and .balanced' st.json
	[[ "$(jq -r .message rej.jsonl)" == *"attrs key 'cnt.sample' is reserved"* ]]
}

@test "ingest: samples deterministically, the first K kept, levels by schedule, stats balance" {
	run -0 ingest -o log.avro --stats st.json ev.jsonl
	run -0 ingest -o log2.avro ev.jsonl
	cmp log.avro log2.avro
	events log.avro > log.jsonl
	"$PY" - st.json log.jsonl <<'PYEOF'
import json, math, sys
st = json.load(open(sys.argv[1]))
ev = [json.loads(l) for l in open(sys.argv[2])]
K = 37
va = [e for e in ev if e["counter_id"] == "va"]
ve = [e for e in ev if e["counter_id"] == "ve"]
assert len(ve) == 310 and all("cnt.sample" not in e.get("attrs", {}) for e in ve)
m1 = [e for e in va if e["member_ref"] == "m1"]
m2 = [e for e in va if e["member_ref"] == "m2"]
assert len(m2) == 10 and all("cnt.sample" not in e["attrs"] for e in m2)
idx = [int(e["idempotency_key"].split("-")[2]) for e in m1]
lv = [int(e["attrs"].get("cnt.sample", "0")) for e in m1]
for i, l in zip(idx, lv):
    assert l == min(int(math.floor(math.log2(i // K + 1))), 20), (i, l)
assert idx[:K] == list(range(K))            # the first K all kept
assert len(m1) < 300
out = 300 - len(m1)
assert st["sampled_out"] == out and st["out"] == 620 - out and st["balanced"] is True
assert st["in"] == st["out"] + st["rejected"] + st["duplicates"] + st["held"] + st["sampled_out"]
c = {(x["tenant_id"], x["counter_id"]): x for x in st["counters"]}
assert c[("t", "va")]["sampled_out"] == out and c[("t", "va")]["accepted"] == 310 - out
assert c[("t", "ve")]["sampled_out"] == 0 and c[("t", "ve")]["accepted"] == 310
PYEOF
}

@test "ingest: a retried duplicate gets the same decision in another run" {
	ingest -o log.avro ev.jsonl
	# the same events again in a second run, as a client retry would
	ingest -o log2.avro ev.jsonl
	events log.avro | jq -r .idempotency_key | sort > a
	events log2.avro | jq -r .idempotency_key | sort > b
	cmp a b
	# and a run holding each event twice keeps the same ones once
	cat ev.jsonl ev.jsonl > twice.jsonl
	ingest -o log3.avro --stats st.json twice.jsonl
	events log3.avro | jq -r .idempotency_key | sort > c
	cmp a c
	jq -e '.duplicates == 620 and .balanced' st.json
}

@test "chain: count and sum scaled by 2^L, sampled and sum_var as computed from the archive" {
	ingest -o log.avro ev.jsonl
	chain log.avro > b.avro
	events log.avro > log.jsonl
	cnt-cat -F json b.avro > b.jsonl
	"$PY" - log.jsonl b.jsonl <<'PYEOF'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
bs = [json.loads(l) for l in open(sys.argv[2])]
for m in ("m1", "m2"):
    k = [e for e in ev if e["counter_id"] == "va" and e["member_ref"] == m]
    w = [2 ** int(e["attrs"].get("cnt.sample", "0")) for e in k]
    cnt = sum(w); s = sum(e["delta"] * x for e, x in zip(k, w))
    var = sum(e["delta"] ** 2 * x * (x - 1) for e, x in zip(k, w))
    b = [x for x in bs if x["counter_id"] == "va" and x["member_ref"] == m]
    assert len(b) == 1, b
    b = b[0]
    assert b["count"] == cnt and int(b["sum"]) == s, (b, cnt, s)
    assert b["sampled"] == len(k), b
    assert b["sum_var"] == var and b["sum_var_high"] == 0, (b, var)
    assert b["min"] is None and b["max"] is None, b
    e = [x for x in bs if x["counter_id"] == "ve" and x["member_ref"] == m][0]
    assert e["sampled"] == 0 and e["sum_var"] == 0
    if m == "m2":
        assert b["count"] == e["count"] == 10 and b["sum"] == e["sum"]
    else:
        assert var > 0 and abs(int(b["sum"]) - int(e["sum"])) < 0.3 * int(e["sum"]), (b, e)
PYEOF
}

# toavro OUT [--shuffle SEED] [--part I N] [--drop KEY]: the events of
# log.jsonl (cnt-cat JSON) written as a CountingEvent archive by
# python3-avro, an independent writer (--drop KEY: without counter va's event KEY).
toavro() {
	"$PY" - "$BATS_TEST_DIRNAME/../lib/model/schemas/counting_event.avsc" log.jsonl "$@" <<'PYEOF'
import json, random, sys
import avro.schema
from avro.datafile import DataFileWriter
from avro.io import DatumWriter
sch = json.load(open(sys.argv[1]))
for f in sch["fields"]:
    if isinstance(f["type"], dict):
        f["type"].pop("logicalType", None)
schema = avro.schema.parse(json.dumps(sch))
ev = [json.loads(l) for l in open(sys.argv[2])]
out, args = sys.argv[3], sys.argv[4:]
while args:
    if args[0] == "--shuffle":
        random.Random(int(args[1])).shuffle(ev); args = args[2:]
    elif args[0] == "--part":
        i, n = int(args[1]), int(args[2]); ev = ev[i::n]; args = args[3:]
    elif args[0] == "--drop":
        ev = [e for e in ev if (e["counter_id"], e["idempotency_key"]) != ("va", args[1])]; args = args[2:]
with open(out, "wb") as fo:
    w = DataFileWriter(fo, DatumWriter(), schema, codec="null")
    for e in ev:
        w.append(e)
    w.close()
PYEOF
}

@test "rebuild: byte-identical twice, in shuffled order, split into runs merged" {
	ingest -o log.avro ev.jsonl
	events log.avro > log.jsonl
	chain log.avro > b1.avro
	chain log.avro > b2.avro
	cmp b1.avro b2.avro
	[ "$(cnt-cat b1.avro | jq -s 'map(select(.sampled > 0)) | length')" -eq 2 ]
	toavro shuf.avro --shuffle 7
	! cmp -s <(events shuf.avro) log.jsonl
	chain shuf.avro > bs.avro
	cmp b1.avro bs.avro
	toavro p0.avro --part 0 2
	toavro p1.avro --part 1 2
	chain p0.avro > bp0.avro
	chain p1.avro > bp1.avro
	! cmp -s bp0.avro b1.avro
	cnt-accumulate -o merged.avro bp0.avro bp1.avro
	cmp b1.avro merged.avro
}

@test "retraction: a sampled event's compensation takes out exactly its weight; --rebuild agrees" {
	ingest -o log.avro ev.jsonl
	events log.avro > log.jsonl
	# a kept event of m1 at level >= 2
	key=$(jq -r 'select(.counter_id == "va" and ((.attrs["cnt.sample"] // "0") | tonumber) >= 2) | .idempotency_key' log.jsonl | head -n 1)
	[ -n "$key" ]
	cnt-retract --event "$key" --tenant t --counter va --cause fraud --requester r --authority a \
		--ledger ledger.jsonl --now "$NOW" -o comp.avro log.avro
	# the compensation carries the original's cnt.sample
	[ "$(events comp.avro | jq -r '.attrs["cnt.sample"]')" = "$(jq -r --arg k "$key" 'select(.counter_id == "va" and .idempotency_key == $k) | .attrs["cnt.sample"]' log.jsonl)" ]
	toavro without.avro --drop "$key"
	chain without.avro > ref.avro
	cnt-window -d defs.json log.avro | cnt-accumulate -o old.avro
	cnt-window -d defs.json comp.avro | cnt-accumulate -o cb.avro
	cnt-accumulate -o merged.avro old.avro cb.avro
	cols() { cnt-cat "$1" | jq -c '{counter_id, member_ref, count, sum, sampled, sum_var, late_count, late_sum}'; }
	[ "$(cols merged.avro)" = "$(cols ref.avro)" ]
	! cmp -s <(cols old.avro) <(cols ref.avro)
	cnt-retract --rebuild merged.avro -d defs.json -o rebuilt.avro log.avro comp.avro
	cmp rebuilt.avro ref.avro
}

@test "error realised within the declaration on Zipf-like volumes; fewer events archived" {
	cat > zdefs.json <<'JSON'
{"format": "cnt-definitions/1",
 "tenants": [{"tenant_id": "t", "timezone": "Europe/Berlin"}],
 "counters": [
  {"tenant_id": "t", "counter_id": "va", "versions": [{"version": 1, "type": "approx",
    "tolerated_error": 0.05, "bounds_lo": 0, "bounds_hi": 100}]},
  {"tenant_id": "t", "counter_id": "ve", "versions": [{"version": 1, "type": "exact",
    "bounds_lo": 0, "bounds_hi": 100}]}]}
JSON
	# 200 members, member i with 60000/i views (delta 1) over the two
	# hours before the ingest time; each event offered to both counters
	"$PY" - > z.jsonl <<'PYEOF'
import json, random
r = random.Random(11)
t0 = 1772359200000
for i in range(1, 201):
    for j in range(60000 // i):
        d = 1; t = t0 + r.randrange(7200000)
        for c in ("va", "ve"):
            print(json.dumps({"idempotency_key": "z%d-%d" % (i, j), "tenant_id": "t", "counter_id": c,
                "member_ref": "m%d" % i, "delta": d, "event_time": t}))
PYEOF
	cnt-ingest -d zdefs.json --now "$NOW" -o z.avro --stats zst.json z.jsonl
	cnt-dedup -d zdefs.json z.avro | cnt-window -d zdefs.json | cnt-accumulate -o zb.avro
	cnt-cat -F json zb.avro > zb.jsonl
	"$PY" - zb.jsonl zst.json <<'PYEOF'
import json, math, sys
from collections import defaultdict
tot = defaultdict(lambda: [0, 0, 0])   # (member) -> exact sum, approx sum, var
keys = []
b = [json.loads(l) for l in open(sys.argv[1])]
ex = {(x["member_ref"], x["bucket_start"]): int(x["sum"]) for x in b if x["counter_id"] == "ve"}
for x in b:
    if x["counter_id"] != "va":
        continue
    e = ex[(x["member_ref"], x["bucket_start"])]
    if x["count"] >= 2 * 577:     # keys that were sampled well beyond K
        keys.append(abs(int(x["sum"]) - e) / e)
    t = tot[x["member_ref"]]
    t[0] += e; t[1] += int(x["sum"]); t[2] += int(x.get("sum_var", 0))
def p(v, q):
    v = sorted(v); return v[min(len(v) - 1, int(math.ceil(q * len(v))) - 1)]
big = [abs(a - e) / e for e, a, _ in tot.values() if e > 0 and a != e]
print("keys", len(keys), "p95", p(keys, 0.95), "members sampled", len(big), "p95", p(big, 0.95))
assert len(keys) >= 20 and p(keys, 0.95) <= 0.05, keys
assert len(big) >= 10 and p(big, 0.95) <= 0.05, big
# the bound 1.96 sqrt(sum_var) an answer states covers the realised error
# for most members (nominally 95 %; the variance is itself estimated)
cover = [abs(a - e) <= 1.96 * math.sqrt(v) for e, a, v in tot.values() if v > 0]
print("covered", sum(cover), "of", len(cover))
assert sum(cover) >= 0.85 * len(cover), (sum(cover), len(cover))
st = json.load(open(sys.argv[2]))
c = {x["counter_id"]: x for x in st["counters"]}
print("archived approx", c["va"]["accepted"], "exact", c["ve"]["accepted"])
assert c["va"]["accepted"] < 0.6 * c["ve"]["accepted"]   # the long tail is below K, kept whole
assert c["va"]["accepted"] + c["va"]["sampled_out"] == c["ve"]["accepted"]
PYEOF
	[ "$(stat -c %s z.avro)" -gt 0 ]
}

@test "cnt-window: an approx event whose cnt.sample is not a level 1 to 20 stops the run, status 2" {
	ingest -o log.avro ev.jsonl
	events log.avro | jq -c 'if .counter_id == "va" and .idempotency_key == "k-m2-3" then .attrs["cnt.sample"] = "21" else . end' > log.jsonl
	toavro bad.avro
	run -2 cnt-window -d defs.json -o w.avro bad.avro
	[[ "$output" == *"attrs cnt.sample is not a sampling level 1 to 20: corrupt log"* ]]
	[ ! -e w.avro ]
	# an exact counter's event may carry any cnt.* attrs written elsewhere: ignored
	events log.avro | jq -c 'if .counter_id == "ve" then .attrs["cnt.sample"] = "x" else . end' > log.jsonl
	toavro ok.avro
	run -0 cnt-window -d defs.json -o w.avro ok.avro
}

# stops_at ID LOG: cnt-count stops at event ID's sampling level, with one
# thread once and two threads three times, and leaves no output or state
stops_at() {
	for th in 1 2 2 2; do
		run -2 cnt-count -d defs.json --threads $th -s s.state -o c.avro "$2"
		[[ "$output" == *"event '$1': attrs cnt.sample is not a sampling level 1 to 20: corrupt log"* ]]
		[ ! -e c.avro ]
		[ ! -e s.state ]
	done
}

@test "cnt-count: the first event in log order whose cnt.sample is not a level stops the run, with one thread or two" {
	ingest -o log.avro ev.jsonl
	# bad events of both members, so of both counting threads
	events log.avro | jq -c 'if .counter_id == "va" and (.idempotency_key | test("-[0-9]*3$")) then .attrs["cnt.sample"] = "21" else . end' > log.jsonl
	[ "$(jq -r 'select(.attrs["cnt.sample"] == "21") | .member_ref' log.jsonl | sort -u | paste -sd, -)" = m1,m2 ]
	first=$(jq -r 'select(.attrs["cnt.sample"] == "21") | .event_id' log.jsonl | head -n 1)
	toavro bad.avro
	stops_at "$first" bad.avro
}

@test "cnt-count: the first bad cnt.sample in log order stops the run after several hand-overs too" {
	# 20,000 exact events of both members before the approx ones: more
	# than two batches (cnt-count hands over at most 8,192 events at once)
	"$PY" - > bulk.jsonl <<'PYEOF'
import json
for i in range(20000):
    m = "m%d" % (1 + i % 2)
    print(json.dumps({"idempotency_key": "b-%d" % i, "tenant_id": "t", "counter_id": "ve",
        "member_ref": m, "delta": 1, "event_time": 1772362800000 + i, "attrs": {"device": "web"}}))
PYEOF
	cat bulk.jsonl ev.jsonl > all.jsonl
	ingest -o log.avro all.jsonl
	events log.avro | jq -c 'if .counter_id == "va" and (.idempotency_key | test("-[0-9]*7$")) then .attrs["cnt.sample"] = "0" else . end' > log.jsonl
	[ "$(jq -r 'select(.attrs["cnt.sample"] == "0") | .member_ref' log.jsonl | sort -u | paste -sd, -)" = m1,m2 ]
	# the first bad event comes after the second hand-over
	[ "$(jq -r 'select(.attrs["cnt.sample"] == "0") | input_line_number' log.jsonl | head -n 1)" -gt 16384 ]
	first=$(jq -r 'select(.attrs["cnt.sample"] == "0") | .event_id' log.jsonl | head -n 1)
	toavro bad.avro
	stops_at "$first" bad.avro
	# and without the bad events the same log counts
	jq -c 'if .attrs["cnt.sample"] == "0" then .attrs["cnt.sample"] = "1" else . end' log.jsonl > fixed.jsonl
	mv fixed.jsonl log.jsonl
	toavro good.avro
	run -0 cnt-count -d defs.json --threads 2 -o c.avro good.avro
	[ -s c.avro ]
}
