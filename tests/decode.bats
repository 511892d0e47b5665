#!/usr/bin/env bats
# Decoding archives through the shared reader (lib/avro/container.c with
# its read-ahead threads, lib/model/event.c's decoder): the records of a
# multi-block archive are the same whatever the codec and however many
# read-ahead threads (CNT_READ_THREADS=0: none), and damage anywhere -
# a cut in a block header, in a payload, before the end marker, a corrupt
# compressed block, a corrupt record - is one line naming the input and
# the block (and the record), status 2, with the records before the
# damage printed whole.  Block positions come from avro-blocks.py, which
# parses containers independently of our reader.

bats_require_minimum_version 1.5.0
load data/core/common

BLOCKS="$DATA/avro-blocks.py"

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	# 9000 events: three blocks of records and the end marker per archive
	"$PY" "$DATA/gen-events.py" 1 9000 >in.jsonl
	for c in zstandard null; do
		cnt-ingest -d "$DEFS" --now 2026-03-01T12:01:00Z -c $c -o $c.avro in.jsonl 2>/dev/null
	done
}

setup() {
	cd "$BATS_TEST_TMPDIR"
	F=$BATS_FILE_TMPDIR
}

# blocks FILE: "offset count size payload_offset" per block, end marker included.
blocks() {
	"$PY" "$BLOCKS" list "$1" | while read -r off count size; do
		"$PY" -c '
import sys
b = open(sys.argv[1], "rb").read()
i = int(sys.argv[2])
for _ in range(2):
    while b[i] & 0x80:
        i += 1
    i += 1
print(sys.argv[2], sys.argv[3], sys.argv[4], i)' "$1" "$off" "$count" "$size"
	done
}

# patch FILE OFFSET BYTE OUT: FILE with the byte at OFFSET set to BYTE (0-255).
patch() {
	"$PY" -c '
import sys
b = bytearray(open(sys.argv[1], "rb").read())
b[int(sys.argv[2])] = int(sys.argv[3])
open(sys.argv[4], "wb").write(b)' "$@"
}

@test "a multi-block archive prints the same records whatever the codec and the read-ahead" {
	run -0 "$PY" "$BLOCKS" list "$F/zstandard.avro"
	[ "${#lines[@]}" -eq 4 ]   # three blocks of records, the end marker
	cnt-cat "$F/zstandard.avro" >z.json
	cnt-cat "$F/null.avro" >n.json
	CNT_READ_THREADS=0 cnt-cat "$F/zstandard.avro" >z0.json
	CNT_READ_THREADS=1 cnt-cat "$F/zstandard.avro" >z1.json
	cnt-cat --as event "$F/zstandard.avro" >ze.json
	cmp z.json n.json
	cmp z.json z0.json
	cmp z.json z1.json
	cmp z.json ze.json
	# every admitted event, once, in the order of the input
	jq -r .idempotency_key z.json >keys
	jq -r .idempotency_key "$F/in.jsonl" | awk '!seen[$0]++' >want
	cmp keys want
	total=$("$PY" "$BLOCKS" list "$F/zstandard.avro" | awk '{ s += $2 } END { print s }')
	[ "$(wc -l <z.json)" -eq "$total" ]
	run -0 cnt-cat --count "$F/zstandard.avro" "$F/null.avro"
	[ "$output" -eq $((2 * total)) ]
	run -0 bash -c "cat '$F/zstandard.avro' '$F/null.avro' '$F/zstandard.avro' | cnt-cat --count"
	[ "$output" -eq $((3 * total)) ]
}

