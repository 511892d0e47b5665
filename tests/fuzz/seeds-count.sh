#!/bin/sh
# Makes the seed corpora of the counting-stage fuzz targets with the tools
# themselves: tests/fuzz/corpus/{fuzz_event,fuzz_windowed,fuzz_bucket,
# fuzz_dedup_state}/ get small valid files (null and zstandard codecs,
# containers back to back, header-only files, late events, shards, sparse
# and dense sketches, a state of several horizons), files whose writer
# schema differs from ours (so that schema resolution is taken), and
# damaged copies.  The files are committed; rerun this after a format
# change (crash inputs added by hand, regress-*, are kept).
#   make && sh tests/fuzz/seeds-count.sh
set -eu
cd "$(dirname "$0")/../.."
BIN=${BUILD:-build}/bin
DEFS=tests/data/core/defs.json
C=tests/fuzz/corpus
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
PATH="$PWD/$BIN:$PATH"

ingest() { # NOW OUT CODEC: JSON lines on standard input
	cnt-ingest -d "$DEFS" --now "$1" --max-past 400d -c "$3" -o "$2" - 2>/dev/null
}
# resolve IN OUT: IN with the writer schema's field "delta" (long in ours)
# declared "int" (the same bytes; int is promoted to long on reading).
resolve() {
	/usr/bin/python3 - "$1" "$2" "${3:-delta}" <<'PY'
import sys, json
b = open(sys.argv[1], "rb").read()
def rlong(p):
    s = 0; v = 0
    while True:
        c = b[p]; p += 1; v |= (c & 0x7f) << s; s += 7
        if c < 0x80: return (v >> 1) ^ -(v & 1), p
def wlong(v):
    v = (v << 1) ^ (v >> 63); o = bytearray()
    while v >= 0x80: o.append(v & 0x7f | 0x80); v >>= 7
    o.append(v); return bytes(o)
assert b[:4] == b"Obj\x01"
p = 4; meta = []
while True:
    n, p = rlong(p)
    if n == 0: break
    if n < 0: n = -n; _, p = rlong(p)
    for _ in range(n):
        kl, p = rlong(p); k = b[p:p + kl]; p += kl
        vl, p = rlong(p); v = b[p:p + vl]; p += vl
        meta.append((k, v))
out = bytearray(b"Obj\x01") + wlong(len(meta))
def retype(s):
    if isinstance(s, dict):
        if s.get("name") == sys.argv[3] and "type" in s and s["type"] == "long": s["type"] = "int"
        for v in s.values(): retype(v)
    elif isinstance(s, list):
        for v in s: retype(v)
for k, v in meta:
    if k == b"avro.schema":
        s = json.loads(v); retype(s); v = json.dumps(s).encode()
    out += wlong(len(k)) + k + wlong(len(v)) + v
out += wlong(0) + b[p:]
open(sys.argv[2], "wb").write(out)
PY
}

mkdir -p "$C/fuzz_event" "$C/fuzz_windowed" "$C/fuzz_bucket" "$C/fuzz_dedup_state"

# ---- events ----------------------------------------------------------------
cat >"$tmp/a.jsonl" <<'J'
{"idempotency_key":"a1","tenant_id":"utc","counter_id":"dist","member_ref":"m1","delta":7,"event_time":"2026-03-01T10:00:00Z","attrs":{"region":"eu","device":"ios"}}
{"idempotency_key":"a2","tenant_id":"utc","counter_id":"views","member_ref":"vid1","delta":1,"item":"u1","event_time":"2026-03-01T09:59:59.999Z"}
{"idempotency_key":"a3","tenant_id":"kol","counter_id":"dist","member_ref":"m\"2\\","delta":-3,"event_time":"2026-03-01T08:00:00Z"}
{"idempotency_key":"a4","tenant_id":"utc","counter_id":"uniq","member_ref":"m1","delta":1,"item":"i-\u00e9","event_time":"2026-02-28T23:00:00Z","attrs":{"k":""}}
J
cat >"$tmp/b.jsonl" <<'J'
{"idempotency_key":"a1","tenant_id":"utc","counter_id":"dist","member_ref":"m9","delta":70,"event_time":"2026-03-01T10:20:00Z"}
{"idempotency_key":"b2","tenant_id":"lhi","counter_id":"dist","member_ref":"m1","delta":9223372036854775807,"event_time":"2026-04-04T15:00:00Z"}
J
ingest 2026-03-01T11:00:00Z "$tmp/a.avro" null <"$tmp/a.jsonl"
ingest 2026-03-02T00:00:00Z "$tmp/b.avro" null <"$tmp/b.jsonl"
ingest 2026-03-01T11:00:00Z "$tmp/az.avro" zstandard <"$tmp/a.jsonl"
ingest 2026-03-01T11:00:00Z "$tmp/empty.avro" null </dev/null
E=$C/fuzz_event
cp "$tmp/a.avro" "$E/events.null.avro"
cp "$tmp/az.avro" "$E/events.zstd.avro"
cat "$tmp/a.avro" "$tmp/b.avro" >"$E/events.two-containers.avro"
cp "$tmp/empty.avro" "$E/events.header-only.avro"
cnt-dedup -d "$DEFS" -c null "$tmp/a.avro" "$tmp/b.avro" >"$E/events.dedup-out.avro"
resolve "$tmp/a.avro" "$E/events.resolve-int-delta.avro"
head -c 300 "$tmp/a.avro" >"$E/events.truncated.avro"

