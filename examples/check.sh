#!/bin/sh
# Runs examples/demo.sh and checks what it shows, so the README's demo and
# the man pages' examples cannot drift from the code (tests/run-all.sh runs
# this as one test; make check and make test include it).
#
# Expectations come from the input, not from the tools: the admitted events
# and the bucket file are recomputed from examples/events.jsonl by
# /usr/bin/python3 (first occurrence of each (tenant, counter, idempotency
# key), minus the three refused lines the documentation describes; then the
# counting rules of cnt-dedup(1), cnt-window(1) and cnt-bucket(5)); event ids
# and the sync marker
# are recomputed with xxhsum(1) when it is installed (Debian package
# 'xxhash'; optional).  Exits non-zero and prints every difference.
set -u
cd "$(dirname "$0")/.."

BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD="$PWD/$BUILD" ;; esac
BIN="$BUILD/bin"
PY=/usr/bin/python3
export BUILD

dir=$(mktemp -d "${TMPDIR:-/tmp}/cnt-check.XXXXXX")
trap 'rm -rf "$dir"' EXIT
fails=0

fail() {
	fails=$((fails + 1))
	echo "examples/check.sh: FAIL: $*"
}

# expect_line TEXT: the demo printed exactly this line.
expect_line() {
	grep -Fqx -- "$1" "$dir/demo.out" || fail "demo output lacks the line: $1"
}

# same WHAT EXPECTED-FILE ACTUAL-FILE
same() {
	if ! cmp -s "$2" "$3"; then
		fail "$1 differs (expected, then actual):"
		diff "$2" "$3" | sed 's/^/    /'
	fi
}

CNT_DEMO_DIR="$dir/files" sh examples/demo.sh >"$dir/demo.out" 2>&1
rc=$?
if [ "$rc" -ne 0 ]; then
	fail "examples/demo.sh exited with status $rc; its output:"
	sed 's/^/    /' "$dir/demo.out"
	exit 1
fi
f="$dir/files"

# --- what the demo prints ------------------------------------------------
# It starts by saying where its files are, and ends listing them (kept).
[ "$(head -n 1 "$dir/demo.out")" = "cnt demo: the files it writes are kept in $dir/files" ] ||
	fail "the demo's first line does not say where its files are: $(head -n 1 "$dir/demo.out")"
expect_line "== The demo's files, kept in $dir/files"
expect_line "cnt-ingest: in 30, out 25, rejected 3, duplicate 2 (dedup hit rate 7.41%)"
expect_line "acme/distance_m v1 (exact): 9 events, sum 210070"
expect_line "acme/fastest_5k_ms v1 (min): 3 events, min 1398250"
expect_line "acme/longest_ride_m v1 (max): 3 events, max 62300"
expect_line "acme/steps v1 (exact): 3 events, sum 34160"
expect_line "kahani/unique_viewers v2 (unique): 7 events, 5 distinct items"
expect_line "line 8: delta_out_of_bounds (field delta): delta 2450000 is outside [0, 1000000] declared by counter 'acme/distance_m' v1"
expect_line "line 12: client_not_writable (field origin): counter 'acme/distance_m' v1 does not accept client-origin events"
expect_line "line 24: item_required (field item): counter 'kahani/unique_viewers' counts distinct items: field 'item' is required"
expect_line "line 7: duplicate of line 1: idempotency_key 'acme-ride-0001' was accepted earlier in this batch"
expect_line "line 22: duplicate of line 20: idempotency_key 'kv-9c1e-0002' was accepted earlier in this batch"
expect_line "in 30 = out 25 + rejected 3 + duplicates 2: balanced true"
expect_line "archive.avro and again.avro are identical"
sed -n '/^== 3\./{n;p;}' "$dir/demo.out" | grep -qx 25 || fail "section 3 does not print the count 25"
sed -n '/^== 10\./{n;p;}' "$dir/demo.out" | grep -qx 50 || fail "section 10 does not print the count 50"
sed -n '/^== 2\./,/^$/p' "$dir/demo.out" | grep -c '^{' | grep -qx 3 || fail "section 2 does not print 3 records"
sed -n '/^== 9\./{n;p;}' "$dir/demo.out" |
	grep -Eqx '\{"input":"archive.avro","container":1,"codec":"zstandard","sync":"[0-9a-f]{32}"\}' ||
	fail "section 9 does not show a zstandard container with a 32-hex-digit sync marker"