@test "an archive cut anywhere fails naming the block, with and without read-ahead" {
	blocks "$F/zstandard.avro" >b
	read -r o2 c2 s2 p2 < <(sed -n 2p b)
	read -r o3 c3 s3 p3 < <(sed -n 3p b)
	read -r o4 _ _ _ < <(sed -n 4p b)
	before2=$(sed -n 1p b | cut -d ' ' -f 2)
	# offset:block:what - in block 2's header, in its payload, in block
	# 3's sync marker, and just before the end marker
	for cut in "$((o2 + 1)):2:" "$((p2 + 100)):2:cut short" "$((p3 + s3 + 3)):3:cut short" "$o4::end marker"; do
		IFS=: read -r at blk what <<<"$cut"
		head -c "$at" "$F/zstandard.avro" >cut.avro
		for threads in 0 2; do
			CNT_READ_THREADS=$threads run -2 --separate-stderr cnt-cat --count cut.avro
			[ "${#stderr_lines[@]}" -eq 1 ]
			[[ $stderr == "cnt-cat: 'cut.avro' byte "* ]]
			[ -z "$blk" ] || [[ $stderr == *"block $blk"* ]]
			[ -z "$what" ] || [[ $stderr == *"$what"* ]]
			[ -z "$output" ]
			echo "$stderr" >"err.$threads"
			# JSON: the records of the whole blocks before the cut
			CNT_READ_THREADS=$threads run -2 --separate-stderr cnt-cat cut.avro
			if [ "$blk" = 2 ]; then [ "${#lines[@]}" -eq "$before2" ]; fi
		done
		cmp err.0 err.2
	done
}

@test "a corrupt compressed block fails naming the block and the codec, records before it printed" {
	blocks "$F/zstandard.avro" >b
	read -r _ c1 _ _ < <(sed -n 1p b)
	read -r _ _ s2 p2 < <(sed -n 2p b)
	patch "$F/zstandard.avro" $((p2 + s2 / 2)) 0 bad.avro
	cmp -s bad.avro "$F/zstandard.avro" && patch "$F/zstandard.avro" $((p2 + s2 / 2)) 255 bad.avro
	for threads in 0 2; do
		CNT_READ_THREADS=$threads run -2 --separate-stderr cnt-cat bad.avro
		[ "${#stderr_lines[@]}" -eq 1 ]
		[[ $stderr == "cnt-cat: 'bad.avro' byte "*"block 2 (zstandard)"* ]]
		[ "${#lines[@]}" -eq "$c1" ]
		CNT_READ_THREADS=$threads run -2 --separate-stderr cnt-cat --count bad.avro
		[[ $stderr == *"block 2 (zstandard)"* ]]
		[ -z "$output" ]
	done
}

@test "--count decodes every record: a corrupt record in a later block names the record and the block" {
	blocks "$F/null.avro" >b
	read -r _ c1 _ _ < <(sed -n 1p b)
	read -r _ c2 _ _ < <(sed -n 2p b)
	read -r _ _ _ p3 < <(sed -n 3p b)
	# the first record of block 3: its event_id length varint becomes -1
	patch "$F/null.avro" "$p3" 1 bad.avro
	run -2 --separate-stderr cnt-cat --count bad.avro
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ $stderr == "cnt-cat: 'bad.avro' record $((c1 + c2 + 1)) (block 3)"* ]]
	[ -z "$output" ]
	run -2 --separate-stderr cnt-cat bad.avro
	[[ $stderr == "cnt-cat: 'bad.avro' record $((c1 + c2 + 1)) (block 3)"* ]]
	[ "${#lines[@]}" -eq $((c1 + c2)) ]
	# the readers of events stop there too
	run -2 --separate-stderr cnt-dedup -d "$DEFS" -o /dev/null bad.avro
	[[ $stderr == *"record $((c1 + c2 + 1)) (block 3)"* ]]
	# an origin enum index out of range in the last record of the file
	read -r o4 _ _ _ < <(sed -n 4p b)
	"$PY" - "$F/null.avro" "$o4" <<'EOF'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
end = int(sys.argv[2]) - 16          # the last record ends before block 3's sync
# the last record: no attrs (0), retraction_id, retracts, signature,
# subject all null (0 each), then the origin enum just before them
assert b[end - 5:end] == b"\0\0\0\0\0", b[end - 8:end]
b[end - 6] = 4                       # enum index 2: out of range
open("enum.avro", "wb").write(b)
EOF
	run -2 --separate-stderr cnt-cat --count enum.avro
	[[ $stderr == "cnt-cat: 'enum.avro' record $((c1 + c2 + $(sed -n 3p b | cut -d ' ' -f 2))) (block 3)"* ]]
	run -0 cnt-cat --count "$F/null.avro"
}

