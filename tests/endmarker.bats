#!/usr/bin/env bats
# The end marker (cnt-event(5), "Container files"): a stage that fails or is
# killed cannot hand the next one a stream that looks complete, so a plain
# sh pipeline (no pipefail) ends non-zero and writes no output file.
# Block boundaries are found by tests/data/core/avro-blocks.py, a parser of
# its own; python3-avro (an independent reader) reads the marked files.

bats_require_minimum_version 1.5.0
load data/core/common

NOW=2026-03-01T12:01:00Z
BLOCKS="$BATS_TEST_DIRNAME/data/core/avro-blocks.py"

setup_file() {
	# enough events for several blocks on a pipe (256 KiB each)
	/usr/bin/python3 "$BATS_TEST_DIRNAME/data/core/gen-events.py" 11 6000 >"$BATS_FILE_TMPDIR/in.jsonl"
	cnt-ingest -d "$DEFS" --now "$NOW" --max-past 400d -c null -r /dev/null -o "$BATS_FILE_TMPDIR/log.avro" \
		"$BATS_FILE_TMPDIR/in.jsonl"
}

setup() {
	cd "$BATS_TEST_TMPDIR"
	LOG=$BATS_FILE_TMPDIR/log.avro
}

@test "every container a tool writes declares the marker and ends with one empty block" {
	[ "$("$PY" "$BLOCKS" meta "$LOG" | tail -n 1)" = cnt.end_marker ]
	"$PY" "$BLOCKS" list "$LOG" >blocks
	[ "$(wc -l <blocks)" -ge 3 ]
	[ "$(tail -n 1 blocks | cut -d' ' -f2-)" = "0 0" ]
	[ "$(head -n -1 blocks | awk '$2 == 0' | wc -l)" -eq 0 ]
	cnt-window -d "$DEFS" "$LOG" >w.avro
	[ "$("$PY" "$BLOCKS" list w.avro | tail -n 1 | cut -d' ' -f2)" = 0 ]
}

@test "the issue's nightly job: cnt-dedup fails on its state file after its last block; the sh pipeline exits non-zero, no z.avro" {
	run -2 sh -c "cnt-dedup -d '$DEFS' -s /nope/dir/state '$LOG' | cnt-window -d '$DEFS' | cnt-accumulate -o z.avro"
	[ ! -e z.avro ]
	[[ $output == *"cnt-dedup: cannot create a file beside '/nope/dir/state'"* ]]
	# cnt-dedup had written all its records: only the marker was missing
	[[ $output == *"cnt-window: '-' byte "*": upstream ended without its end marker: the stage before failed or was stopped (see its message); its $(cnt-dedup -d "$DEFS" "$LOG" | cnt-cat --count) records are not a complete stream"* ]]
	ls -A >files
	[ "$(cat files)" = files ]
}

@test "a stream cut at any block boundary is refused by every tool that reads it" {
	cnt-window -d "$DEFS" "$LOG" >w.avro
	cnt-accumulate -o b.avro w.avro
	n=$("$PY" "$BLOCKS" list "$LOG" | wc -l)
	for k in 0 1 $((n - 1)); do
		"$PY" "$BLOCKS" cut "$LOG" "$k" cut.avro
		run -2 sh -c "cat cut.avro | cnt-dedup -d '$DEFS' -"
		[[ $output == *"cnt-dedup: '-' byte "*": upstream ended without its end marker"* ]]
		run -2 cnt-window -d "$DEFS" cut.avro
		[[ $output == *"'cut.avro' byte "*": the file ends without the end marker its writer puts after the last block"* ]]
		run -2 cnt-cat --count cut.avro
		run -2 cnt-retract --member m1 --cause dq --requester r --authority a --ledger l.jsonl -o c.avro cut.avro
		[ ! -e c.avro ] && [ ! -e l.jsonl ]
	done
	n=$("$PY" "$BLOCKS" list w.avro | wc -l)
	"$PY" "$BLOCKS" cut w.avro $((n - 1)) wcut.avro
	run -2 sh -c 'cnt-accumulate -o out.avro <wcut.avro'
	[ ! -e out.avro ]
	[[ $output == *"upstream ended without its end marker"* ]] || [[ $output == *"without the end marker"* ]]
	n=$("$PY" "$BLOCKS" list b.avro | wc -l)
	"$PY" "$BLOCKS" cut b.avro $((n - 1)) bcut.avro
	run -2 cnt-diff b.avro bcut.avro
	[[ $output == *"'bcut.avro' byte "*"without the end marker"* ]]
	run -2 cnt-project -d "$DEFS" -b "$(jq -r '.leaderboards[0].board_id' "$DEFS")" -w views --now "$NOW" bcut.avro
	# concatenated: the second file starts after a first one that was cut
	"$PY" "$BLOCKS" cut "$LOG" 1 first.avro
	cat first.avro "$LOG" >cat.avro
	run -2 cnt-cat --count cat.avro
	[[ $output == *"a container ends without the end marker"* ]]
	# whole files concatenated are fine
	cat "$LOG" "$LOG" | cnt-cat --count >count
	[ "$(cat count)" -eq $((2 * $(cnt-cat --count "$LOG"))) ]
}

# Each killed stage writes into a fifo whose read end is open but not yet
# read: it fills the pipe and blocks, is killed (SIGKILL), and the rest of
# the pipeline then reads what it left.
@test "each stage killed mid-stream (SIGKILL): the next stage refuses and the pipeline exits non-zero" {
	mkfifo f1 f2
	# cnt-dedup killed: cnt-window | cnt-accumulate must fail
	cnt-dedup -d "$DEFS" "$LOG" >f1 &
	pid=$!
	exec 5<f1
	sleep 0.5
	kill -KILL "$pid"
	wait "$pid" || true
	run sh -c "cnt-window -d '$DEFS' <&5 | cnt-accumulate -o z.avro"
	exec 5<&-
	[ "$status" -ne 0 ]
	[ ! -e z.avro ]
	# cnt-window killed: cnt-accumulate must fail
	cnt-window -d "$DEFS" "$LOG" >f2 &
	pid=$!
	exec 5<f2
	sleep 0.5
	kill -KILL "$pid"
	wait "$pid" || true
	run cnt-accumulate -o z.avro <&5
	exec 5<&-
	[ "$status" -eq 2 ]
	[ ! -e z.avro ]
	[[ $output == *"'-' byte "* ]]
}

@test "python3-avro reads marked files of every codec it supports, and cnt reads unmarked files" {
	for c in null deflate snappy zstandard bzip2; do
		cnt-window -d "$DEFS" -c "$c" "$LOG" >"w.$c.avro"
		"$PY" - "w.$c.avro" "$(cnt-cat --count "w.$c.avro")" <<'PYEOF'
import sys, avro.datafile, avro.io
r = avro.datafile.DataFileReader(open(sys.argv[1], "rb"), avro.io.DatumReader())
n = sum(1 for _ in r)
assert n == int(sys.argv[2]), (n, sys.argv[2])
PYEOF
	done
	# a file python3-avro wrote (no marker): read whole
	"$PY" - py.avro <<'PYEOF'
import sys, json, avro.datafile, avro.io, avro.schema
s = avro.schema.parse(json.dumps({"type": "record", "name": "R", "fields": [{"name": "n", "type": "long"}]}))
w = avro.datafile.DataFileWriter(open(sys.argv[1], "wb"), avro.io.DatumWriter(), s)
for i in range(5):
    w.append({"n": i})
w.close()
PYEOF
	[ "$(cnt-cat --count py.avro)" -eq 5 ]
}