# --- the files it wrote ----------------------------------------------------
printf '8 delta_out_of_bounds\n12 client_not_writable\n24 item_required\n' >"$dir/rej.exp"
jq -r '"\(.line) \(.reason)"' "$f/rejects.jsonl" >"$dir/rej.act" 2>&1
same "the reject stream (line reason)" "$dir/rej.exp" "$dir/rej.act"

printf '7 1\n22 20\n' >"$dir/dup.exp"
jq -r '"\(.line) \(.duplicate_of.line)"' "$f/duplicates.jsonl" >"$dir/dup.act" 2>&1
same "the duplicate stream (line first)" "$dir/dup.exp" "$dir/dup.act"

echo '30 25 3 2 0 true' >"$dir/stats.exp"
jq -r '"\(.in) \(.out) \(.rejected) \(.duplicates) \(.held) \(.balanced)"' "$f/stats.json" >"$dir/stats.act" 2>&1
same "stats.json (in out rejected duplicate held balanced)" "$dir/stats.exp" "$dir/stats.act"

# The admitted events, recomputed from the input by an independent reading.
"$PY" - examples/events.jsonl 2026-11-30T09:00:00Z >"$dir/acc.exp" <<'EOF'
import json, sys
from datetime import datetime

refused = {8, 12, 24}          # the documented rejects (cnt-event(5), README)
now = datetime.fromisoformat(sys.argv[2].replace("Z", "+00:00"))
seen = set()
for no, line in enumerate(open(sys.argv[1], encoding="utf-8"), 1):
    e = json.loads(line)
    k = (e["tenant_id"], e["counter_id"], e["idempotency_key"])
    if no in refused or k in seen:
        continue
    seen.add(k)
    t = e["event_time"]
    if isinstance(t, str):
        t = int(datetime.fromisoformat(t).timestamp() * 1000 + 0.5)
    version = 2 if e["tenant_id"] == "kahani" else 1   # unique_viewers v2 since 2026-07-01
    print(json.dumps([e["idempotency_key"], e["tenant_id"], e["counter_id"], version,
        e["member_ref"], e.get("item"), e.get("delta", 1), t,
        int(now.timestamp() * 1000), e.get("origin", "backend").upper(),
        e.get("subject"), e.get("attrs", {})], separators=(",", ":"), ensure_ascii=False))
EOF
"$BIN/cnt-cat" "$f/archive.avro" | jq -c '[.idempotency_key, .tenant_id, .counter_id, .counter_version,
	.member_ref, .item, .delta, .event_time, .ingest_time, .origin, .subject, .attrs]' >"$dir/acc.act" 2>&1
same "the admitted events" "$dir/acc.exp" "$dir/acc.act"

# Reading the archive with the generic resolving reader gives the same.
"$BIN/cnt-cat" "$f/archive.avro" >"$dir/plain.json"
"$BIN/cnt-cat" --as event "$f/archive.avro" >"$dir/as-event.json"
same "cnt-cat --as event" "$dir/plain.json" "$dir/as-event.json"

