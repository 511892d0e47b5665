#!/usr/bin/env bats
# cnt-dedup: first occurrence kept in log order, the horizon across batches
# through the state file and its boundary, per-counter horizons, the
# view-count key, the state file (creation, atomic replacement, corruption,
# bounded size), the duplicates stream, stats and determinism.
#
# Events are made with cnt-ingest (tests/data/core/defs.json: utc/dist
# remembers keys 3600 s, utc/clicks 7200 s, utc/views keys on (member_ref,
# item) for 3600 s).  cnt-ingest drops repeated keys within one run itself,
# so a retry is made by a second cnt-ingest run at a later --now: that is
# how a retry reaches the log in production too.

bats_require_minimum_version 1.5.0
load data/core/common

setup() {
	set -o pipefail
	cd "$BATS_TEST_TMPDIR"
}

# a directory a test made outside its own (in /dev/shm), removed whether
# the test passed or failed
teardown() {
	if [ -n "${OUTSIDE:-}" ]; then rm -rf "$OUTSIDE"; fi
}

# ---- within one run --------------------------------------------------

@test "duplicates within a run: the first occurrence is kept, in log order" {
	{ ev a dist m1 1; ev b dist m1 2; ev c dist m2 3; } | ingest 2026-03-01T10:00:00Z f1.avro
	{ ev a dist m9 10; ev b dist m9 20; ev d dist m2 4; } | ingest 2026-03-01T10:10:00Z f2.avro
	run cnt-dedup -d "$DEFS" -o out.avro -D dup.avro f1.avro f2.avro
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ "$(keys_of out.avro)" = a,b,c,d ]
	# the kept a and b are f1's (delta 1, 2), the dropped ones f2's
	[ "$(cnt-cat out.avro | jq -r .delta | paste -sd, -)" = 1,2,3,4 ]
	[ "$(keys_of dup.avro)" = a,b ]
	[ "$(cnt-cat dup.avro | jq -r '"\(.delta)@\(.ingest_time)"' | paste -sd, -)" = \
		"10@$((T0_MS + 600000)),20@$((T0_MS + 600000))" ]
	# the other log order keeps the other copies
	cnt-dedup -d "$DEFS" -o rev.avro f2.avro f1.avro
	[ "$(keys_of rev.avro)" = a,b,d,c ]
	[ "$(cnt-cat rev.avro | jq -r .delta | paste -sd, -)" = 10,20,4,3 ]
}

@test "duplicates within a run: back-to-back containers on standard input" {
	{ ev a dist m1 1; ev b dist m1 2; } | ingest 2026-03-01T10:00:00Z f1.avro
	ev a dist m1 1 | ingest 2026-03-01T10:05:00Z f2.avro
	cat f1.avro f2.avro f2.avro | cnt-dedup -d "$DEFS" --stats st.json >out.avro
	[ "$(keys_of out.avro)" = a,b ]
	one '.in == 3 + 1 and .out == 2 and .duplicates == 2' st.json
}

@test "the same idempotency key in another counter or tenant is not a duplicate" {
	{ ev a dist m1 1; ev a clicks m1 1; ev a dist m1 1 '' "$T0" kol; } | ingest 2026-03-01T10:00:00Z f.avro
	cnt-dedup -d "$DEFS" -o out.avro f.avro f.avro
	[ "$(cnt-cat out.avro | jq -r '"\(.tenant_id)/\(.counter_id)"' | paste -sd, -)" = utc/dist,utc/clicks,kol/dist ]
}

# ---- across runs: the state file -------------------------------------

@test "across runs: a retry in the next segment inside the horizon is dropped" {
	{ ev a dist m1 1; ev b dist m1 2; } | ingest 2026-03-01T10:00:00Z seg1.avro
	{ ev a dist m1 1; ev c dist m1 3; ev b dist m1 2; } | ingest 2026-03-01T10:59:59Z seg2.avro
	cnt-dedup -d "$DEFS" -s state -o out1.avro seg1.avro
	[ "$(keys_of out1.avro)" = a,b ]
	run cnt-dedup -d "$DEFS" -s state -o out2.avro -D dup2.avro --stats st.json seg2.avro
	[ "$status" -eq 0 ]
	[ "$(keys_of out2.avro)" = c ]
	[ "$(keys_of dup2.avro)" = a,b ]
	one '.in == 3 and .out == 1 and .duplicates == 2 and .state_keys_loaded == 2 and .state_keys_saved == 3' st.json
	# without the state the second run knows nothing
	cnt-dedup -d "$DEFS" -o nostate.avro seg2.avro
	[ "$(keys_of nostate.avro)" = a,c,b ]
}

