#!/usr/bin/env bats
# cnt-cat against the python3-avro fixtures (tests/fixtures/README): every
# readable file prints its NAME.expected.jsonl byte for byte, every corrupt
# or unresolvable one fails with exit status 2 and one positioned line on
# standard error.  Independent checks (CSV parsing, RFC 3339 rendering,
# projections) are computed with /usr/bin/python3, not with our code.

bats_require_minimum_version 1.5.0

FIX="$BATS_TEST_DIRNAME/fixtures"
PY=/usr/bin/python3

setup_file() {
	# A large input: the 40-record file 300 times back to back (12000
	# records, ~5 MB of JSON), so the output cannot fit one pipe buffer.
	local i
	for i in $(seq 300); do cat "$FIX/events.null.avro"; done >"$BATS_FILE_TMPDIR/big.avro"
}

# The number of valid records before the damage, from tests/fixtures/README.
valid_before() {
	case "$1" in
	corrupt.truncated.avro | corrupt.bad-sync.avro | corrupt.bad-block.deflate.avro | \
		corrupt.snappy-crc.avro) echo 3 ;;
	corrupt.bad-union.avro | corrupt.bad-enum.avro) echo 1 ;;
	*) echo 0 ;;
	esac
}

# A word or phrase the message must contain, saying what is wrong.
what_of() {
	case "$1" in
	corrupt.bad-magic.avro) echo 'magic' ;;
	corrupt.truncated.avro) echo 'truncated' ;;
	corrupt.bad-sync.avro) echo 'sync marker' ;;
	corrupt.bad-block.deflate.avro) echo 'deflate' ;;
	corrupt.snappy-crc.avro) echo 'CRC32' ;;
	corrupt.huge-count.avro) echo 'records in' ;;
	corrupt.huge-string.avro) echo "'event_id'.*1099511627776" ;;
	corrupt.huge-block.avro) echo 'max_block_bytes' ;;
	corrupt.negative-count.avro) echo 'negative record count' ;;
	corrupt.schema-json.avro) echo 'not valid JSON' ;;
	corrupt.no-schema.avro) echo 'no avro.schema' ;;
	corrupt.unknown-codec.avro) echo "codec 'lz4'" ;;
	corrupt.long-varint.avro) echo 'malformed' ;;
	corrupt.bad-union.avro) echo "'item'.*union branch 5" ;;
	corrupt.bad-enum.avro) echo "'origin'.*enum index 7" ;;
	bad.missing-required.avro) echo "'event_id' is missing from the writer" ;;
	bad.type-mismatch.avro) echo "'delta'.*cannot be read as" ;;
	*) echo "no expectation for $1" >&2; return 1 ;;
	esac
}

@test "every readable fixture prints its expected JSON lines byte for byte" {
	local n=0 f name as
	for f in "$FIX"/*.expected.jsonl; do
		name=${f##*/}
		name=${name%.expected.jsonl}
		case "$name" in raw*) as=raw ;; *) as=event ;; esac
		cnt-cat --as "$as" "$FIX/$name.avro" >"$BATS_TEST_TMPDIR/out" ||
			{ echo "cnt-cat --as $as $name.avro failed"; return 1; }
		cmp "$BATS_TEST_TMPDIR/out" "$f" || { echo "differs: $name"; return 1; }
		n=$((n + 1))
	done
	[ "$n" -ge 19 ]
}

@test "without a reader schema events.null prints as written" {
	run --separate-stderr cnt-cat "$FIX/events.null.avro"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$output" = "$(cat "$FIX/events.null.expected.jsonl")" ]
	[ "${#lines[@]}" -eq 40 ]
}

@test "containers concatenated on standard input are read one after another" {
	cat "$FIX/events.null.avro" "$FIX/events.zstandard.avro" |
		cnt-cat --as event - >"$BATS_TEST_TMPDIR/out"
	cat "$FIX/events.null.expected.jsonl" "$FIX/events.zstandard.expected.jsonl" >"$BATS_TEST_TMPDIR/want"
	cmp "$BATS_TEST_TMPDIR/out" "$BATS_TEST_TMPDIR/want"
	[ "$(wc -l <"$BATS_TEST_TMPDIR/out")" -eq 80 ]
}