if command -v xxhsum >/dev/null 2>&1; then
	# event_id = XXH3-128 of tenant_id NUL counter_id NUL idempotency_key NUL.
	"$BIN/cnt-cat" "$f/archive.avro" | jq -r '[.event_id, .tenant_id, .counter_id, .idempotency_key] | @tsv' |
	while IFS="$(printf '\t')" read -r id t c k; do
		want=$(printf '%s\0%s\0%s\0' "$t" "$c" "$k" | xxhsum -H2 | cut -d' ' -f1)
		[ "$id" = "$want" ] || echo "event_id of $t/$c/$k is $id, XXH3-128 gives $want"
	done >"$dir/ids.bad"
	[ -s "$dir/ids.bad" ] && { fail "event ids:"; sed 's/^/    /' "$dir/ids.bad"; }
	# sync marker = XXH3-128 of "cnt-sync" NUL, the schema text, the codec name.
	want=$({ printf 'cnt-sync\0'; "$BIN/cnt-cat" --schema "$f/archive.avro" | tr -d '\n'; printf zstandard; } |
		xxhsum -H2 | cut -d' ' -f1)
	got=$("$BIN/cnt-cat" --meta "$f/archive.avro" | jq -r .sync)
	[ "$want" = "$got" ] || fail "sync marker is $got, XXH3-128 gives $want"
else
	echo "examples/check.sh: note: xxhsum not installed; event ids and sync marker not recomputed"
fi

# --- counting: cnt-dedup | cnt-window | cnt-accumulate ----------------------
expect_line "cnt-dedup: in 25, out 24, duplicate 1, rejected 0 (dedup hit rate 4.00%); state 0 keys loaded, 24 saved"
expect_line "cnt-window: in 24, out 24, late 13 (54.17%), rejected 0"
expect_line "cnt-accumulate: 24 events (13 late) and 0 bucket records in, 23 bucket records out, 0 spill runs"
expect_line "kahani/unique_viewers: viewer-88213 viewed vid-chai-ep1 again (idempotency_key kv-9c1e-0003)"
expect_line "cnt-dedup: in 25, out 0, duplicate 25, rejected 0 (dedup hit rate 100.00%); state 24 keys loaded, 24 saved"
expect_line "cnt-diff buckets.avro rebuilt.avro: exit status 0"
expect_line "buckets.avro and rebuilt.avro are identical"
expect_line "cnt-diff buckets.avro merged.avro: exit status 0"
expect_line "buckets.avro and merged.avro are identical"
expect_line "cnt-diff -q buckets.avro doubled.avro: exit status 1"
expect_line "23 of 23 records changed, 0 keys on one side only"
cmp -s "$f/buckets.avro" "$f/rebuilt.avro" || fail "rebuilt.avro is not byte-identical to buckets.avro"
cmp -s "$f/buckets.avro" "$f/merged.avro" || fail "merged.avro is not byte-identical to buckets.avro"

# The bucket file, recomputed from the input by an independent reading of
# the rules in cnt-dedup(1), cnt-window(1) and cnt-bucket(5): admission as
# above, then the counter version's dedup key and horizon, the local-hour
# bucket in the tenant's zone (python's zoneinfo), lateness against the
# version's horizon, and the aggregates per key in canonical order.  For a
# sketch, the number of entries of its sparse encoding, which for a handful
# of items is the number of distinct items.
"$PY" - examples/events.jsonl examples/definitions.json 2026-11-30T09:00:00Z "$dir" <<'EOF'
import json, sys
from datetime import datetime, timezone
from zoneinfo import ZoneInfo

events_path, defs_path, now_s, out = sys.argv[1:5]
refused = {8, 12, 24}
defs = json.load(open(defs_path, encoding="utf-8"))
tz = {t["tenant_id"]: ZoneInfo(t["timezone"]) for t in defs["tenants"]}
H = 3600000


def ms(t):
    if isinstance(t, int):
        return t
    return round(datetime.fromisoformat(t).timestamp() * 1000)


def offset_ms(tenant, t):
    return round(datetime.fromtimestamp(t / 1000, tz[tenant]).utcoffset().total_seconds() * 1000)


now = ms(now_s)


def version(tenant, counter):
    c = next(c for c in defs["counters"] if c["tenant_id"] == tenant and c["counter_id"] == counter)
    vs = [v for v in c["versions"] if "effective_from" not in v or ms(v["effective_from"]) <= now]
    return max(vs, key=lambda v: v["version"])