@test "--snapshots: the state after each segment, so a rebuild can start at any segment" {
	{ ev a dist m1 1; ev b dist m1 2; } | ingest 2026-03-01T10:00:00Z seg1.avro
	{ ev a dist m1 1; ev c dist m1 3; } | ingest 2026-03-01T10:30:00Z seg2.avro
	{ ev b dist m1 2; ev c dist m1 3; ev d dist m1 4; } | ingest 2026-03-01T10:45:00Z seg3.avro
	mkdir in
	cp seg3.avro in/
	run cnt-dedup -d "$DEFS" -s state --snapshots snaps -o all.avro seg1.avro seg2.avro in/seg3.avro
	[ "$status" -eq 0 ]
	[ "$(keys_of all.avro)" = a,b,c,d ]
	[ "$(ls snaps)" = "$(printf 'seg1.avro.state\nseg2.avro.state\nseg3.avro.state')" ]
	[ "$(state_keys snaps/seg1.avro.state)" -eq 2 ]
	[ "$(state_keys snaps/seg2.avro.state)" -eq 3 ]
	# the last snapshot is the state the run ends with
	cmp snaps/seg3.avro.state state
	# a rebuild from segment 3 on, with the snapshot of segment 2 (copied: -s
	# rewrites its file), gives what the whole run gave for segment 3
	cp snaps/seg2.avro.state from2
	cnt-dedup -d "$DEFS" -s from2 -o part3.avro seg3.avro
	[ "$(keys_of part3.avro)" = d ]
	cmp from2 state
	# the segments one run at a time, each with the state of the one before,
	# leave the same snapshots
	cnt-dedup -d "$DEFS" -s one --snapshots snaps1 -o /dev/null seg1.avro
	cnt-dedup -d "$DEFS" -s one --snapshots snaps1 -o /dev/null seg2.avro
	cmp snaps/seg1.avro.state snaps1/seg1.avro.state
	cmp snaps/seg2.avro.state snaps1/seg2.avro.state
	# every snapshot named by one segment; standard input has no name
	run --separate-stderr cnt-dedup -d "$DEFS" --snapshots s2 seg1.avro in/seg3.avro seg3.avro
	[ "$status" -eq 2 ]
	[[ $stderr == "cnt-dedup: --snapshots: segments 'in/seg3.avro' and 'seg3.avro' have the same file name"* ]]
	run --separate-stderr cnt-dedup -d "$DEFS" --snapshots s2 - <seg1.avro
	[ "$status" -eq 2 ]
	[[ $stderr == *"--snapshots needs the segments as named files"* ]]
	[ ! -e s2 ]
}

@test "the horizon's boundary: dropped 1 s before it, counted again at and after it" {
	# a at 10:00:00 is remembered until 11:00:00 (dist: 3600 s): a retry
	# admitted at 10:59:59 is a duplicate, one at 11:00:00 (t == expiry) or
	# later is a new event (cnt-dedup(1): the stated boundary).
	ev a dist m1 1 | ingest 2026-03-01T10:00:00Z first.avro
	ev a dist m1 1 | ingest 2026-03-01T10:59:59Z inside.avro
	ev a dist m1 1 | ingest 2026-03-01T11:00:00Z at.avro
	ev a dist m1 1 | ingest 2026-03-01T11:00:01Z after.avro
	for r in inside at after; do
		rm -f state
		cnt-dedup -d "$DEFS" -s state -o /dev/null first.avro
		cnt-dedup -d "$DEFS" -s state -o "out-$r.avro" "$r.avro"
	done
	[ "$(cnt-cat --count out-inside.avro)" = 0 ]
	[ "$(cnt-cat --count out-at.avro)" = 1 ]
	[ "$(cnt-cat --count out-after.avro)" = 1 ]
	# the same within one run, with the state only in memory
	[ "$(cnt-dedup -d "$DEFS" first.avro inside.avro | cnt-cat --count)" = 1 ]
	[ "$(cnt-dedup -d "$DEFS" first.avro after.avro | cnt-cat --count)" = 2 ]
}