@test "--count checks a compressed archive's records on the read-ahead threads: the same counts and messages as without them" {
	blocks "$F/null.avro" >b
	read -r _ c1 _ _ < <(sed -n 1p b)
	read -r o2 c2 _ _ < <(sed -n 2p b)
	read -r _ c3 _ p3 < <(sed -n 3p b)
	# the first record of block 3 made malformed (its event_id length
	# varint becomes -1), then the archive compressed with zstandard by
	# python3-zstandard: the records of block 3 are damaged, its
	# compression is not
	patch "$F/null.avro" "$p3" 1 bad.avro
	"$PY" "$BLOCKS" zstd bad.avro badz.avro
	[ "$("$PY" "$BLOCKS" list badz.avro | wc -l)" -eq 4 ]
	# block 2 claims one record fewer than it holds: bytes left over
	"$PY" - "$F/null.avro" "$o2" "$c2" <<'PYEOF'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
at, c = int(sys.argv[2]), int(sys.argv[3])
old, new = (c << 1).to_bytes(2, "little"), ((c - 1) << 1).to_bytes(2, "little")
enc = lambda n: bytes([(n & 0x7F) | 0x80, n >> 7])   # two-byte varints
assert b[at:at + 2] == enc(c << 1)
b[at:at + 2] = enc((c - 1) << 1)
open("short.avro", "wb").write(b)
PYEOF
	"$PY" "$BLOCKS" zstd short.avro shortz.avro
	"$PY" "$BLOCKS" zstd "$F/null.avro" goodz.avro
	for threads in 0 1 2; do
		CNT_READ_THREADS=$threads run -0 cnt-cat --count goodz.avro
		[ "$output" -eq $((c1 + c2 + c3)) ]
		CNT_READ_THREADS=$threads run -2 --separate-stderr cnt-cat --count badz.avro
		[ "${#stderr_lines[@]}" -eq 1 ]
		[[ $stderr == "cnt-cat: 'badz.avro' record $((c1 + c2 + 1)) (block 3): "* ]]
		echo "$stderr" >"bad.$threads"
		CNT_READ_THREADS=$threads run -2 --separate-stderr cnt-cat --count shortz.avro
		[ "${#stderr_lines[@]}" -eq 1 ]
		[[ $stderr == "cnt-cat: 'shortz.avro' block 2: "*" bytes left over after its $((c2 - 1)) records: corrupt file" ]]
		echo "$stderr" >"short.$threads"
		# --head stops before the damage: the records before it pass
		CNT_READ_THREADS=$threads run -0 cnt-cat --count -n $((c1 + c2)) badz.avro
		[ "$output" -eq $((c1 + c2)) ]
		CNT_READ_THREADS=$threads run -2 cnt-cat --count -n $((c1 + c2 + 1)) badz.avro
		CNT_READ_THREADS=$threads run -0 cnt-cat --count -n $((c1 + c2 - 1)) shortz.avro
		# concatenated with a container of another schema (a bucket
		# file: the generic walk), every record is counted
		cnt-accumulate -c zstandard -o buckets.avro <(cnt-window -d "$DEFS" "$F/zstandard.avro") 2>/dev/null
		nb=$(CNT_READ_THREADS=0 cnt-cat buckets.avro | wc -l)
		[ "$nb" -gt 0 ]
		CNT_READ_THREADS=$threads run -0 bash -c "cat goodz.avro buckets.avro goodz.avro | cnt-cat --count"
		[ "$output" -eq $((2 * (c1 + c2 + c3) + nb)) ]
	done
	# without read-ahead the caller checks each record itself: the same words
	cmp bad.0 bad.1
	cmp bad.0 bad.2
	cmp short.0 short.1
	cmp short.0 short.2
}