def bucket(tenant, t):
    off = offset_ms(tenant, t)
    start = (t + off) // H * H - off
    # No offset change inside these hours: the bucket is the whole local hour.
    assert offset_ms(tenant, start) == off and offset_ms(tenant, start + H - 1) == off
    return start, start + H


admitted, seen = [], set()
for no, line in enumerate(open(events_path, encoding="utf-8"), 1):
    e = json.loads(line)
    k = (e["tenant_id"], e["counter_id"], e["idempotency_key"])
    if no in refused or k in seen:
        continue
    seen.add(k)
    admitted.append(e)

remembered, groups, per_counter = {}, {}, {}
t_s = now // 1000
for e in admitted:
    v = version(e["tenant_id"], e["counter_id"])
    if v.get("dedup_key") == "item_member" and e.get("item") is not None:
        key = (e["tenant_id"], e["counter_id"], e["member_ref"], e["item"])
    else:
        key = (e["tenant_id"], e["counter_id"], e["idempotency_key"])
    if key in remembered and t_s < remembered[key]:
        continue
    remembered[key] = t_s + v.get("dedup_horizon_s", 86400)
    t = ms(e["event_time"])
    start, end = bucket(e["tenant_id"], t)
    late = now > end + v.get("lateness_horizon_s", 3600) * 1000
    delta = e.get("delta", 1)
    pc = per_counter.setdefault((e["tenant_id"], e["counter_id"]), [0, 0])
    pc[0] += 1
    pc[1] += late
    g = groups.setdefault((e["tenant_id"], e["counter_id"], v["version"], e["member_ref"], start, 0),
                          dict(end=end, count=0, sum=0, min=None, max=None, last=None, nlast=0, late_count=0,
                               late_sum=0, items=set(), late_items=set()))
    # an exact counter keeps no min, max or sketch (cnt-bucket(5))
    exact = v.get("type", "exact") == "exact"
    if late:
        g["late_count"] += 1
        g["late_sum"] += delta
        if e.get("item") is not None and not exact:
            g["late_items"].add(e["item"])
    else:
        g["count"] += 1
        g["sum"] += delta
        if not exact:
            g["min"] = delta if g["min"] is None else min(g["min"], delta)
            g["max"] = delta if g["max"] is None else max(g["max"], delta)
        if g["last"] is None or t > g["last"]:
            g["last"], g["nlast"] = t, 1
        elif t == g["last"]:
            g["nlast"] += 1
        if e.get("item") is not None and not exact:
            g["items"].add(e["item"])