# ---- windowed events -------------------------------------------------------
W=$C/fuzz_windowed
cnt-window -d "$DEFS" -c null "$tmp/a.avro" >"$W/windowed.null.avro"
cnt-window -d "$DEFS" -c zstandard --shards 4 "$tmp/a.avro" "$tmp/b.avro" >"$W/windowed.shards.zstd.avro"
cnt-window -d "$DEFS" -c null "$tmp/b.avro" >"$tmp/wb.avro"     # late: ingested a day after
cat "$W/windowed.null.avro" "$tmp/wb.avro" >"$W/windowed.late.two-containers.avro"
cnt-window -d "$DEFS" -c null "$tmp/empty.avro" >"$W/windowed.header-only.avro"
resolve "$W/windowed.null.avro" "$W/windowed.resolve-int-delta.avro"
head -c 400 "$W/windowed.null.avro" >"$W/windowed.truncated.avro"

# ---- bucket files ----------------------------------------------------------
B=$C/fuzz_bucket
cnt-window -d "$DEFS" "$tmp/a.avro" "$tmp/b.avro" | cnt-accumulate -c null >"$B/buckets.null.avro"
cnt-window -d "$DEFS" --shards 3 "$tmp/a.avro" "$tmp/b.avro" | cnt-accumulate -c zstandard >"$B/buckets.shards.zstd.avro"
# a dense sketch: more distinct items than the sparse form holds
i=0
while [ $i -lt 6000 ]; do
	printf '{"idempotency_key":"u%d","tenant_id":"utc","counter_id":"uniq","member_ref":"m1","delta":1,"item":"i%d","event_time":"2026-03-01T10:00:00Z"}\n' $i $i
	i=$((i + 1))
done | ingest 2026-03-01T10:30:00Z "$tmp/u.avro" zstandard
cnt-window -d "$DEFS" "$tmp/u.avro" | cnt-accumulate -c zstandard >"$B/buckets.dense-sketch.zstd.avro"
cnt-window -d "$DEFS" "$tmp/empty.avro" | cnt-accumulate -c null >"$B/buckets.empty.avro"
resolve "$B/buckets.null.avro" "$B/buckets.resolve-int-count.avro" count
head -c 500 "$B/buckets.null.avro" >"$B/buckets.truncated.avro"

# ---- dedup state -----------------------------------------------------------
S=$C/fuzz_dedup_state
rm -f "$tmp/state"
cnt-dedup -d "$DEFS" -s "$tmp/state" -o /dev/null "$tmp/empty.avro"
cp "$tmp/state" "$S/state.empty"
cnt-dedup -d "$DEFS" -s "$tmp/state" -o /dev/null "$tmp/a.avro"
cp "$tmp/state" "$S/state.four-keys"
cnt-dedup -d "$DEFS" -s "$tmp/state" -o /dev/null "$tmp/b.avro" "$tmp/u.avro"
cp "$tmp/state" "$S/state.horizons"
head -c -1 "$S/state.four-keys" >"$S/state.truncated"
/usr/bin/python3 - "$S" <<'PY'
import sys
d = sys.argv[1]
b = bytearray(open(d + "/state.four-keys", "rb").read())
c = bytearray(b); c[16] += 1; open(d + "/state.bad-count", "wb").write(c)
c = bytearray(b); c[30] ^= 0x40; open(d + "/state.bad-checksum", "wb").write(c)
c = bytearray(b); c[0:8] = b"NOTSTATE"; open(d + "/state.bad-magic", "wb").write(c)
# two slots swapped: unsorted, checksum made right (the target also fixes it)
c = bytearray(b); c[24:40], c[40:56] = c[40:56], c[24:40]; open(d + "/state.unsorted", "wb").write(c)
PY
ls -l "$E" "$W" "$B" "$S" | awk 'NF > 5 {s += $5} END {print "seeds: " s " bytes"}'