@test "after the horizon the retry is counted again and remembered anew" {
	ev a dist m1 1 | ingest 2026-03-01T10:00:00Z s1.avro
	ev a dist m1 1 | ingest 2026-03-01T11:30:00Z s2.avro   # 90 min later: counted
	ev a dist m1 1 | ingest 2026-03-01T12:00:00Z s3.avro   # 30 min after s2: dropped
	cnt-dedup -d "$DEFS" -s state -o o1.avro s1.avro
	cnt-dedup -d "$DEFS" -s state -o o2.avro s2.avro
	cnt-dedup -d "$DEFS" -s state -o o3.avro -D d3.avro s3.avro
	[ "$(cnt-cat --count o1.avro),$(cnt-cat --count o2.avro),$(cnt-cat --count o3.avro)" = 1,1,0 ]
	[ "$(cnt-cat o2.avro | jq .ingest_time)" = $((T0_MS + 90 * 60000)) ]
	[ "$(keys_of d3.avro)" = a ]
}

@test "per-counter horizons: dist forgets after 1 h, clicks after 2 h" {
	{ ev a dist m1 1; ev a clicks m1 1; } | ingest 2026-03-01T10:00:00Z s1.avro
	{ ev a dist m1 1; ev a clicks m1 1; } | ingest 2026-03-01T11:30:00Z s2.avro
	{ ev a dist m1 1; ev a clicks m1 1; } | ingest 2026-03-01T12:00:01Z s3.avro
	cnt-dedup -d "$DEFS" -s state -o /dev/null s1.avro
	cnt-dedup -d "$DEFS" -s state -o o2.avro --stats st2.json s2.avro
	[ "$(cnt-cat o2.avro | jq -r .counter_id | paste -sd, -)" = dist ]
	one '.counters == [{tenant_id: "utc", counter_id: "dist", in: 1, duplicates: 0, dedup_hit_rate: 0},
		{tenant_id: "utc", counter_id: "clicks", in: 1, duplicates: 1, dedup_hit_rate: 1}]' st2.json
	# clicks was remembered until 12:00:00; dist anew from 11:30 until 12:30
	cnt-dedup -d "$DEFS" -s state -o o3.avro s3.avro
	[ "$(cnt-cat o3.avro | jq -r .counter_id | paste -sd, -)" = clicks ]
}

# ---- the view-count key ------------------------------------------------

@test "view-count key: one view per (video, viewer) within the horizon, whatever the idempotency keys" {
	# utc/views: member_ref is the video, item the viewer; dedup_key item_member.
	ev k1 views vid1 1 u1 | ingest 2026-03-01T10:00:00Z s1.avro
	{
		ev k2 views vid1 1 u1    # same (vid1, u1), new key: dropped
		ev k3 views vid1 1 u2    # another viewer: kept
		ev k4 views vid2 1 u1    # another video: kept
		ev k5 views vid1 1 u2    # repeats k3 in the same run: dropped
	} | ingest 2026-03-01T10:20:00Z s2.avro
	ev k6 views vid1 1 u1 | ingest 2026-03-01T11:00:01Z s3.avro   # past k1's hour: counted
	cnt-dedup -d "$DEFS" -s state -o o1.avro s1.avro
	cnt-dedup -d "$DEFS" -s state -o o2.avro -D d2.avro s2.avro
	cnt-dedup -d "$DEFS" -s state -o o3.avro s3.avro
	[ "$(keys_of o1.avro)" = k1 ]
	[ "$(keys_of o2.avro)" = k3,k4 ]
	[ "$(keys_of d2.avro)" = k2,k5 ]
	[ "$(keys_of o3.avro)" = k6 ]
}

@test "a unique counter keyed by idempotency key keeps repeated (member, item) pairs" {
	{ ev k1 uniq m1 1 u1; ev k2 uniq m1 1 u1; } | ingest 2026-03-01T10:00:00Z s.avro
	cnt-dedup -d "$DEFS" -o o.avro s.avro
	[ "$(keys_of o.avro)" = k1,k2 ]
}

# ---- the state file ----------------------------------------------------