def iso(t):
    return datetime.fromtimestamp(t // 1000, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S") + ".%03dZ" % (t % 1000)


order = sorted(groups, key=lambda k: (k[0].encode(), k[1].encode(), k[2], k[3].encode(), k[4], k[5]))
with open(out + "/buckets.exp", "w") as f:
    for k in order:
        g = groups[k]
        print(json.dumps([*k, g["end"], g["count"], g["sum"], 0, False, g["min"], g["max"], g["last"], now,
                          g["late_count"], g["late_sum"], 0, False,
                          len(g["items"]) or None, len(g["late_items"]) or None,
                          g["nlast"], g["count"] + g["late_count"]],   # every event ingested at now
                         separators=(",", ":")), file=f)
with open(out + "/head3.exp", "w") as f:
    for k in order[:3]:
        g = groups[k]
        print(json.dumps([k[3], iso(k[4]), g["count"], g["sum"], g["late_count"], g["late_sum"]],
                         separators=(",", ":")), file=f)
with open(out + "/late.exp", "w") as f:
    for c in defs["counters"]:
        pc = per_counter.get((c["tenant_id"], c["counter_id"]))
        if pc:
            print("%s/%s: %d of %d late" % (c["tenant_id"], c["counter_id"], pc[1], pc[0]), file=f)
with open(out + "/totals.exp", "w") as f:
    for tc in sorted({k[:2] for k in groups}):
        gs = [groups[k] for k in order if k[:2] == tc]
        print("%s/%s: %d bucket records, events %d + %d late, sum %d + %d late" % (
            *tc, len(gs), sum(g["count"] for g in gs), sum(g["late_count"] for g in gs),
            sum(g["sum"] for g in gs), sum(g["late_sum"] for g in gs)), file=f)
EOF
# The entry count of a serialized sparse sketch (cnt-bucket(5), Sketches):
# cnt-cat prints bytes as code points U+0000..U+00FF.
"$BIN/cnt-cat" "$f/buckets.avro" | jq -c '
	def sketch_entries: if . == null then null
		else explode | if .[0:3] != [1, 1, 14] then "not a sparse p=14 sketch" else .[3] end end;
	[.tenant_id, .counter_id, .counter_version, .member_ref, .bucket_start, .shard, .bucket_end,
	 .count, .sum, .sum_high, .sum_overflow, .min, .max, .last_event_time, .max_ingest_time,
	 .late_count, .late_sum, .late_sum_high, .late_sum_overflow,
	 (.sketch | sketch_entries), (.late_sketch | sketch_entries), .last_event_count, .max_ingest_count]' >"$dir/buckets.act" 2>&1
same "the bucket file (key, values, sketch entries)" "$dir/buckets.exp" "$dir/buckets.act"
sed -n '/^== 14\./,/^$/p' "$dir/demo.out" | sed '1d;/^$/d' >"$dir/late.act"
same "section 14 (late events per counter)" "$dir/late.exp" "$dir/late.act"
sed -n '/^== 15\./,/^$/p' "$dir/demo.out" | grep '^{' |
	jq -c '[.member_ref, .bucket_start, .count, .sum, .late_count, .late_sum]' >"$dir/head3.act" 2>&1
same "section 15 (the first three bucket records, --iso-time)" "$dir/head3.exp" "$dir/head3.act"
sed -n '/^== 16\./,/^$/p' "$dir/demo.out" | sed '1d;/^$/d' >"$dir/totals.act"
same "section 16 (per-counter totals from the bucket file)" "$dir/totals.exp" "$dir/totals.act"

# --- the leaderboard: cnt-project | cnt-rank ------------------------------
# The standings of the demo's board, recomputed from the expected bucket
# file above (itself recomputed from the events) by the rules of
# cnt-project(1) and cnt-view(5): the board's last_30d window in the
# tenant's zone (python's zoneinfo), buckets inside it with on-time events,
# sums per member, ordered by value, then the earlier last event, then the
# member_ref's bytes, numbered competition-style; the as-of is the largest
# max_ingest_time of the counter's bucket records.
BOARD=acme-30d-distance
"$PY" - "$dir/buckets.exp" examples/definitions.json 2026-11-30T09:00:00Z "$BOARD" "$dir" <<'EOF'
import json, sys
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

exp, defs_path, now_s, board, out = sys.argv[1:6]
defs = json.load(open(defs_path, encoding="utf-8"))
b = next(x for x in defs["leaderboards"] if x["board_id"] == board)
# The rules this recomputation implements; a board declaring others fails here.
assert b["window"] == "last_30d" and b.get("scope_kind", "global") == "global", b
assert b.get("order", "desc") == "desc" and b["rank_numbering"] == "competition", b
assert b["tie_break"] == ["earliest_achiever", "member_ref_asc"], b
tz = ZoneInfo(next(t["timezone"] for t in defs["tenants"] if t["tenant_id"] == b["tenant_id"]))
today = datetime.fromisoformat(now_s.replace("Z", "+00:00")).astimezone(tz).date()


def midnight(d):
    return round(datetime(d.year, d.month, d.day, tzinfo=tz).timestamp() * 1000)


frm, to = midnight(today - timedelta(days=29)), midnight(today + timedelta(days=1))
value, last, as_of = {}, {}, None
for line in open(exp, encoding="utf-8"):
    r = json.loads(line)
    # [tenant, counter, version, member, start, shard, end, count, sum, ...,
    #  last_event_time at 13, max_ingest_time at 14, ...]
    if (r[0], r[1]) != (b["tenant_id"], b["counter_id"]):
        continue
    as_of = r[14] if as_of is None else max(as_of, r[14])
    if r[4] < frm or r[6] > to or r[7] == 0:
        continue
    value[r[3]] = value.get(r[3], 0) + r[8]
    last[r[3]] = max(last.get(r[3], r[13]), r[13])
order = sorted(value, key=lambda m: (-value[m], last[m], m.encode()))
rank = {}
for i, m in enumerate(order):
    p = order[i - 1] if i else None
    rank[m] = rank[p] if p and (value[p], last[p]) == (value[m], last[m]) else i + 1
iso = datetime.fromtimestamp(as_of / 1000, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S") + ".%03dZ" % (as_of % 1000)
with open(out + "/view.exp", "w") as f:
    print(json.dumps([frm, to, as_of, len(order), len(order)], separators=(",", ":")), file=f)
with open(out + "/top.exp", "w") as f:
    for m in order[:10]:
        print(json.dumps([m, rank[m], value[m], last[m]], separators=(",", ":")), file=f)
with open(out + "/table.exp", "w") as f:
    print("board %s  scope global  version 1  as of %s  fast count" % (board, iso), file=f)
    for m in order[:10]:
        print("%d %s %d" % (rank[m], m, value[m]), file=f)
with open(out + "/rank.exp", "w") as f:
    m = "m-1042"
    print(json.dumps([board, "global", 1, iso, as_of, False, False, m, True, value[m], "exact", rank[m]],
                     separators=(",", ":")), file=f)
EOF
expect_line "cnt-project: $BOARD/global: version 1, 5 members, published"
expect_line "views/$BOARD/global/current -> v000001"
"$BIN/cnt-cat" --meta "$f/views/$BOARD/global/current/view.avro" |
	jq -c '.metadata["cnt.view"] | fromjson | [.window.from, .window.to, .as_of, .members, .head]' >"$dir/view.act" 2>&1
same "the view's window, as-of and size (cnt.view)" "$dir/view.exp" "$dir/view.act"
"$BIN/cnt-rank" -w "$f/views" -b "$BOARD" --now 2026-11-30T09:00:00Z top 10 |
	jq -c '.entries[] | [.member_ref, .rank, .value, .last_event_time]' >"$dir/top.act" 2>&1
same "cnt-rank top 10" "$dir/top.exp" "$dir/top.act"
"$BIN/cnt-cat" "$f/views/$BOARD/global/current/view.avro" |
	jq -c '[.member_ref, .rank, .value, .last_event_time]' | head -n 10 >"$dir/head.act" 2>&1
same "the view's head (view.avro)" "$dir/top.exp" "$dir/head.act"
sed -n '/^== 22\./,/^$/p' "$dir/demo.out" | sed '1,2d;/^$/d;/^token /d' |
	awk 'NR == 1 { print; next } { print $1, $2, $3 }' >"$dir/table.act"
same "section 22 (the top 10 as a table)" "$dir/table.exp" "$dir/table.act"
# the table's last line: the session token of the answer (cnt-rank(1)), as the JSON answer gives it
"$BIN/cnt-rank" -w "$f/views" -b "$BOARD" --now 2026-11-30T09:00:00Z top 10 | jq -r '"token " + .token' >"$dir/token.exp"
sed -n '/^== 22\./,/^$/p' "$dir/demo.out" | grep '^token ' | sed 's/ *$//' >"$dir/token.act"
same "section 22's session token" "$dir/token.exp" "$dir/token.act"
sed -n '/^== 23\./,/^$/p' "$dir/demo.out" | grep '^{' |
	jq -c '[.board, .scope, .version, .as_of, .as_of_ms, .stale, .frozen, .member_ref, .found, .value, .kind, .rank]' \
	>"$dir/rank.act" 2>&1
same "section 23 (the rank of m-1042)" "$dir/rank.exp" "$dir/rank.act"

if [ "$fails" -ne 0 ]; then
	echo "examples/check.sh: $fails check(s) failed"
	exit 1
fi
echo "examples/check.sh: demo output, files and bucket file as documented"