@test "no file argument reads standard input too" {
	cnt-cat --as event <"$FIX/events.deflate.avro" >"$BATS_TEST_TMPDIR/out"
	cmp "$BATS_TEST_TMPDIR/out" "$FIX/events.deflate.expected.jsonl"
}

@test "header-only containers before, between and after others are fine" {
	cat "$FIX/events.header-only.avro" "$FIX/events.snappy.avro" \
		"$FIX/events.header-only.deflate.avro" "$FIX/events.empty-blocks.avro" \
		"$FIX/events.header-only.avro" | cnt-cat --as event >"$BATS_TEST_TMPDIR/out"
	cat "$FIX/events.snappy.expected.jsonl" "$FIX/events.empty-blocks.expected.jsonl" >"$BATS_TEST_TMPDIR/want"
	cmp "$BATS_TEST_TMPDIR/out" "$BATS_TEST_TMPDIR/want"
}

@test "containers with different writer schemas follow each other on one stream" {
	cat "$FIX/resolve.reordered.avro" "$FIX/resolve.promote.avro" "$FIX/resolve.extra.avro" |
		cnt-cat --as event >"$BATS_TEST_TMPDIR/out"
	cat "$FIX/resolve.reordered.expected.jsonl" "$FIX/resolve.promote.expected.jsonl" \
		"$FIX/resolve.extra.expected.jsonl" >"$BATS_TEST_TMPDIR/want"
	cmp "$BATS_TEST_TMPDIR/out" "$BATS_TEST_TMPDIR/want"
}

@test "several file arguments are read in order" {
	cnt-cat --as event "$FIX/events.xz.avro" "$FIX/events.header-only.avro" \
		"$FIX/events.bzip2.avro" "$FIX/resolve.missing.avro" >"$BATS_TEST_TMPDIR/out"
	cat "$FIX/events.xz.expected.jsonl" "$FIX/events.bzip2.expected.jsonl" \
		"$FIX/resolve.missing.expected.jsonl" >"$BATS_TEST_TMPDIR/want"
	cmp "$BATS_TEST_TMPDIR/out" "$BATS_TEST_TMPDIR/want"
}

@test "'-' among file arguments reads standard input in its place" {
	cnt-cat --as event "$FIX/events.null.avro" - "$FIX/events.deflate.avro" \
		<"$FIX/events.snappy.avro" >"$BATS_TEST_TMPDIR/out"
	cat "$FIX/events.null.expected.jsonl" "$FIX/events.snappy.expected.jsonl" \
		"$FIX/events.deflate.expected.jsonl" >"$BATS_TEST_TMPDIR/want"
	cmp "$BATS_TEST_TMPDIR/out" "$BATS_TEST_TMPDIR/want"
}

