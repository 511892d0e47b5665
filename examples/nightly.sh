#!/bin/sh
# The nightly rebuild-and-diff job, runnable: the live projection of the
# example board is built segment by segment as an hourly job would build
# it; then cnt-rebuild(1) rebuilds it from the archive, compares, and
# promotes; then someone tampers with the live files, and the next night's
# rebuild must raise the alert.  tests/run-all.sh runs it (make check);
# it exits non-zero when any step does not come out as stated.
#
#   sh examples/nightly.sh             (after make; files in build/nightly)
#   CNT_NIGHTLY_DIR=DIR sh examples/nightly.sh
set -u
cd "$(dirname "$0")/.."

BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD="$PWD/$BUILD" ;; esac
PATH="$BUILD/bin:$PATH"
export PATH
DEFS="$PWD/examples/definitions.json"
EVENTS="$PWD/examples/events.jsonl"
KEYRING="$PWD/examples/keyring.json"
BOARD=acme-30d-distance

dir=${CNT_NIGHTLY_DIR:-$BUILD/nightly}
rm -rf "$dir"
mkdir -p "$dir" || exit 2
cd "$dir" || exit 2
echo "cnt nightly example: the files it writes are kept in $dir"

fails=0
fail() {
	fails=$((fails + 1))
	echo "examples/nightly.sh: FAIL: $*"
}
section() {
	printf '\n== %s\n' "$1"
}
# expect STATUS WHAT CMD...: runs CMD (its output shown), which must end
# with STATUS.
expect() {
	want=$1 what=$2
	shift 2
	rc=0
	"$@" >out.txt 2>&1 || rc=$?
	cat out.txt
	[ "$rc" -eq "$want" ] || fail "$what: exit status $rc, expected $want"
}

section "The live side: three hourly segments, each deduplicated with the state of the one before"
# (a snapshot of the dedup state is kept after each segment), counted, and
# merged; the board's view published after the last.
mkdir -p log live
sed -n '1,10p' "$EVENTS" >part1.jsonl
sed -n '11,20p' "$EVENTS" >part2.jsonl
sed -n '21,$p' "$EVENTS" >part3.jsonl
i=0
for now in 2026-11-30T09:00:00Z 2026-11-30T09:20:00Z 2026-11-30T09:40:00Z; do
	i=$((i + 1))
	cnt-ingest -d "$DEFS" --keyring "$KEYRING" --now "$now" -r /dev/null -o "log/seg$i.avro" "part$i.jsonl" || fail "cnt-ingest of segment $i"
	cnt-dedup -d "$DEFS" -s live/dedup.state --snapshots live/snapshots "log/seg$i.avro" |
		cnt-window -d "$DEFS" | cnt-accumulate -o "live/seg$i.buckets.avro" || fail "the live job of segment $i"
done
cnt-accumulate -o live/buckets.avro live/seg1.buckets.avro live/seg2.buckets.avro live/seg3.buckets.avro ||
	fail "merging the live segments"
cnt-project -d "$DEFS" -b "$BOARD" -w live/views --now 2026-11-30T09:40:00Z live/buckets.avro || fail "cnt-project"
ls live/snapshots
echo "live view: $(readlink live/views/$BOARD/global/current)"

section "Night 1: rebuild from the whole archive, compare, promote (exit status 0)"
echo "\$ cnt-rebuild -d definitions.json -b $BOARD -w live/views --buckets live/buckets.avro --promote --scratch night1 log/seg1.avro log/seg2.avro log/seg3.avro"
expect 0 "night 1" cnt-rebuild -d "$DEFS" -b "$BOARD" -w live/views --buckets live/buckets.avro --promote --scratch night1 \
	log/seg1.avro log/seg2.avro log/seg3.avro
grep -q '^result: the rebuild agrees with the live projection$' out.txt || fail "night 1 does not say the rebuild agrees"
grep -q '^promoted: scope global, version 2 ' out.txt || fail "night 1 did not promote version 2"
[ "$(readlink live/views/$BOARD/global/current)" = v000002 ] || fail "current is not v000002 after the promotion"
grep -Eq '^replay: [0-9]+ events, .* real time$' out.txt || fail "night 1 does not report the replay rate"