@test "state file: absent is created with the documented layout, no temporary left" {
	{ ev a dist m1 1; ev b dist m1 2; ev c clicks m1 3; } | ingest 2026-03-01T10:00:00Z s.avro
	mkdir d
	run cnt-dedup -d "$DEFS" -s d/state -o d/out.avro --stats d/st.json s.avro
	[ "$status" -eq 0 ]
	[ "$(ls -A d | paste -sd, -)" = out.avro,st.json,state ]
	"$PY" - d/state "$((T0_MS / 1000))" <<'EOF'
import sys
b = open(sys.argv[1], "rb").read()
le = lambda p, n: int.from_bytes(b[p:p + n], "little")
assert b[:8] == b"CNTDDUP1", b[:8]
assert le(8, 8) == int(sys.argv[2]), le(8, 8)           # clock: largest ingest second
n = le(16, 8)
assert n == 3 and len(b) == 24 + 16 * n + 8, (n, len(b))
slots = [(le(24 + 16 * i, 8), le(32 + 16 * i, 4), le(36 + 16 * i, 4)) for i in range(n)]
assert slots == sorted(slots), "slots not sorted by fingerprint"
t = int(sys.argv[2])
assert sorted(s[2] for s in slots) == [t + 3600, t + 3600, t + 7200], slots  # expiries: horizons
EOF
	one '.state_keys_loaded == 0 and .state_keys_saved == 3' d/st.json
}

@test "state file: replaced atomically (a new inode), never edited in place; no temporary left" {
	ev a dist m1 1 | ingest 2026-03-01T10:00:00Z s1.avro
	ev b dist m1 1 | ingest 2026-03-01T10:05:00Z s2.avro
	mkdir d
	cnt-dedup -d "$DEFS" -s d/state -o /dev/null s1.avro
	cp d/state before
	ln d/state d/hardlink          # a reader holding the old file keeps it whole
	cnt-dedup -d "$DEFS" -s d/state -o /dev/null s2.avro
	[ "$(stat -c %i d/state)" != "$(stat -c %i d/hardlink)" ]
	cmp before d/hardlink
	[ "$(state_keys d/state)" = 2 ]
	[ "$(ls -A d | paste -sd, -)" = hardlink,state ]
}

# expect_bad_state: the state file 'state' is damaged; cnt-dedup must stop
# with status 2 and a message naming it, write no output, and leave the
# state as it was.
expect_bad_state() {
	cp state state.bad
	run cnt-dedup -d "$DEFS" -s state -o out.avro -D dup.avro s2.avro
	echo "$output"
	[ "$status" -eq 2 ]
	[[ "$output" == "cnt-dedup: "*"'state'"*"$1"* ]]
	[ "$(echo "$output" | wc -l)" -eq 1 ]
	[ ! -e out.avro ]
	[ ! -e dup.avro ]
	cmp state state.bad
	[ "$(ls -A | grep -c '^\.')" -eq 0 ]   # no temporary files
}

make_state() {
	{ ev a dist m1 1; ev b dist m1 2; } | ingest 2026-03-01T10:00:00Z s1.avro
	ev c dist m1 1 | ingest 2026-03-01T10:05:00Z s2.avro
	cnt-dedup -d "$DEFS" -s state -o /dev/null s1.avro
}

@test "state file: truncated -> status 2, no output" {
	make_state
	head -c -1 state >t && mv t state
	expect_bad_state 'corrupt or truncated'
}

@test "state file: one byte flipped in a slot -> checksum error, status 2" {
	make_state
	"$PY" -c 'import sys; b = bytearray(open("state", "rb").read()); b[30] ^= 0x40; open("state", "wb").write(b)'
	expect_bad_state 'checksum'
}

@test "state file: a key count that disagrees with the size -> status 2" {
	make_state
	"$PY" -c 'b = bytearray(open("state", "rb").read()); b[16] += 1; open("state", "wb").write(b)'
	expect_bad_state 'corrupt or truncated'
}

@test "state file: not a state file (wrong magic, empty) -> status 2" {
	make_state
	printf 'NOTSTATE%024d' 0 >state
	expect_bad_state 'CNTDDUP1'
	: >state
	expect_bad_state 'corrupt or truncated'
}

