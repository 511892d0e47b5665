#!/bin/sh
# Runs examples/demo.sh and checks what it shows, so the README's demo and
# the man pages' examples cannot drift from the code (tests/run-all.sh runs
# this as one test; make check and make test include it).
#
# Expectations come from the input, not from the tools: the admitted events
# are recomputed from examples/events.jsonl by /usr/bin/python3 (first
# occurrence of each (tenant, counter, idempotency key), minus the three
# refused lines the documentation describes); event ids and the sync marker
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
expect_line "in 30 = out 25 + rejected 3 + duplicate 2: balanced true"
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
jq -r '"\(.in) \(.out) \(.rejected) \(.duplicate) \(.held) \(.balanced)"' "$f/stats.json" >"$dir/stats.act" 2>&1
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

if [ "$fails" -ne 0 ]; then
	echo "examples/check.sh: $fails check(s) failed"
	exit 1
fi
echo "examples/check.sh: demo output and files as documented"