section "Night 2: start at segment 2, from the snapshot segment 1 left and segment 1's buckets"
echo "\$ cnt-rebuild ... --scratch night2 -s live/snapshots/seg1.avro.state --base live/seg1.buckets.avro log/seg2.avro log/seg3.avro"
expect 0 "night 2" cnt-rebuild -d "$DEFS" -b "$BOARD" -w live/views --buckets live/buckets.avro --scratch night2 \
	-s live/snapshots/seg1.avro.state --base live/seg1.buckets.avro log/seg2.avro log/seg3.avro

section "Someone edits the live bucket file: m-1042 gets 700 m it never rode (re-encoded, so it reads well)"
printf '%s\n' '{"idempotency_key":"forged-1","tenant_id":"acme","counter_id":"distance_m","member_ref":"m-1042","delta":700,"event_time":"2026-11-30T07:00:00Z"}' |
	cnt-ingest -d "$DEFS" --now 2026-11-30T09:40:00Z -r /dev/null - | cnt-dedup -d "$DEFS" |
	cnt-window -d "$DEFS" | cnt-accumulate -o forged.buckets.avro || fail "making the forged record"
cnt-accumulate -o tampered.avro live/buckets.avro forged.buckets.avro && mv tampered.avro live/buckets.avro ||
	fail "tampering with the bucket file"
cnt-project -d "$DEFS" -b "$BOARD" -w live/views --now 2026-11-30T09:40:00Z live/buckets.avro || fail "cnt-project"
echo "live view: $(readlink live/views/$BOARD/global/current), m-1042 now $(cnt-rank -w live/views -b "$BOARD" --now 2026-11-30T09:40:00Z value m-1042)"

section "Night 3: the rebuild raises the alert (exit status 1) and names the member"
expect 1 "night 3" cnt-rebuild -d "$DEFS" -b "$BOARD" -w live/views --buckets live/buckets.avro --promote --scratch night3 \
	log/seg1.avro log/seg2.avro log/seg3.avro
grep -q '^ALERT: ' out.txt || fail "night 3 raises no alert"
grep -q '^  m-1042 acme/distance_m v1 bucket 2026-11-30T07:00:00Z: .*sum 6630 live, 5930 rebuilt (live +700)' out.txt ||
	grep -q '^  m-1042 acme/distance_m v1 bucket 2026-11-30T07:00:00Z: only in the live file' out.txt ||
	fail "night 3 does not name m-1042's bucket"
grep -q '^  m-1042: value [0-9]* live, [0-9]* rebuilt (live +700)' out.txt || fail "night 3 does not name m-1042 in the view"
grep -q '^promoted' out.txt && fail "night 3 promoted a rebuild that differs"

section "Someone flips one byte of the live view's index: the rebuild cannot vouch for it (exit status 2)"
idx=live/views/$BOARD/global/current/index.bin
size=$(wc -c <"$idx")
printf 'Z' | dd of="$idx" bs=1 seek=$((size - 2)) conv=notrunc 2>/dev/null
expect 2 "night 4" cnt-rebuild -d "$DEFS" -b "$BOARD" -w live/views --buckets live/buckets.avro --scratch night4 \
	log/seg1.avro log/seg2.avro log/seg3.avro
grep -q "^view global: cannot compare (cnt-diff status 2): cnt-diff: view '.*index.bin' is corrupt" out.txt ||
	fail "night 4 does not say the live view is corrupt"

section "A stage that fails: a segment that is not an archive (exit status 2, never 0)"
printf 'not avro\n' >log/bad.avro
expect 2 "night 5" cnt-rebuild -d "$DEFS" -b "$BOARD" -w live/views --buckets live/buckets.avro --scratch night5 \
	log/seg1.avro log/bad.avro log/seg3.avro

echo
if [ "$fails" -ne 0 ]; then
	echo "examples/nightly.sh: $fails step(s) did not come out as stated"
	exit 1
fi
echo "examples/nightly.sh: every night came out as stated"