@test "state file: a FIFO, a device, '-', '' or /dev/stdout is refused at once (status 2, nothing written); a file in /dev/shm is a file" {
	local tool path want bad=""
	make_state
	mkfifo state.fifo
	for tool in cnt-dedup cnt-count; do
		for path in state.fifo /dev/null /dev/stdout - ''; do
			rm -f out.avro dup.avro
			# a FIFO with no writer: the tool must not wait for one (status 124)
			run timeout 60 $tool -d "$DEFS" -s "$path" -o out.avro -D dup.avro s2.avro
			[ "$status" -eq 2 ] || bad="$bad$tool -s '$path': status $status"$'\n'
			case $path in
			state.fifo | /dev/*) want="$tool: dedup state '$path' is not a regular file" ;;
			*) want="$tool: dedup state '$path': not a file name" ;;
			esac
			want="$want (the state is read and rewritten in place: give it a file of its own)"
			[ "$output" = "$want" ] || bad="$bad$tool -s '$path': $output"$'\n'
			[ ! -e out.avro ] && [ ! -e dup.avro ] || bad="$bad$tool -s '$path': wrote an output"$'\n'
		done
	done
	[ -p state.fifo ]
	[ "$(ls -A | grep -c '^\.')" -eq 0 ]   # no temporary files
	[ -z "$bad" ] || { printf '%s' "$bad"; return 1; }
	# /dev/stdout when standard output is a file: a link the commit would replace
	cp state stdout.file
	local rc=0
	timeout 60 cnt-dedup -d "$DEFS" -s /dev/stdout -o out2.avro s2.avro >>stdout.file 2>err || rc=$?
	[ "$rc" -eq 2 ]
	[ "$(cat err)" = "cnt-dedup: dedup state '/dev/stdout' is a link under /dev, not a regular file (the state is read and rewritten in place: give it a file of its own)" ]
	cmp state stdout.file && [ ! -e out2.avro ]
	# a regular file under /dev (a tmpfs) is a state like any other, written
	# and then replaced through a temporary beside it
	local shm
	shm=$(mktemp -d /dev/shm/cnt-dedup-test.XXXXXX)
	OUTSIDE=$shm
	cnt-dedup -d "$DEFS" -s "$shm/st" -o a.avro s1.avro
	cnt-dedup -d "$DEFS" -s "$shm/st" -o b.avro s2.avro
	cnt-dedup -d "$DEFS" -s here.state -o /dev/null s1.avro
	cnt-dedup -d "$DEFS" -s here.state -o /dev/null s2.avro
	cmp "$shm/st" here.state
	[ "$(ls -A "$shm")" = st ]
}

@test "state file: its size shrinks when keys expire (bounded by the horizon, not history)" {
	{ for k in 1 2 3 4 5; do ev "a$k" dist m1 1; done; } | ingest 2026-03-01T10:00:00Z s1.avro
	ev b dist m1 1 | ingest 2026-03-01T10:30:00Z s2.avro
	ev c dist m1 1 | ingest 2026-03-01T12:00:00Z s3.avro
	cnt-dedup -d "$DEFS" -s state -o /dev/null s1.avro
	[ "$(state_keys state)" = 5 ]
	[ "$(stat -c %s state)" = $((32 + 5 * 16)) ]
	cnt-dedup -d "$DEFS" -s state -o /dev/null s2.avro
	[ "$(state_keys state)" = 6 ]
	# at 12:00 every key of 10:00 and 10:30 has expired: only c is left
	cnt-dedup -d "$DEFS" -s state -o /dev/null --stats st.json s3.avro
	[ "$(state_keys state)" = 1 ]
	[ "$(stat -c %s state)" = $((32 + 16)) ]
	one '.state_keys_loaded == 6 and .state_keys_saved == 1' st.json
}

# ---- outputs, stats, rejects -------------------------------------------

@test "-D: the duplicates stream is an Avro events file holding exactly the dropped events" {
	{ ev a dist m1 1; ev b views v1 1 u1; } | ingest 2026-03-01T10:00:00Z s1.avro
	{ ev a dist m1 1; ev c views v1 1 u1; ev d dist m1 1; } | ingest 2026-03-01T10:01:00Z s2.avro
	cnt-dedup -d "$DEFS" -o out.avro -D dup.avro s1.avro s2.avro
	[ "$(head -c 4 dup.avro | od -An -c | tr -d ' ')" = 'Obj001' ]
	cnt-cat --schema dup.avro | jq -e '.name == "CountingEvent"'
	# the dropped events are the second file's a and c, unchanged
	diff <(cnt-cat dup.avro) <(cnt-cat s2.avro | jq -c 'select(.idempotency_key != "d")')
	# together, kept and dropped are the input
	diff <(cnt-cat out.avro dup.avro | jq -c . | sort) <(cnt-cat s1.avro s2.avro | sort)
}

@test "--stats: conservation (in = out + duplicate + rejected) and hit rate per tenant and counter" {
	jq '.counters += [{tenant_id: "utc", counter_id: "gone", versions: [{version: 1, type: "exact"}]}]' \
		"$DEFS" >defs2.json
	{ ev a dist m1 1; ev b dist m1 1; ev c dist m1 1; ev d dist m1 1; ev a clicks m1 1; ev g gone m1 1; } |
		ingest 2026-03-01T10:00:00Z s1.avro defs2.json
	{ ev a dist m1 1; ev a clicks m1 1; ev g gone m1 1; } | ingest 2026-03-01T10:01:00Z s2.avro defs2.json
	run cnt-dedup -d "$DEFS" -o out.avro -r rej.jsonl --stats st.json s1.avro s2.avro
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	one '.tool == "cnt-dedup" and .in == 9 and .out == 5 and .duplicates == 2 and .rejected == 2 and
		.in == .out + .duplicates + .rejected and .balanced and
		.dedup_hit_rate == (2 / 7 * 1e6 | round / 1e6)' st.json
	one '[.counters[] | {counter_id, in, duplicates, dedup_hit_rate}] == [
		{counter_id: "dist", in: 5, duplicates: 1, dedup_hit_rate: 0.2},
		{counter_id: "clicks", in: 2, duplicates: 1, dedup_hit_rate: 0.5}]' st.json
	[ "$(cnt-cat --count out.avro)" = 5 ]
}

@test "an undeclared counter or counter version is rejected with a line; the others pass" {
	jq '.counters |= map(if .counter_id == "dist" and .tenant_id == "utc" then
			.versions += [{version: 2, effective_from: "2026-02-01T00:00:00Z", type: "exact"}] else . end)
		| .counters += [{tenant_id: "utc", counter_id: "gone", versions: [{version: 1, type: "exact"}]}]' \
		"$DEFS" >defs2.json
	{ ev a dist m1 1; ev b clicks m1 1; ev c gone m1 1; } | ingest 2026-03-01T10:00:00Z s.avro defs2.json
	[ "$(cnt-cat s.avro | jq -r .counter_version | paste -sd, -)" = 2,1,1 ]
	run cnt-dedup -d "$DEFS" -o out.avro -r rej.jsonl s.avro
	[ "$status" -eq 0 ]
	[ "$(keys_of out.avro)" = b ]
	[ "$(wc -l <rej.jsonl)" -eq 2 ]
	jq -e -s --arg d "$DEFS" '
		.[0].reason == "unknown_counter" and .[0].field == "counter_version" and .[0].record == 1 and
		(.[0].message | contains("utc/dist") and contains("version 2") and contains($d)) and
		.[1].record == 3 and (.[1].message | contains("utc/gone"))' rej.jsonl
	# without -r: one line each on standard error, still status 0
	run --separate-stderr cnt-dedup -d "$DEFS" -o out2.avro s.avro
	[ "$status" -eq 0 ]
	[ "$(echo "$stderr" | wc -l)" -eq 2 ]
	[[ "$stderr" == "cnt-dedup: 's.avro' record 1: rejected (unknown_counter): counter 'utc/dist' version 2"* ]]
	cmp out.avro out2.avro
}

@test "determinism: the same input gives the same output, duplicates and state bytes" {
	{ for k in $(seq 40); do ev "k$k" dist "m$((k % 7))" "$k"; ev "v$k" views "vid$((k % 3))" 1 "u$((k % 5))"; done; } |
		ingest 2026-03-01T10:00:00Z s1.avro
	{ for k in $(seq 20 60); do ev "k$k" dist "m$((k % 7))" "$k"; done; } | ingest 2026-03-01T10:30:00Z s2.avro
	for d in r1 r2; do
		mkdir "$d"
		cnt-dedup -d "$DEFS" -s "$d/state" -o "$d/o1.avro" -D "$d/d1.avro" s1.avro
		cnt-dedup -d "$DEFS" -s "$d/state" -o "$d/o2.avro" -D "$d/d2.avro" s2.avro
	done
	for f in state o1.avro d1.avro o2.avro d2.avro; do cmp "r1/$f" "r2/$f"; done
	[ "$(cnt-cat --count r1/o1.avro)" = $((40 + 15)) ]   # 40 dist + 15 distinct (video, viewer)
	[ "$(cnt-cat --count r1/o2.avro)" = 20 ]             # k41..k60
}

@test "usage errors: no -d, unknown option, bad codec -> status 2" {
	run cnt-dedup -o x.avro
	[ "$status" -eq 2 ]
	[[ "$output" == *"-d definitions is required"* ]]
	run cnt-dedup --bogus
	[ "$status" -eq 2 ]
	run cnt-dedup -d "$DEFS" -c lz4 -o x.avro /dev/null
	[ "$status" -eq 2 ]
	[[ "$output" == *"'lz4'"* ]]
	[ ! -e x.avro ]
}

# ---- ids, statistics, faults -------------------------------------------

@test "ids holding quotes, backslashes and control characters: --stats, -r and the reject lines stay well-formed" {
	weird_ids defs2.json w.avro
	run --separate-stderr cnt-dedup -d defs2.json -o out.avro --stats st.json w.avro w.avro
	[ "$status" -eq 0 ]
	[ "${#stderr_lines[@]}" -eq 2 ]
	[ "${stderr_lines[0]}" = "cnt-dedup: 'w.avro' record 3: rejected (unknown_tenant): tenant 'ctl\\x01\\x1b' is not declared in 'defs2.json'" ]
	one '.in == 6 and .out == 2 and .duplicates == 2 and .rejected == 2 and
		.rejected_by_reason == {unknown_tenant: 2, unknown_counter: 0, not_monotonic: 0}' st.json
	one '[.counters[] | [.tenant_id, .counter_id, .in, .duplicates]] == [["utc", "dist", 2, 1], ["q\"t\\x", "c\"1\\", 2, 1]]' st.json
	cnt-dedup -d defs2.json -o out.avro -r rej.jsonl --stats - w.avro 2>st2.json
	one '.tool == "cnt-dedup" and .counters[1].counter_id == "c\"1\\"' st2.json
	one '.reason == "unknown_tenant" and .field == "tenant_id" and (.message | contains("ctl\u0001\u001b"))' rej.jsonl
	# UTF-8 is shown as it is; a C1 control (an 8-bit CSI) and a byte that
	# is not UTF-8 are escaped like a control byte
	weird_ids defs3.json u.avro c3a9c29bff
	run -0 --separate-stderr cnt-dedup -d defs3.json -o out.avro u.avro
	[ "$stderr" = "cnt-dedup: 'u.avro' record 3: rejected (unknown_tenant): tenant 'é\\xc2\\x9b\\xff' is not declared in 'defs3.json'" ]
}

@test "a reject line cuts a long id before a character, never inside it" {
	# 127 bytes and a 2-byte e-acute: longer than a declared id may be, so
	# the container is written by python3-avro
	local t
	t=$(printf 'a%.0s' {1..127})é
	ev l1 dist m1 1 | ingest "$T0" c.avro
	"$PY" "$DATA/avro-poke.py" c.avro l.avro l1 tenant_id "'a' * 127 + '\u00e9'"
	run -0 --separate-stderr cnt-dedup -d "$DEFS" -o out.avro -r rej.jsonl l.avro
	one --arg m "tenant '${t:0:127}...' is not declared in '$DEFS'" '.message == $m' rej.jsonl
}

@test "--stats keys: the common ones of cnt(7), then the state's" {
	ev a dist m1 1 | ingest 2026-03-01T10:00:00Z s1.avro
	cnt-dedup -d "$DEFS" -o out.avro --stats st.json s1.avro s1.avro
	one 'keys_unsorted == ["tool", "in", "out", "rejected", "duplicates", "held", "balanced", "rejected_by_reason",
		"dedup_hit_rate", "state_keys_loaded", "state_keys_saved", "event_time_min", "event_time_max",
		"ingest_time_min", "ingest_time_max", "counters"]' st.json
	one '.in == 2 and .duplicates == 1 and .held == 0 and .balanced == true and .dedup_hit_rate == 0.5' st.json
	# the time ranges of every event read, duplicates included
	ev b dist m1 1 '' 2026-03-01T08:00:00Z | ingest 2026-03-01T11:00:00Z s2.avro
	ev d dist m1 1 '' 2026-03-01T09:00:00Z | ingest 2026-03-01T12:00:00Z s3.avro
	cnt-dedup -d "$DEFS" -o out.avro --stats st.json s1.avro s2.avro s3.avro s1.avro
	one --argjson t0 "$T0_MS" --argjson h "$H_MS" '.event_time_min == $t0 - 2 * $h and .event_time_max == $t0 and
		.ingest_time_min == $t0 and .ingest_time_max == $t0 + 2 * $h and .duplicates == 1' st.json
	# none read: no time keys
	: | cnt-ingest -d "$DEFS" --now "$T0" -o empty.avro -
	cnt-dedup -d "$DEFS" -o out.avro --stats st.json empty.avro
	one '.in == 0 and (has("event_time_min") | not) and (has("ingest_time_max") | not)' st.json
	run cnt-dedup -d "$DEFS" -o out.avro -v s1.avro s1.avro
	[ "$output" = "cnt-dedup: in 2, out 1, duplicate 1, rejected 0 (dedup hit rate 50.00%); state 0 keys loaded, 0 saved" ]
}

@test "an output that cannot be written (/dev/full): status 3, one message, the state untouched" {
	make_state
	cp state state.before
	for out in "-o /dev/full" "-o out.avro -D /dev/full"; do
		# shellcheck disable=SC2086
		run cnt-dedup -d "$DEFS" -s state $out s2.avro
		echo "$out: $output"
		[ "$status" -eq 3 ]
		[ "${#lines[@]}" -eq 1 ]
		[[ "$output" == "cnt-dedup: "*"No space left on device"* ]]
	done
	cmp state state.before
	# --stats is written before the outputs are committed: when it fails,
	# neither the output nor the state is replaced
	run cnt-dedup -d "$DEFS" -s state -o out.avro --stats /dev/full s2.avro
	[ "$status" -eq 3 ]
	[ "$output" = "cnt-dedup: --stats: cannot write '/dev/full': No space left on device" ]
	[ ! -e out.avro ]
	cmp state state.before
	run bash -c 'cnt-dedup -d "$1" s2.avro >/dev/full' _ "$DEFS"
	[ "$status" -eq 3 ]
	[ "${#lines[@]}" -eq 1 ]
	[ "$(ls -A | grep -c '^\.')" -eq 0 ]
	[ ! -e out.avro ]
}

@test "a closed pipe ends the run quietly by SIGPIPE, also when SIGPIPE is ignored; the state is not replaced" {
	many_events 3000 big.avro
	run bash -c 'set -o pipefail; cnt-dedup -d "$1" -s state big.avro | head -c 100 >/dev/null' _ "$DEFS"
	[ "$status" -eq 141 ]
	[ -z "$output" ]
	run bash -c 'trap "" PIPE; set -o pipefail; cnt-dedup -d "$1" -s state big.avro | head -c 100 >/dev/null' _ "$DEFS"
	[ "$status" -eq 141 ]
	[ -z "$output" ]
	[ ! -e state ]
	[ "$(ls -A | grep -c '^\.')" -eq 0 ]
}

# dead_pid: the id of a process that has ended.
dead_pid() {
	sh -c 'echo $$'
}

@test "a killed run's temporary files are removed by the next run" {
	many_events 20 s.avro
	mkfifo in.fifo
	cnt-dedup -d "$DEFS" -s state -o out.avro -D dup.avro in.fifo &
	pid=$!
	# the outputs are opened before the input: wait for their temporaries
	for _ in $(seq 100); do
		[ "$(ls -A | grep -c '^\.\(out\|dup\)\.avro\.tmp-')" -eq 2 ] && break
		sleep 0.05
	done
	kill -9 "$pid"
	wait "$pid" || true
	[ "$(ls -A | grep -c "^\.\(out\|dup\)\.avro\.tmp-$pid-")" -eq 2 ]
	# a state temporary of a killed run (killed while saving)
	dead=$(dead_pid)
	: >".state.tmp-$dead-Ab12Cd"
	# and one of a live process, which must stay
	: >".state.tmp-$$-Xy34Zw"
	cnt-dedup -d "$DEFS" -s state -o out.avro -D dup.avro s.avro
	[ "$(ls -A | grep '^\.' | paste -sd, -)" = ".state.tmp-$$-Xy34Zw" ]
	[ "$(cnt-cat --count out.avro)" = 20 ]
}

@test "out of memory at any allocation: status 4, one message, no output and the state untouched" {
	make_state
	cp state state.before
	n=1
	while :; do
		run env CNT_FAIL_ALLOC=$n cnt-dedup -d "$DEFS" -s state -o out.avro -D dup.avro -r rej.jsonl --stats st.json s2.avro
		[ "$status" -eq 0 ] && break
		echo "allocation $n: status $status: $output"
		[ "$status" -eq 4 ]
		[ "${#lines[@]}" -eq 1 ]
		[[ "$output" == "cnt-dedup: "*"out of memory"* ]]
		[ ! -e out.avro ] && [ ! -e dup.avro ] && [ ! -e rej.jsonl ] && [ ! -e st.json ]
		[ "$(ls -A | grep -c '^\.')" -eq 0 ]
		cmp state state.before
		n=$((n + 1))
	done
	[ "$n" -gt 20 ]      # the walk went through the run's allocations
}