# Every corrupt.* and bad.* file: status 2, one line on stderr naming the
# file, a position and what is wrong; standard output holds only whole,
# correct records from before the damage.  cnt-cat buffers its output, so it
# prints either none of them (they were still in its buffer) or exactly the
# README's "valid before" count; anything else (a partial line, a record
# from the damaged block, a record made up) fails.
@test "every corrupt and bad fixture fails with status 2 and a positioned message" {
	local f name what vb n
	for f in "$FIX"/corrupt.*.avro "$FIX"/bad.*.avro; do
		name=${f##*/}
		what=$(what_of "$name")
		vb=$(valid_before "$name")
		run --separate-stderr cnt-cat --as event "$f"
		if [ "$status" -ne 2 ]; then echo "$name: status $status"; return 1; fi
		if [ "${#stderr_lines[@]}" -ne 1 ]; then echo "$name: stderr: $stderr"; return 1; fi
		if ! [[ $stderr =~ ^cnt-cat:\ \'[^\']*"$name"\'\ (byte\ [0-9]+|record\ [0-9]+|\(container\ [0-9]+\)) ]]; then
			echo "$name: message not positioned: $stderr"; return 1
		fi
		if ! grep -qE -- "$what" <<<"$stderr"; then
			echo "$name: message lacks /$what/: $stderr"; return 1
		fi
		n=${#lines[@]}
		if [ "$n" -ne 0 ] && [ "$n" -ne "$vb" ]; then
			echo "$name: $n records printed, expected 0 or $vb"; return 1
		fi
		if [ "$n" -gt 0 ] && [ "$output" != "$(head -n "$n" "$FIX/events.null.expected.jsonl")" ]; then
			echo "$name: printed records are not the valid ones"; return 1
		fi
	done
}

@test "an unknown codec's name is shown escaped: a header cannot send the terminal a control sequence" {
	# the fixture's codec 'lz4', rewritten to ESC [ m (three bytes too)
	"$PY" -c 'import sys; b = open(sys.argv[1], "rb").read(); i = b.index(b"lz4")
open(sys.argv[2], "wb").write(b[:i] + b"\x1b[m" + b[i + 3:])' "$FIX/corrupt.unknown-codec.avro" "$BATS_TEST_TMPDIR/esc.avro"
	run -2 --separate-stderr cnt-cat "$BATS_TEST_TMPDIR/esc.avro"
	[[ $stderr == *"unsupported codec '\\x1b[m' (supported:"* ]]
	[[ $stderr != *$'\x1b'* ]]
}

@test "an error names a file or an option's value on one line, whatever it holds (cnt(7))" {
	# a file name with a line feed, an escape sequence, a backslash and a
	# right-to-left override: escaped, the backslash kept as it is
	name=$(printf 'no\nfi\033[2Jle\\x\342\200\256')
	run -2 --separate-stderr cnt-cat "$name"
	[ "$stderr" = "cnt-cat: cannot open 'no\\x0afi\\x1b[2Jle\\x\\xe2\\x80\\xae': No such file or directory" ]
	# a usage error: its first line the same way, the usage after it
	run -2 --separate-stderr cnt-cat -F "$(printf 'ya\rml')" "$FIX/events.null.avro"
	[ "${stderr%%$'\n'*}" = "cnt-cat: --output-format: 'ya\\x0dml' is not json or csv" ]
	[[ ${stderr#*$'\n'} == "usage: cnt-cat "* ]]
	[ -z "$output" ]
	# 3,000 control bytes escape to 12,000: the line is cut after a whole
	# escape, within one pipe write (PIPE_BUF, 4,096 bytes with its newline)
	run -2 --separate-stderr cnt-cat -F "$(head -c 3000 /dev/zero | tr '\0' '\1')" "$FIX/events.null.avro"
	line=${stderr%%$'\n'*}
	[ "${#line}" -eq 4094 ]
	[[ $line == "cnt-cat: --output-format: '\\x01\\x01"*"\\x01..." ]]
}

@test "the record position in a decoding error is 1-based within the input" {
	run --separate-stderr cnt-cat --as event "$FIX/corrupt.bad-union.avro"
	[ "$status" -eq 2 ]
	[[ $stderr == *"record 2 (block 1)"* ]]
	run --separate-stderr cnt-cat --as event "$FIX/corrupt.truncated.avro"
	[ "$status" -eq 2 ]
	[[ $stderr == *"block 2"* ]]
}

@test "a corrupt container after a good one fails, keeping output to whole records" {
	run --separate-stderr bash -c "cat '$BATS_FILE_TMPDIR/big.avro' '$FIX/corrupt.bad-sync.avro' | cnt-cat --as event"
	[ "$status" -eq 2 ]
	[[ $stderr == "cnt-cat: '-' byte "*"sync marker"* ]]
	[ "${#stderr_lines[@]}" -eq 1 ]
	# Whatever was flushed is whole lines of the 40-record cycle, in order.
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/out"
	[ -z "$output" ] || $PY - "$BATS_TEST_TMPDIR/out" "$FIX/events.null.expected.jsonl" <<'EOF'
import sys
got = open(sys.argv[1], encoding="utf-8").read().split("\n")[:-1]
want = open(sys.argv[2], encoding="utf-8").read().split("\n")[:-1]
assert len(got) <= 12000 + 3, len(got)
for i, line in enumerate(got):
    assert line == want[i % 40], "line %d differs" % (i + 1)
EOF
}

@test "bad input given as the second file fails after the first is printed" {
	run --separate-stderr cnt-cat --as event "$FIX/events.null.avro" "$FIX/corrupt.bad-magic.avro"
	[ "$status" -eq 2 ]
	[[ $stderr == "cnt-cat: '$FIX/corrupt.bad-magic.avro' byte 0: "*magic* ]]
	[ "$output" = "$(cat "$FIX/events.null.expected.jsonl")" ] || [ -z "$output" ]
}

@test "empty input is an error, not zero records" {
	run --separate-stderr cnt-cat </dev/null
	[ "$status" -eq 2 ]
	[[ $stderr == "cnt-cat: '-': empty input, not an Avro container file" ]]
	[ -z "$output" ]
}

@test "an empty pipe points at the command before, which is where the cause is" {
	run --separate-stderr bash -c 'true | cnt-cat'
	[ "$status" -eq 2 ]
	[ "$stderr" = "cnt-cat: '-': empty input from a pipe: the command before this one failed (see its message) or wrote nothing" ]
}

@test "--count equals the expected line count" {
	local f name
	for f in "$FIX"/events.*.expected.jsonl "$FIX"/resolve.*.expected.jsonl; do
		name=${f##*/}
		name=${name%.expected.jsonl}
		run cnt-cat --count --as event "$FIX/$name.avro"
		[ "$status" -eq 0 ] || return 1
		[ "$output" = "$(wc -l <"$f")" ] || { echo "$name: $output"; return 1; }
	done
	run cnt-cat --count "$FIX/events.null.avro" "$FIX/events.xz.avro" "$FIX/events.header-only.avro"
	[ "$status" -eq 0 ]
	[ "$output" = 80 ]
	run cnt-cat --count "$BATS_FILE_TMPDIR/big.avro"
	[ "$output" = 12000 ]
}

@test "--count decodes every record, so a bad record still fails" {
	run --separate-stderr cnt-cat --count --as event "$FIX/corrupt.bad-enum.avro"
	[ "$status" -eq 2 ]
	[[ $stderr == *"enum index 7"* ]]
}

@test "--head N prints the first N records, across files too" {
	run cnt-cat --head 5 --as event "$FIX/events.deflate.avro"
	[ "$status" -eq 0 ]
	[ "$output" = "$(head -n 5 "$FIX/events.deflate.expected.jsonl")" ]
	run cnt-cat -n 0 "$FIX/events.deflate.avro"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	run cnt-cat --head 45 --as event "$FIX/events.null.avro" "$FIX/events.zstandard.avro"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 45 ]
	[ "$output" = "$(cat "$FIX/events.null.expected.jsonl" "$FIX/events.zstandard.expected.jsonl" | head -n 45)" ]
	run cnt-cat --head 2 --count "$FIX/events.null.avro"
	[ "$output" = 2 ]
}

@test "--head stops before the damage of a corrupt file" {
	run --separate-stderr cnt-cat --head 3 --as event "$FIX/corrupt.truncated.avro"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$output" = "$(head -n 3 "$FIX/events.null.expected.jsonl")" ]
}

@test "--head rejects a value that is not a non-negative number" {
	run --separate-stderr cnt-cat --head -1 "$FIX/events.null.avro"
	[ "$status" -eq 2 ]
	[[ $stderr == *"--head"* ]]
	run --separate-stderr cnt-cat --head 3x "$FIX/events.null.avro"
	[ "$status" -eq 2 ]
}

@test "--schema prints the writer schema as valid JSON, once per container" {
	run cnt-cat --schema "$FIX/events.deflate.avro"
	[ "$status" -eq 0 ]
	jq -e '.name == "CountingEvent" and .namespace == "cnt" and (.fields | length) == 16' <<<"$output"
	# The header text is the .avsc verbatim.
	[ "$output" = "$(cat "$BATS_TEST_DIRNAME/../lib/model/schemas/counting_event.avsc")" ]
	cat "$FIX/events.null.avro" "$FIX/resolve.extra.avro" >"$BATS_TEST_TMPDIR/two.avro"
	run cnt-cat --schema - <"$BATS_TEST_TMPDIR/two.avro"
	[ "$status" -eq 0 ]
	jq -se 'length == 2 and all(.name == "CountingEvent") and (.[1].fields | length) > 16' <<<"$output"
}

@test "--meta prints codec, sync and every metadata key per container" {
	run cnt-cat --meta "$FIX/events.deflate.avro"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 1 ]
	jq -e '.codec == "deflate" and .container == 1 and (.sync | test("^[0-9a-f]{32}$"))
		and (.metadata | keys == ["avro.codec", "avro.schema", "x.extra"])
		and .metadata["x.extra"] == ""
		and (.metadata["avro.schema"] | fromjson | .name) == "CountingEvent"' <<<"$output"
	run cnt-cat --meta "$FIX/events.null.avro"
	jq -e '.codec == "null" and .metadata["cnt.note"] == "user metadata \u0000\u00ff is ignored"' <<<"$output"
	# No avro.codec key means null.
	run cnt-cat --meta "$FIX/events.header-only.avro"
	jq -e '.codec == "null" and (.metadata | has("avro.codec") | not)' <<<"$output"
	cat "$FIX/events.null.avro" "$FIX/events.deflate.avro" "$FIX/events.zstandard.avro" |
		cnt-cat --meta >"$BATS_TEST_TMPDIR/out"
	jq -se '[.[] | [.container, .codec]] == [[1, "null"], [2, "deflate"], [3, "zstandard"]]
		and all(.input == "-")' "$BATS_TEST_TMPDIR/out"
	# Each file's sync marker is md5("cnt-fixture:" + file name) (README).
	[ "$(jq -r .sync <<<"$output")" = "$(printf 'cnt-fixture:events.header-only.avro' | md5sum | cut -c1-32)" ]
}

@test "--format csv: a header row, one row per record, cells agree with the JSON" {
	cnt-cat --output-format csv "$FIX/events.null.avro" >"$BATS_TEST_TMPDIR/out.csv"
	[ "$(head -n 1 "$BATS_TEST_TMPDIR/out.csv")" = "event_id,idempotency_key,tenant_id,counter_id,counter_version,member_ref,item,delta,event_time,ingest_time,origin,subject,signature,retracts,retraction_id,attrs" ]
	# A nested map is one quoted cell: a comma and doubled quotes inside.
	grep -q ',"{""région"":""Île-de-France"",' "$BATS_TEST_TMPDIR/out.csv"
	$PY - "$BATS_TEST_TMPDIR/out.csv" "$FIX/events.null.expected.jsonl" <<'EOF'
import csv, json, sys
rows = list(csv.reader(open(sys.argv[1], encoding="utf-8", newline="")))
recs = [json.loads(l) for l in open(sys.argv[2], encoding="utf-8")]
assert len(rows) == 1 + len(recs) == 41, len(rows)
head = rows[0]
assert head == list(recs[0].keys()), head
for i, (row, rec) in enumerate(zip(rows[1:], recs)):
    assert len(row) == len(head), (i, len(row))
    for cell, key in zip(row, head):
        v = rec[key]
        if key == "signature":
            continue  # bytes: the cell convention is cnt-cat(1)'s own
        if v is None:
            want = ""
        elif isinstance(v, (dict, list)):
            assert json.loads(cell) == v, (i, key)
            continue
        else:
            want = str(v)
        assert cell == want, (i, key, cell, want)
EOF
}

@test "--output-format rejects anything but json and csv" {
	run --separate-stderr cnt-cat --output-format xml "$FIX/events.null.avro"
	[ "$status" -eq 2 ]
	[[ $stderr == *"'xml'"* ]]
}

@test "--iso-time renders timestamp-millis as RFC 3339 UTC" {
	run cnt-cat --iso-time --head 7 --as event "$FIX/events.null.avro"
	[ "$status" -eq 0 ]
	# Record 5: event_time -1, ingest_time 0; record 6: year 1.
	[[ ${lines[5]} == *'"event_time":"1969-12-31T23:59:59.999Z","ingest_time":"1970-01-01T00:00:00.000Z"'* ]]
	[[ ${lines[6]} == *'"event_time":"0001-01-01T00:00:00.000Z"'* ]]
	cnt-cat -t --as event "$FIX/events.null.avro" >"$BATS_TEST_TMPDIR/iso"
	$PY - "$BATS_TEST_TMPDIR/iso" "$FIX/events.null.expected.jsonl" <<'EOF'
import datetime, json, sys
iso = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
raw = [json.loads(l) for l in open(sys.argv[2], encoding="utf-8")]
assert len(iso) == len(raw) == 40
epoch = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
def rfc3339(ms):
    d = epoch + datetime.timedelta(milliseconds=ms)
    return "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ" % (d.year, d.month, d.day,
        d.hour, d.minute, d.second, d.microsecond // 1000)
for a, b in zip(iso, raw):
    for k in b:
        if k in ("event_time", "ingest_time"):
            assert a[k] == rfc3339(b[k]), (a[k], b[k])
        else:
            assert a[k] == b[k], k
EOF
}

@test "--reader-schema: a custom reader schema drops and defaults fields" {
	cat >"$BATS_TEST_TMPDIR/reader.avsc" <<'EOF'
{"type": "record", "name": "Slim", "namespace": "test",
 "fields": [
  {"name": "delta", "type": "long"},
  {"name": "event_id", "type": "string"},
  {"name": "origin", "type": {"type": "enum", "name": "Origin", "symbols": ["BACKEND", "CLIENT"]}},
  {"name": "note", "type": "string", "default": "n/a"}
 ]}
EOF
	cnt-cat --reader-schema "$BATS_TEST_TMPDIR/reader.avsc" "$FIX/events.zstandard.avro" >"$BATS_TEST_TMPDIR/out"
	$PY - "$BATS_TEST_TMPDIR/out" "$FIX/events.zstandard.expected.jsonl" <<'EOF'
import json, sys
got = open(sys.argv[1], encoding="utf-8").read()
want = "".join(json.dumps({"delta": r["delta"], "event_id": r["event_id"], "origin": r["origin"],
                           "note": "n/a"}, ensure_ascii=False, separators=(",", ":")) + "\n"
               for r in map(json.loads, open(sys.argv[2], encoding="utf-8")))
assert got == want
assert "-9223372036854775808" in got and "9223372036854775807" in got
EOF
}

@test "--reader-schema: an unresolvable or invalid reader schema is an error" {
	echo '{"type": "record", "name": "R", "fields": [{"name": "nope", "type": "long"}]}' >"$BATS_TEST_TMPDIR/r1.avsc"
	run --separate-stderr cnt-cat --reader-schema "$BATS_TEST_TMPDIR/r1.avsc" "$FIX/events.null.avro"
	[ "$status" -eq 2 ]
	[[ $stderr == *"'nope' is missing from the writer"* ]]
	echo '{"type": "record", "name": "R", "fields": [' >"$BATS_TEST_TMPDIR/r2.avsc"
	run --separate-stderr cnt-cat --reader-schema "$BATS_TEST_TMPDIR/r2.avsc" "$FIX/events.null.avro"
	[ "$status" -eq 2 ]
	[[ $stderr == "cnt-cat: '$BATS_TEST_TMPDIR/r2.avsc': "* ]]
	run --separate-stderr cnt-cat --reader-schema "$BATS_TEST_TMPDIR/absent.avsc" "$FIX/events.null.avro"
	[ "$status" -eq 2 ]
	[[ $stderr == *"absent.avsc"* ]]
	run --separate-stderr cnt-cat --as event --reader-schema "$BATS_TEST_TMPDIR/r1.avsc" "$FIX/events.null.avro"
	[ "$status" -eq 2 ]
}

@test "--as raw reads a raw file; --as with another word is an error" {
	run cnt-cat --as raw --count "$FIX/raw.extra-fields.avro"
	[ "$output" = 20 ]
	run --separate-stderr cnt-cat --as bucket "$FIX/raw.avro"
	[ "$status" -eq 2 ]
	[[ $stderr == *"--as"* ]]
}

@test "--help prints usage on standard output with status 0" {
	run --separate-stderr cnt-cat --help
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[[ ${lines[0]} == "usage: cnt-cat"* ]]
	[[ $output == *"--reader-schema"* ]]
	run cnt-cat --version
	[ "$status" -eq 0 ]
	[[ $output == "cnt-cat "[0-9]* ]]
}

@test "an unknown option is a usage error with status 2" {
	run --separate-stderr cnt-cat --no-such-option "$FIX/events.null.avro"
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	[[ $stderr == *"usage: cnt-cat"* ]]
}

@test "a missing file is an error naming it" {
	run --separate-stderr cnt-cat "$BATS_TEST_TMPDIR/no-such.avro"
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	[ "$stderr" = "cnt-cat: cannot open '$BATS_TEST_TMPDIR/no-such.avro': No such file or directory" ]
}

@test "conflicting modes are refused" {
	run --separate-stderr cnt-cat --count --schema "$FIX/events.null.avro"
	[ "$status" -eq 2 ]
	[[ $stderr == *"exclude"* ]]
}

@test "--verbose reports per-input record counts on standard error" {
	run --separate-stderr cnt-cat -v --count "$FIX/events.null.avro" "$FIX/events.header-only.avro"
	[ "$status" -eq 0 ]
	[ "$output" = 40 ]
	[ "${stderr_lines[0]}" = "cnt-cat: '$FIX/events.null.avro': 40 records" ]
	[ "${stderr_lines[1]}" = "cnt-cat: '$FIX/events.header-only.avro': 0 records" ]
}

@test "a reader that closes the pipe early ends cnt-cat quietly" {
	run --separate-stderr bash -c "cnt-cat '$BATS_FILE_TMPDIR/big.avro' | head -n 1"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$output" = "$(head -n 1 "$FIX/events.null.expected.jsonl")" ]
	run --separate-stderr bash -c "cnt-cat --head 100000 --as event '$BATS_FILE_TMPDIR/big.avro' | head -n 2"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "${#lines[@]}" -eq 2 ]
}

@test "--meta and --schema show header-only containers in the middle of a stream" {
	cat "$FIX/events.null.avro" "$FIX/events.header-only.deflate.avro" "$FIX/events.zstandard.avro" \
		"$FIX/events.header-only.avro" | cnt-cat --meta >"$BATS_TEST_TMPDIR/out"
	jq -se '[.[] | [.container, .codec]] == [[1, "null"], [2, "deflate"], [3, "zstandard"], [4, "null"]]' \
		"$BATS_TEST_TMPDIR/out"
	cat "$FIX/events.null.avro" "$FIX/events.header-only.avro" | cnt-cat --schema >"$BATS_TEST_TMPDIR/out"
	jq -se 'length == 2' "$BATS_TEST_TMPDIR/out"
}

@test "regression: stopping early on a compressed stream that stays open neither hangs nor trips the sanitizers" {
	# The read-ahead thread waits on the still-open pipe; freeing the
	# reader must wake it (it was cancelled before, which AddressSanitizer
	# reported as a stack overflow in thread teardown now and then).
	for i in 1 2 3 4 5; do
		run -0 timeout 5 sh -c "(cat '$FIX/events.zstandard.avro'; sleep 0.3) | cnt-cat --head 1 -"
		[ "${#lines[@]}" -eq 1 ]
		run -0 timeout 5 cnt-cat --head 2 "$FIX/events.deflate.avro"
		[ "${#lines[@]}" -eq 2 ]
	done
}
