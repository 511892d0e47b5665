#!/usr/bin/env bats
# cnt-ingest: every reject reason, duplicates, conservation, stamping,
# determinism, input formats and output handling.  Inputs and definitions
# are in tests/data (see its README); the Avro form of tests/data/events.jsonl
# is written here by python3-avro, an independent implementation, and the
# expected records of that file are computed by /usr/bin/python3 from the
# JSON text, not by our code.  Unless a test says otherwise the ingest time
# is fixed with --now 2026-03-01T12:00:00Z.

bats_require_minimum_version 1.5.0

DATA="$BATS_TEST_DIRNAME/data"
FIX="$BATS_TEST_DIRNAME/fixtures"
DEFS="$DATA/defs.json"
# the key that signs the client events of tests/data (cnt-keyring(5))
KR="$DATA/keyring.json"
NOW=2026-03-01T12:00:00Z
NOW_MS=1772366400000
PY=/usr/bin/python3

setup_file() {
	# events.jsonl as cnt.RawEvent Avro, written by python3-avro.
	"$PY" - "$BATS_TEST_DIRNAME/../lib/model/schemas/raw_event.avsc" "$DATA/events.jsonl" \
		"$BATS_FILE_TMPDIR/events.avro" <<'EOF'
import datetime, json, sys
import avro.schema
from avro.datafile import DataFileWriter
from avro.io import DatumWriter

sch = json.load(open(sys.argv[1]))
for f in sch["fields"]:          # python avro would want datetimes
    if isinstance(f["type"], dict):
        f["type"].pop("logicalType", None)
schema = avro.schema.parse(json.dumps(sch))

def ms(t):
    if isinstance(t, int):
        return t
    d = datetime.datetime.fromisoformat(t)
    return int(round(d.timestamp() * 1000))

with open(sys.argv[3], "wb") as out:
    w = DataFileWriter(out, DatumWriter(), schema, codec="deflate")
    for line in open(sys.argv[2], encoding="utf-8"):
        e = json.loads(line)
        e["event_time"] = ms(e["event_time"])
        e["origin"] = e.get("origin", "backend").upper()
        e.setdefault("attrs", {})
        w.append(e)
    w.close()
EOF
}

setup() {
	set -o pipefail
}

# one [--arg N V ...] FILTER [FILE]: the input holds exactly one JSON value
# and FILTER is true of it (plain `jq -e` passes on an empty input).
one() {
	local opts=() files=() f='' have=0
	while [ $# -gt 0 ]; do
		case $1 in
		--arg | --argjson | --slurpfile) opts+=("$1" "$2" "$3"); shift 3 ;;
		*)
			if [ "$have" -eq 0 ]; then f=$1; have=1; else files+=("$1"); fi
			shift ;;
		esac
	done
	jq -e -s "${opts[@]}" "length == 1 and (.[0] | $f)" "${files[@]}"
}

# A valid event, changed by the jq filter $1 (e.g. '.delta = 7'), as one
# compact JSON line.
ev() {
	jq -nc '{idempotency_key: "bad", tenant_id: "acme", counter_id: "distance_m",
		member_ref: "m-1", delta: 5, event_time: "2026-03-01T11:00:00Z"} | '"${1:-.}"
}

# The idempotency keys of an output file, comma-separated, in order.
keys_of() {
	cnt-cat "$1" | jq -r .idempotency_key | paste -sd, -
}

# expect_reject REASON FIELD MESSAGE-PART BAD-LINE [option ...]
# Ingests a batch: a good event, BAD-LINE, another good event.  BAD-LINE
# must be rejected at line 2 with REASON naming FIELD ('' when no field is
# named) and a message containing MESSAGE-PART; both good events must be
# admitted, and the stats must count the reject under REASON.
expect_reject() {
	local reason=$1 field=$2 msg=$3 bad=$4 d=$BATS_TEST_TMPDIR
	shift 4
	{
		ev '.idempotency_key = "g1"'
		printf '%s\n' "$bad"
		ev '.idempotency_key = "g2" | .member_ref = "m-2"'
	} >"$d/in.jsonl"
	run cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -o "$d/out.avro" -r "$d/rej.jsonl" \
		--stats "$d/st.json" "$@" "$d/in.jsonl"
	echo "$output"
	cat "$d/rej.jsonl"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ "$(wc -l <"$d/rej.jsonl")" -eq 1 ]
	one --arg in "$d/in.jsonl" --arg r "$reason" --arg f "$field" --arg raw "$bad" '
		.input == $in and .line == 2 and .reason == $r and .raw == $raw and
		(if $f == "" then has("field") | not else .field == $f end)' "$d/rej.jsonl"
	jq -r .message "$d/rej.jsonl" | grep -F -- "$msg"
	[ "$(keys_of "$d/out.avro")" = g1,g2 ]
	one --arg r "$reason" '.in == 3 and .out == 2 and .rejected == 1 and
		.duplicates == 0 and .balanced and .rejected_by_reason[$r] == 1 and
		([.rejected_by_reason[]] | add) == 1' "$d/st.json"
}

# ---- malformed ----------------------------------------------------------

@test "malformed: a line that is not JSON" {
	expect_reject malformed '' 'column' '{"idempotency_key":"b1","tenant_id":'
}

@test "malformed: trailing garbage after the object" {
	expect_reject malformed '' 'trailing' "$(ev) x"
}

@test "malformed: a JSON value that is not an object" {
	expect_reject malformed '' "expected '{'" '["idempotency_key","b1"]'
}

@test "malformed: CSV rows with too few and too many cells" {
	local d=$BATS_TEST_TMPDIR
	cat >"$d/in.csv" <<-'EOF'
		idempotency_key,tenant_id,counter_id,member_ref,delta,event_time
		c1,acme,distance_m,m-1,1,2026-03-01T11:00:00Z
		c2,acme,distance_m,m-1,1
		c3,acme,distance_m,m-1,1,2026-03-01T11:00:00Z,extra
		c4,acme,distance_m,m-1,1,2026-03-01T11:00:00Z
	EOF
	run cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -o "$d/out.avro" -r "$d/rej.jsonl" --stats "$d/st.json" "$d/in.csv"
	cat "$d/rej.jsonl"
	[ "$status" -eq 0 ]
	[ "$(jq -c '[.line, .reason, has("field")]' "$d/rej.jsonl" | paste -sd' ' -)" = \
		'[3,"malformed",false] [4,"malformed",false]' ]
	jq -r .message "$d/rej.jsonl" | grep -q 'row has 5 cells, the header has 6'
	jq -r .message "$d/rej.jsonl" | grep -q 'row has 7 cells, the header has 6'
	[ "$(jq -r .raw "$d/rej.jsonl" | sed -n 1p)" = 'c2,acme,distance_m,m-1,1' ]
	[ "$(keys_of "$d/out.avro")" = c1,c4 ]
	one '.in == 4 and .out == 2 and .rejected_by_reason.malformed == 2 and .balanced' "$d/st.json"
}

# ---- missing_field ------------------------------------------------------

@test "missing_field: idempotency_key" {
	expect_reject missing_field idempotency_key "'idempotency_key' is required" "$(ev 'del(.idempotency_key)')"
}

@test "missing_field: tenant_id" {
	expect_reject missing_field tenant_id "'tenant_id' is required" "$(ev 'del(.tenant_id)')"
}

@test "missing_field: counter_id" {
	expect_reject missing_field counter_id "'counter_id' is required" "$(ev 'del(.counter_id)')"
}

@test "missing_field: member_ref" {
	expect_reject missing_field member_ref "'member_ref' is required" "$(ev 'del(.member_ref)')"
}

@test "missing_field: event_time (null is absent)" {
	expect_reject missing_field event_time "'event_time' is required" "$(ev '.event_time = null')"
}

@test "missing_field: delta of an exact counter (a unique counter needs none)" {
	expect_reject missing_field delta "exact counter 'acme/distance_m'" "$(ev 'del(.delta)')"
	# The same shape for a unique-type counter is one observation.
	ev 'del(.delta) | .counter_id = "viewers" | .item = "u-1"' |
		cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -c null | cnt-cat | one '.delta == 1'
}

# ---- bad_field ----------------------------------------------------------

@test "bad_field: delta given as a string" {
	expect_reject bad_field delta 'expected an integer, got a string' "$(ev '.delta = "5"')"
}

@test "bad_field: delta with a fraction" {
	expect_reject bad_field delta 'fraction' "$(ev '.delta = 1.5')"
}

@test "bad_field: delta 2^63 overflows" {
	local bad
	bad=$(ev '.delta = 0' | sed 's/"delta":0/"delta":9223372036854775808/')
	expect_reject bad_field delta 'signed 64-bit range' "$bad"
}

@test "bad_field: idempotency_key of 129 bytes (128 is accepted)" {
	expect_reject bad_field idempotency_key '129 bytes long; it must be 1 to 128' "$(ev '.idempotency_key = "k" * 129')"
	ev '.idempotency_key = "k" * 128' | cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -c null |
		cnt-cat | one '.idempotency_key | length == 128'
}

@test "bad_field: empty idempotency_key" {
	expect_reject bad_field idempotency_key '0 bytes long' "$(ev '.idempotency_key = ""')"
}

@test "bad_field: event_time without an offset" {
	expect_reject bad_field event_time 'RFC 3339' "$(ev '.event_time = "2026-03-01T11:00:00"')"
}

@test "bad_field: event_time that is no date" {
	expect_reject bad_field event_time 'RFC 3339' "$(ev '.event_time = "2026-02-30T11:00:00Z"')"
}

@test "bad_field: origin partner" {
	expect_reject bad_field origin '"partner"' "$(ev '.origin = "partner"')"
}

@test "bad_field: attrs value that is not a string" {
	expect_reject bad_field attrs "'region'" "$(ev '.attrs = {"region": 5}')"
}

@test "bad_field: attrs with an empty key" {
	expect_reject bad_field attrs '0-byte key' "$(ev '.attrs = {"": "x"}')"
}

@test "bad_field: 65 attrs (64 are accepted, kept in order)" {
	expect_reject bad_field attrs 'has 65 entries; at most 64 are allowed' \
		"$(ev '.attrs = ([range(65)] | map({key: "a\(.)", value: "v\(.)"}) | from_entries)')"
	ev '.attrs = ([range(64)] | map({key: "a\(.)", value: "v\\t\(.)"}) | from_entries)' |
		cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -c null | cnt-cat |
		one '.attrs | length == 64 and (keys_unsorted | .[0] == "a0" and .[63] == "a63") and .a63 == "v\\t63"'
}

# ---- definitions --------------------------------------------------------

@test "unknown_tenant" {
	expect_reject unknown_tenant tenant_id "tenant 'nobody' is not declared" "$(ev '.tenant_id = "nobody"')"
}

@test "unknown_tenant: a long id is cut before a character, never inside it, and marked cut" {
	# 63 bytes and a 3-byte euro sign: the 64-byte cut falls inside it
	local t
	t=$(printf 'a%.0s' {1..63})€
	expect_reject unknown_tenant tenant_id "tenant '${t:0:63}...' is not declared" "$(ev ".tenant_id = \"$t\"")"
}

@test "unknown_tenant: an id holding a NUL is cut there, and marked cut" {
	expect_reject unknown_tenant tenant_id "tenant 'a...' is not declared" "$(ev '.tenant_id = "a\u0000bbbb"')"
}

@test "unknown_counter: not declared for the tenant" {
	# steps exists, but for acme only
	expect_reject unknown_counter counter_id "not declared for tenant 'globex'" \
		"$(ev '.tenant_id = "globex" | .counter_id = "steps"')"
}

@test "unknown_counter: only version takes effect after --now" {
	expect_reject unknown_counter counter_id 'no version in effect' "$(ev '.counter_id = "not_yet"')"
	# From its effective_from on, it exists.
	ev '.counter_id = "not_yet" | .event_time = "2030-01-01T00:00:00Z"' |
		cnt-ingest -d "$DEFS" --keyring "$KR" --now 2030-01-01T00:00:00Z -c null | cnt-cat | one '.counter_version == 1'
}

@test "client_not_writable" {
	expect_reject client_not_writable origin "'acme/distance_m' v1 does not accept client" \
		"$(ev '.origin = "client" | .subject = "m-1"')"
}

@test "subject_mismatch: subject absent" {
	expect_reject subject_mismatch subject 'needs a subject' "$(ev '.counter_id = "steps" | .origin = "client"')"
}

@test "subject_mismatch: subject is another member" {
	expect_reject subject_mismatch subject 'must be its member_ref' \
		"$(ev '.counter_id = "steps" | .origin = "CLIENT" | .subject = "m-2"')"
	# a prefix of member_ref is not member_ref either
	expect_reject subject_mismatch subject 'must be its member_ref' \
		"$(ev '.counter_id = "steps" | .origin = "client" | .subject = "m-"')"
}

@test "item_required" {
	expect_reject item_required item "'acme/viewers' counts distinct items" "$(ev '.counter_id = "viewers"')"
}

@test "delta_out_of_bounds: upper bound accepted, one past rejected" {
	expect_reject delta_out_of_bounds delta 'delta 11 is outside [-10, 10]' \
		"$(ev '.counter_id = "bounded" | .delta = 11')"
	ev '.counter_id = "bounded" | .delta = 10' | cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -c null |
		cnt-cat | one '.delta == 10'
}

@test "delta_out_of_bounds: lower bound accepted, one past rejected" {
	expect_reject delta_out_of_bounds delta 'delta -11 is outside [-10, 10]' \
		"$(ev '.counter_id = "bounded" | .delta = -11')"
	ev '.counter_id = "bounded" | .delta = -10' | cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -c null |
		cnt-cat | one '.delta == -10'
}

# ---- time limits --------------------------------------------------------

# time_case OPTIONS... : ingests four events whose times are written in
# $BATS_TEST_TMPDIR/times (one per line), prints "LINE:REASON" for each reject
# and the accepted keys.
time_case() {
	local d=$BATS_TEST_TMPDIR i=0 t
	: >"$d/in.jsonl"
	while read -r t; do
		i=$((i + 1))
		# the time is put in as text: jq would round a large integer
		ev ".idempotency_key = \"t$i\" | .event_time = \"@T@\"" | sed "s|\"@T@\"|$t|" >>"$d/in.jsonl"
	done <"$d/times"
	cnt-ingest -d "$DEFS" --keyring "$KR" "$@" -o "$d/out.avro" -r "$d/rej.jsonl" "$d/in.jsonl"
	jq -r '"\(.line):\(.reason):\(.field)"' "$d/rej.jsonl"
	keys_of "$d/out.avro"
}

@test "too_old: exactly --max-past before --now is accepted, 1 ms more is not" {
	# --now 2026-03-01T12:00:00Z, --max-past 36h: the limit is 2026-02-28T00:00:00Z
	cat >"$BATS_TEST_TMPDIR/times" <<-'EOF'
		"2026-02-28T00:00:00Z"
		"2026-02-27T23:59:59.999Z"
		1772236800000
		1772236799999
	EOF
	run time_case --now "$NOW" --max-past 36h
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "2:too_old:event_time
4:too_old:event_time
t1,t3" ]
	# The message does not round the overshoot away.
	jq -r .message "$BATS_TEST_TMPDIR/rej.jsonl" | grep -q '129600.001 s before the ingest time; the limit is 129600 s'
}

@test "in_future: exactly --max-future after --now is accepted, 1 ms more is not" {
	# --now 2026-03-01T12:00:00.500Z, --max-future 5m: the limit is 12:05:00.500
	cat >"$BATS_TEST_TMPDIR/times" <<-'EOF'
		"2026-03-01T12:05:00.500Z"
		"2026-03-01T12:05:00.501Z"
		"2026-03-01T13:05:00.500+01:00"
		1772366700501
	EOF
	run time_case --now 1772366400500 --max-future 5m
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "2:in_future:event_time
4:in_future:event_time
t1,t3" ]
	jq -r .message "$BATS_TEST_TMPDIR/rej.jsonl" | grep -q '300001 ms after the ingest time; the limit is 300000 ms'
}

@test "default limits: 7 days back and 60 s ahead, inclusive" {
	cat >"$BATS_TEST_TMPDIR/times" <<-'EOF'
		"2026-02-22T12:00:00Z"
		"2026-02-22T11:59:59.999Z"
		"2026-03-01T12:01:00Z"
		"2026-03-01T12:01:00.001Z"
	EOF
	run time_case --now "$NOW"
	echo "$output"
	[ "$output" = "2:too_old:event_time
4:in_future:event_time
t1,t3" ]
}

@test "extreme event_time values are refused without arithmetic overflow" {
	cat >"$BATS_TEST_TMPDIR/times" <<-'EOF'
		-9223372036854775808
		9223372036854775807
		"0001-01-01T00:00:00Z"
		"9999-12-31T23:59:59.999Z"
	EOF
	run time_case --now "$NOW"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "1:too_old:event_time
2:in_future:event_time
3:too_old:event_time
4:in_future:event_time" ]
	# the distance is reported exactly (2^63 + NOW_MS ms)
	jq -r .message "$BATS_TEST_TMPDIR/rej.jsonl" | grep -q '^event_time is 9223373809221175.808 s before'
	# Limits so large that ingest time + limit leaves the int64 range: it
	# must saturate, not wrap around.
	run time_case --now "$NOW" --max-past 15250000000w1980000d --max-future 15250000000w1980000d
	echo "$output"
	[ "$output" = "1:too_old:event_time
t2,t3,t4" ]
	run time_case --now -1000000000000 --max-past 15250000000w1980000d
	echo "$output"
	[ "$output" = "2:in_future:event_time
4:in_future:event_time
t1,t3" ]
}

# ---- quota --------------------------------------------------------------

# The quota guards live traffic only (--live); with --now as well, the
# whole run is one ingest second, which makes the shedding deterministic.
@test "quota_exceeded: 3 per second admitted, the rest shed with a retry hint; duplicates stay duplicates" {
	local d=$BATS_TEST_TMPDIR i
	{
		for i in 1 2 3 4 5; do ev ".tenant_id = \"busy\" | .counter_id = \"clicks\" | .idempotency_key = \"q$i\""; done
		ev '.tenant_id = "busy" | .counter_id = "clicks" | .idempotency_key = "q1"'   # line 6: duplicate
		ev '.tenant_id = "busy" | .counter_id = "clicks" | .idempotency_key = "q4"'   # line 7: shed again
		ev '.idempotency_key = "other-tenant"'                                        # line 8: not limited
	} >"$d/in.jsonl"
	run cnt-ingest -d "$DEFS" --keyring "$KR" --live --now 2026-03-01T12:00:00.250Z -o "$d/out.avro" -r "$d/rej.jsonl" \
		-D "$d/dup.jsonl" --stats "$d/st.json" "$d/in.jsonl"
	cat "$d/rej.jsonl" "$d/dup.jsonl"
	[ "$status" -eq 0 ]
	[ "$(keys_of "$d/out.avro")" = q1,q2,q3,other-tenant ]
	[ "$(jq -c '[.line, .reason, .retry_after_ms]' "$d/rej.jsonl" | paste -sd' ' -)" = \
		'[4,"quota_exceeded",750] [5,"quota_exceeded",750] [7,"quota_exceeded",750]' ]
	jq -r .message "$d/rej.jsonl" | grep -q "tenant 'busy' is over its quota of 3 events per second"
	jq -e -s 'length == 1 and .[0].line == 6 and .[0].reason == "duplicate" and .[0].duplicate_of.line == 1' "$d/dup.jsonl"
	one '.in == 8 and .out == 4 and .rejected == 3 and .duplicates == 1 and .balanced and
		.rejected_by_reason.quota_exceeded == 3' "$d/st.json"
}

@test "quota: a new ingest second has a new allowance (clock-free check with two runs)" {
	local d=$BATS_TEST_TMPDIR i
	for i in 1 2 3 4; do ev ".tenant_id = \"busy\" | .counter_id = \"clicks\" | .idempotency_key = \"q$i\""; done >"$d/in.jsonl"
	cnt-ingest -d "$DEFS" --keyring "$KR" --live --now 2026-03-01T12:00:00.999Z -o "$d/a.avro" -r "$d/rej.jsonl" "$d/in.jsonl"
	one '.retry_after_ms == 1' "$d/rej.jsonl"
	cnt-ingest -d "$DEFS" --keyring "$KR" --now 2026-03-01T12:00:01Z --live -o "$d/b.avro" -r "$d/rej.jsonl" "$d/in.jsonl"
	one '.retry_after_ms == 1000' "$d/rej.jsonl"
	[ "$(keys_of "$d/b.avro")" = q1,q2,q3 ]
}

@test "quota: a replay (no --live) is never shed, with --now or without, from a file or a pipe" {
	local d=$BATS_TEST_TMPDIR
	# 2000 events of a tenant allowed 3 a second: all in one ingest second
	# with --now, and within a second or two by the clock.
	jq -nc 'range(1; 2001) | {idempotency_key: "r\(.)", tenant_id: "busy", counter_id: "clicks",
		member_ref: "m-1", delta: 1, event_time: "2026-03-01T11:59:00Z"}' >"$d/in.jsonl"
	run --separate-stderr cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -o "$d/a.avro" --stats "$d/a.st" "$d/in.jsonl"
	[ "$status" -eq 0 ] && [ -z "$stderr" ]
	one '.in == 2000 and .out == 2000 and .rejected == 0' "$d/a.st"
	# by the clock, from a pipe, as `zstdcat archive | cnt-ingest` replays
	sed 's/"2026-03-01T11:59:00Z"/'"$(date +%s%3N)"'/' "$d/in.jsonl" |
		cnt-ingest -d "$DEFS" --keyring "$KR" --stats "$d/b.st" - 2>"$d/err" >"$d/b.avro"
	[ ! -s "$d/err" ]
	one '.in == 2000 and .out == 2000 and .rejected_by_reason.quota_exceeded == 0' "$d/b.st"
}

@test "quota: --live by the clock sheds what exceeds the quota in each ingest second" {
	local d=$BATS_TEST_TMPDIR now
	now=$(date +%s%3N)
	jq -nc --argjson t "$now" 'range(1; 2001) | {idempotency_key: "l\(.)", tenant_id: "busy",
		counter_id: "clicks", member_ref: "m-1", delta: 1, event_time: $t}' |
		cnt-ingest -d "$DEFS" --keyring "$KR" --live -o "$d/out.avro" -r "$d/rej.jsonl" --stats "$d/st.json" -
	# However the run fell across second boundaries: at most 3 accepted per
	# ingest second, every other one shed with a hint within that second.
	cnt-cat "$d/out.avro" | jq -s -e 'length >= 3 and
		(group_by(.ingest_time / 1000 | floor) | all(length <= 3))'
	jq -s -e 'all(.reason == "quota_exceeded" and .retry_after_ms >= 1 and
		.retry_after_ms <= 1000)' "$d/rej.jsonl"
	one --argjson rej "$(wc -l <"$d/rej.jsonl")" '.in == 2000 and .rejected == $rej and
		.out + .rejected == 2000 and .rejected > 1000 and .balanced' "$d/st.json"
}

# ---- duplicates and conservation ----------------------------------------

@test "duplicates within a batch: second and third copies name the first's line" {
	local d=$BATS_TEST_TMPDIR
	{
		ev '.idempotency_key = "d1"'
		ev '.idempotency_key = "x1"'
		ev '.idempotency_key = "d1" | .delta = 99'
		ev '.idempotency_key = "d1" | .counter_id = "steps"'   # another counter: not a duplicate
		ev '.idempotency_key = "d1" | .member_ref = "m-9"'
	} >"$d/in.jsonl"
	run cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -o "$d/out.avro" -D "$d/dup.jsonl" --stats "$d/st.json" "$d/in.jsonl"
	cat "$d/dup.jsonl"
	[ "$status" -eq 0 ]
	[ -z "$output" ]   # duplicates are not rejects
	[ "$(cnt-cat "$d/out.avro" | jq -c '[.idempotency_key, .counter_id, .delta]' | paste -sd' ' -)" = \
		'["d1","distance_m",5] ["x1","distance_m",5] ["d1","steps",5]' ]
	[ "$(jq -c '[.input == $in, .line, .reason, .duplicate_of.input == $in, .duplicate_of.line]' \
		--arg in "$d/in.jsonl" "$d/dup.jsonl" | paste -sd' ' -)" = \
		'[true,3,"duplicate",true,1] [true,5,"duplicate",true,1]' ]
	[ "$(jq -r .raw "$d/dup.jsonl" | sed -n 1p)" = "$(sed -n 3p "$d/in.jsonl")" ]
	one '.in == 5 and .out == 3 and .duplicates == 2 and .rejected == 0 and .balanced' "$d/st.json"
}

@test "duplicates across two input files of one run" {
	local d=$BATS_TEST_TMPDIR
	{ ev '.idempotency_key = "a1"'; ev '.idempotency_key = "shared"'; } >"$d/a.jsonl"
	{ ev '.idempotency_key = "shared" | .delta = 7'; ev '.idempotency_key = "b2"'; } >"$d/b.jsonl"
	cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -o "$d/out.avro" -D "$d/dup.jsonl" "$d/a.jsonl" "$d/b.jsonl"
	cat "$d/dup.jsonl"
	[ "$(keys_of "$d/out.avro")" = a1,shared,b2 ]
	jq -e -s --arg a "$d/a.jsonl" --arg b "$d/b.jsonl" 'length == 1 and .[0].input == $b and
		.[0].line == 1 and .[0].duplicate_of == {input: $a, line: 2}' "$d/dup.jsonl"
	# An Avro first copy is named by its record number.
	cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -o "$d/out2.avro" -D "$d/dup2.jsonl" \
		"$BATS_FILE_TMPDIR/events.avro" "$DATA/events.jsonl"
	[ "$(cnt-cat --count "$d/out2.avro")" -eq 8 ]
	jq -e -s --arg a "$BATS_FILE_TMPDIR/events.avro" 'length == 8 and
		all(.[]; .reason == "duplicate" and .duplicate_of == {input: $a, record: .line})' "$d/dup2.jsonl"
}

@test "an Avro record sent to the duplicate stream carries itself as JSON, between accepted ones" {
	local d=$BATS_TEST_TMPDIR
	# lines 2, 5 and 7 first: the Avro copy's records 2, 5 and 7 are
	# duplicates, the others accepted around them
	sed -n '2p;5p;7p' "$DATA/events.jsonl" >"$d/first.jsonl"
	cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -o "$d/out.avro" -D "$d/dup.jsonl" \
		"$d/first.jsonl" "$BATS_FILE_TMPDIR/events.avro"
	[ "$(cnt-cat --count "$d/out.avro")" -eq 8 ]
	[ "$(jq -r .record "$d/dup.jsonl" | paste -sd, -)" = 2,5,7 ]
	# each raw is its own record, as the JSON line it was written from
	jq -e -s --slurpfile src "$DATA/events.jsonl" 'length == 3 and all(.[];
		.raw.idempotency_key == $src[.record - 1].idempotency_key and
		.raw.member_ref == $src[.record - 1].member_ref and .raw.delta == $src[.record - 1].delta)' "$d/dup.jsonl"
}

@test "duplicates across four inputs, one of them empty: each names its first copy's input and line" {
	local d=$BATS_TEST_TMPDIR
	{ ev '.idempotency_key = "a1"'; printf '\n\n'; ev '.idempotency_key = "a4"'; } >"$d/a.jsonl"
	: >"$d/empty.jsonl"
	{ ev '.idempotency_key = "b1"'; ev '.idempotency_key = "a4"'; ev '.idempotency_key = "b3"'; } >"$d/b.jsonl"
	{ ev '.idempotency_key = "b3"'; ev '.idempotency_key = "a1"'; ev '.idempotency_key = "b1"'; } >"$d/c.jsonl"
	cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -o "$d/out.avro" -D "$d/dup.jsonl" \
		"$d/a.jsonl" "$d/empty.jsonl" "$d/b.jsonl" "$d/c.jsonl"
	[ "$(keys_of "$d/out.avro")" = a1,a4,b1,b3 ]
	[ "$(jq -r '"\(.input | sub(".*/"; "")):\(.line) \(.duplicate_of.input | sub(".*/"; "")):\(.duplicate_of.line)"' \
		"$d/dup.jsonl" | paste -sd' ' -)" = \
		'b.jsonl:2 a.jsonl:4 c.jsonl:1 b.jsonl:3 c.jsonl:2 a.jsonl:1 c.jsonl:3 b.jsonl:1' ]
	# an Avro input after an empty one: the Avro input is named, by record
	cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -o "$d/out2.avro" -D "$d/dup2.jsonl" \
		"$d/empty.jsonl" "$BATS_FILE_TMPDIR/events.avro" "$DATA/events.jsonl"
	jq -e -s --arg a "$BATS_FILE_TMPDIR/events.avro" 'length == 8 and
		all(.[]; .duplicate_of == {input: $a, record: .line})' "$d/dup2.jsonl"
}

@test "a duplicate of a rejected event is judged afresh" {
	local d=$BATS_TEST_TMPDIR
	{
		ev '.idempotency_key = "r1" | .counter_id = "bounded" | .delta = 11'
		ev '.idempotency_key = "r1" | .counter_id = "bounded" | .delta = 12'
		ev '.idempotency_key = "r1" | .counter_id = "bounded" | .delta = 3'
		ev '.idempotency_key = "r1" | .counter_id = "bounded" | .delta = 4'
	} >"$d/in.jsonl"
	cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -o "$d/out.avro" -r "$d/rej.jsonl" -D "$d/dup.jsonl" \
		--stats "$d/st.json" "$d/in.jsonl"
	[ "$(jq -c '[.line, .reason]' "$d/rej.jsonl" | paste -sd' ' -)" = \
		'[1,"delta_out_of_bounds"] [2,"delta_out_of_bounds"]' ]
	[ "$(cnt-cat "$d/out.avro" | jq -c '[.idempotency_key, .delta]')" = '["r1",3]' ]
	jq -e -s 'length == 1 and .[0].line == 4 and .[0].duplicate_of.line == 3' "$d/dup.jsonl"
	one '.rejected == 2 and .duplicates == 1 and .out == 1 and .balanced' "$d/st.json"
}

@test "conservation: in = out + rejected + duplicate, counted from the streams themselves" {
	local d=$BATS_TEST_TMPDIR in out rej dup
	run cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -o "$d/out.avro" -r "$d/rej.jsonl" -D "$d/dup.jsonl" \
		--stats "$d/st.json" -v "$DATA/mixed.jsonl"
	[ "$status" -eq 0 ]
	# Independent counts: non-blank input lines, decoded records, stream lines.
	in=$(grep -cv '^[[:space:]]*$' "$DATA/mixed.jsonl")
	out=$(cnt-cat --count "$d/out.avro")
	rej=$(wc -l <"$d/rej.jsonl")
	dup=$(wc -l <"$d/dup.jsonl")
	[ "$in" -eq $((out + rej + dup)) ]
	[ "$rej" -gt 0 ] && [ "$dup" -gt 0 ] && [ "$out" -gt 0 ]
	one --argjson in "$in" --argjson out "$out" --argjson rej "$rej" --argjson dup "$dup" '
		.in == $in and .out == $out and .rejected == $rej and .duplicates == $dup and
		.balanced == true and ([.rejected_by_reason[]] | add) == $rej and
		.blank_lines == 2 and .inputs == [{name: .inputs[0].name, format: "json", records: $in}]' "$d/st.json"
	# per reason, from the reject stream
	jq -s 'group_by(.reason) | map({key: .[0].reason, value: length}) | from_entries' "$d/rej.jsonl" >"$d/by.json"
	one --slurpfile by "$d/by.json" '.rejected_by_reason | with_entries(select(.value > 0)) == $by[0]' "$d/st.json"
	# per counter: accepted from the output, duplicates from the -D stream
	cnt-cat "$d/out.avro" | jq -s 'map("\(.tenant_id)/\(.counter_id)") | group_by(.) |
		map({key: .[0], value: length}) | from_entries' >"$d/acc.json"
	jq -s '[.[].raw | fromjson | "\(.tenant_id)/\(.counter_id)"] | group_by(.) |
		map({key: .[0], value: length}) | from_entries' "$d/dup.jsonl" >"$d/dups.json"
	one --slurpfile a "$d/acc.json" --slurpfile u "$d/dups.json" '
		all(.counters[]; "\(.tenant_id)/\(.counter_id)" as $k |
			.accepted == ($a[0][$k] // 0) and .duplicates == ($u[0][$k] // 0) and
			(.dedup_hit_rate - (if .accepted + .duplicates > 0 then .duplicates / (.accepted + .duplicates) else 0 end)
				| fabs) < 0.000001)' "$d/st.json"
	# the counter whose id needs JSON escapes is there, spelled right
	one '[.counters[] | select(.counter_id == "say \"hi\" \\o")] | length == 1 and .[0].accepted == 1 and .[0].duplicates == 1' "$d/st.json"
	# -v: one summary line
	[ "$output" = "cnt-ingest: in $in, out $out, rejected $rej, duplicate $dup (dedup hit rate 40.00%)" ]
}

# ---- stamping -----------------------------------------------------------

@test "counter_version: the version in effect at --now is stamped, with its bounds" {
	local d=$BATS_TEST_TMPDIR
	{
		ev '.idempotency_key = "v1" | .counter_id = "versioned" | .delta = 50 | .event_time = "2026-05-31T23:00:00Z"'
		ev '.idempotency_key = "v2" | .counter_id = "versioned" | .delta = 500 | .event_time = "2026-05-31T23:00:00Z"'
	} >"$d/in.jsonl"
	cnt-ingest -d "$DEFS" --keyring "$KR" --now 2026-05-31T23:59:59.999Z -o "$d/a.avro" -r "$d/rej.jsonl" "$d/in.jsonl"
	[ "$(cnt-cat "$d/a.avro" | jq -c '[.idempotency_key, .counter_version]')" = '["v1",1]' ]
	one '.line == 2 and .reason == "delta_out_of_bounds"' "$d/rej.jsonl"
	grep -q 'v1' "$d/rej.jsonl"
	# effective_from 2026-06-01T00:00:00Z itself is in version 2
	cnt-ingest -d "$DEFS" --keyring "$KR" --now 2026-06-01T00:00:00Z -o "$d/b.avro" -r "$d/rej.jsonl" "$d/in.jsonl"
	[ "$(cnt-cat "$d/b.avro" | jq -c '[.idempotency_key, .counter_version]' | paste -sd' ' -)" = \
		'["v1",2] ["v2",2]' ]
	[ ! -s "$d/rej.jsonl" ]
}

@test "ingest_time is --now; without --now it is the clock" {
	local d=$BATS_TEST_TMPDIR before after
	{ ev '.idempotency_key = "i1"'; ev '.idempotency_key = "i2"'; } |
		cnt-ingest -d "$DEFS" --keyring "$KR" --now 2026-03-01T12:30:00.123+01:00 -o "$d/a.avro"
	cnt-cat "$d/a.avro" | jq -e -s 'length == 2 and all(.[]; .ingest_time == 1772364600123)'
	before=$(date +%s%3N)
	ev ".event_time = $before" | cnt-ingest -d "$DEFS" --keyring "$KR" -o "$d/b.avro"
	after=$(date +%s%3N)
	cnt-cat "$d/b.avro" | one --argjson lo "$before" --argjson hi "$after" '.ingest_time >= $lo and .ingest_time <= $hi'
}

@test "event_id: 32 lowercase hex, the same for (tenant, counter, key) across runs and inputs" {
	local d=$BATS_TEST_TMPDIR
	cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -o "$d/a.avro" "$DATA/events.jsonl"
	cnt-cat "$d/a.avro" | jq -e -s 'length == 8 and all(.[]; .event_id | test("^[0-9a-f]{32}$")) and
		(map(.event_id) | unique | length) == 8'
	# another run, another day, another member and delta: the same id for e1
	ev '.idempotency_key = "e1" | .member_ref = "other" | .delta = 1' |
		cnt-ingest -d "$DEFS" --keyring "$KR" --now 2026-03-02T00:00:00Z -o "$d/b.avro"
	[ "$(cnt-cat "$d/b.avro" | jq -r .event_id)" = "$(cnt-cat "$d/a.avro" | jq -r 'select(.idempotency_key == "e1") | .event_id')" ]
	# the same key for another counter or another tenant is another event
	{
		ev '.idempotency_key = "e1" | .counter_id = "steps"'
		ev '.idempotency_key = "e1" | .tenant_id = "globex" | .counter_id = "wins"'
	} | cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -o "$d/c.avro"
	cat "$d/a.avro" "$d/b.avro" "$d/c.avro" | cnt-cat | jq -e -s 'map(.event_id) | unique | length == 10'
}

@test "origin defaults to BACKEND; signature is carried as bytes; attrs are carried in order" {
	local d=$BATS_TEST_TMPDIR
	{
		ev '.idempotency_key = "o1"'
		ev '.idempotency_key = "o2" | .counter_id = "steps" | .origin = "Client" | .subject = "m-1" |
			.attrs = {"region": "eu-west", "device": "ios", "日本": "😀", "a": ""}' | cnt-sign --key "$DATA/acme-t1.key"
	} >"$d/in.jsonl"
	cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -o "$d/out.avro" "$d/in.jsonl"
	cnt-cat "$d/out.avro" >"$d/out.jsonl"
	jq -e -s '.[0].origin == "BACKEND" and .[0].signature == null and .[0].subject == null and .[0].attrs == {} and
		.[1].origin == "CLIENT" and .[1].subject == "m-1"' "$d/out.jsonl"
	jq -e -s '.[1].attrs | keys_unsorted == ["region", "device", "日本", "a"] and
		. == {"region": "eu-west", "device": "ios", "日本": "😀", "a": ""}' "$d/out.jsonl"
	# bytes print as one code point per byte (Avro JSON): the bytes of the signature field
	"$PY" -c 'import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
s = json.loads(open(sys.argv[2]).readlines()[1])["signature"]
assert s.startswith("ed25519:t1:") and r[1]["signature"].encode("latin-1") == s.encode("utf-8"), r[1]["signature"]' "$d/out.jsonl" "$d/in.jsonl"
	cnt-cat --schema "$d/out.avro" | one '.fields[] | select(.name == "signature") | .type == ["null", "bytes"]'
}

# ---- determinism and formats --------------------------------------------

@test "determinism: the same input twice gives the same bytes (zstandard and null)" {
	local d=$BATS_TEST_TMPDIR c
	for c in zstandard null; do
		cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -c "$c" -o "$d/a.$c.avro" "$DATA/mixed.jsonl" "$DATA/events.jsonl" 2>/dev/null
		cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -c "$c" -o "$d/b.$c.avro" "$DATA/mixed.jsonl" "$DATA/events.jsonl" 2>/dev/null
		cmp "$d/a.$c.avro" "$d/b.$c.avro"
		cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -c "$c" "$DATA/mixed.jsonl" "$DATA/events.jsonl" 2>/dev/null >"$d/pipe.$c.avro"
		cmp "$d/a.$c.avro" "$d/pipe.$c.avro"
		cnt-cat --meta "$d/a.$c.avro" | one --arg c "$c" '.codec == $c'
	done
	[ "$(cnt-cat --count "$d/a.null.avro")" -eq 14 ]
}

@test "a header guessed at the first block and wrong: the blocks are moved after the right one, the same bytes as spooled" {
	local d=$BATS_TEST_TMPDIR c
	# 6,000 events of one counter (more than one 256 KiB block), then one
	# of another: the fingerprints in the header grow after the first block
	"$PY" - >"$d/late.jsonl" <<'PYEOF'
import json
for i in range(6000):
    print(json.dumps({"idempotency_key": "k%d" % i, "tenant_id": "acme", "counter_id": "distance_m",
        "member_ref": "m-%d" % (i % 50), "delta": i % 7, "event_time": 1772359200000 + i, "attrs": {"region": "eu"}}))
print(json.dumps({"idempotency_key": "late", "tenant_id": "globex", "counter_id": "wins",
    "member_ref": "m-1", "delta": 1, "event_time": 1772359200000}))
PYEOF
	for c in null zstandard; do
		# -o: a file of its own, the header guessed; "> file": write-only, spooled
		cnt-ingest -d "$DEFS" --now "$NOW" -c "$c" -o "$d/guessed.avro" "$d/late.jsonl"
		cnt-ingest -d "$DEFS" --now "$NOW" -c "$c" "$d/late.jsonl" >"$d/spooled.avro"
		CNT_GUESS_HEADER=0 cnt-ingest -d "$DEFS" --now "$NOW" -c "$c" -o "$d/off.avro" "$d/late.jsonl"
		cmp "$d/guessed.avro" "$d/spooled.avro"
		cmp "$d/guessed.avro" "$d/off.avro"
		cnt-cat --meta "$d/guessed.avro" |
			one '.metadata["cnt.fingerprints"] | fromjson | keys == ["acme/distance_m v1", "globex/wins v1"]'
		[ "$(cnt-cat --count "$d/guessed.avro")" -eq 6001 ]
	done
}

@test "two streams on one read-write standard output (cnt-dedup -D -, 1<>file): two whole containers, no guessed header" {
	local d=$BATS_TEST_TMPDIR
	"$PY" -c 'import json
for i in range(6000):
    print(json.dumps({"idempotency_key": "k%d" % i, "tenant_id": "acme", "counter_id": "distance_m",
        "member_ref": "m-%d" % (i % 50), "delta": i % 7, "event_time": 1772359200000 + i, "attrs": {"region": "eu"}}))' >"$d/ev.jsonl"
	cnt-ingest -d "$DEFS" --now "$NOW" -c null -o "$d/a.avro" "$d/ev.jsonl"
	# the events and their duplicates, each a deferred header, both on fd 1,
	# which the shell opened for reading and writing
	cnt-dedup -d "$DEFS" -c null -D - "$d/a.avro" "$d/a.avro" 1<>"$d/both.avro"
	cnt-dedup -d "$DEFS" -c null -D - "$d/a.avro" "$d/a.avro" >"$d/redirected.avro"
	cmp "$d/both.avro" "$d/redirected.avro"
	[ "$(cnt-cat --count "$d/both.avro")" -eq 12000 ]
}

@test "a guessed header whose blocks cannot be moved (the file size limit): exit 3, one line, no file left" {
	local d=$BATS_TEST_TMPDIR c s lim
	# one counter in the first block, six more at the end: the header grows
	# by some 2 KB when it is made again
	"$PY" - >"$d/late.jsonl" <<'PYEOF'
import json
for i in range(6000):
    print(json.dumps({"idempotency_key": "k%d" % i, "tenant_id": "acme", "counter_id": "distance_m",
        "member_ref": "m-%d" % (i % 50), "delta": i % 7, "event_time": 1772359200000 + i, "attrs": {"region": "eu"}}))
for t, c in (("globex", "wins"), ("globex", "likes"), ("acme", "likes"), ("acme", "bounded"),
             ("busy", "clicks"), ("initech", "score")):
    print(json.dumps({"idempotency_key": "late-" + c, "tenant_id": t, "counter_id": c,
        "member_ref": "m-1", "delta": 1, "event_time": 1772359200000}))
PYEOF
	cnt-ingest -d "$DEFS" --now "$NOW" -c null -o "$d/whole.avro" "$d/late.jsonl"
	s=$(stat -c %s "$d/whole.avro")
	# a limit (KiB) below the whole file but above the guessed one: the
	# blocks are written, and moving them up past the limit fails (EFBIG,
	# SIGXFSZ ignored)
	lim=$(( (s - 19) / 1024 ))
	run -3 --separate-stderr bash -c 'trap "" XFSZ; ulimit -f "$1"; shift; exec "$@"' - "$lim" \
		cnt-ingest -d "$DEFS" --now "$NOW" -c null -o "$d/out.avro" "$d/late.jsonl"
	[ "$stderr" = "cnt-ingest: '$d/out.avro': write error (moving the blocks after the header): File too large" ]
	[ -z "$output" ]
	[ ! -e "$d/out.avro" ]
	[ -z "$(find "$d" -name '.out.avro.tmp-*')" ]
	# with room for the whole file, the same bytes
	run -0 bash -c 'trap "" XFSZ; ulimit -f "$1"; shift; exec "$@"' - "$(( s / 1024 + 1 ))" \
		cnt-ingest -d "$DEFS" --now "$NOW" -c null -o "$d/out.avro" "$d/late.jsonl"
	cmp "$d/out.avro" "$d/whole.avro"
}

@test "formats: JSON lines, CSV and Avro forms of the same events give the same records" {
	local d=$BATS_TEST_TMPDIR f
	for f in "$DATA/events.jsonl" "$DATA/events.csv" "$BATS_FILE_TMPDIR/events.avro"; do
		cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -o "$d/out.${f##*.}.avro" -r "$d/rej.${f##*.}" \
			--stats "$d/st.${f##*.}" "$f"
		[ ! -s "$d/rej.${f##*.}" ]
		cnt-cat "$d/out.${f##*.}.avro" >"$d/out.${f##*.}.jsonl"
	done
	one '.inputs[0].format == "json" and .in == 8 and .out == 8' "$d/st.jsonl"
	one '.inputs[0].format == "csv" and .in == 8 and .out == 8' "$d/st.csv"
	one '.inputs[0].format == "avro" and .in == 8 and .out == 8' "$d/st.avro"
	cmp "$d/out.jsonl.jsonl" "$d/out.csv.jsonl"
	cmp "$d/out.jsonl.jsonl" "$d/out.avro.jsonl"
	# ... and the records are what the JSON text says, computed by python
	"$PY" - "$DATA/events.jsonl" "$d/out.jsonl.jsonl" "$NOW_MS" <<-'EOF'
		import datetime, json, sys
		inp = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
		out = [json.loads(l) for l in open(sys.argv[2], encoding="utf-8")]
		assert len(inp) == len(out) == 8
		def ms(t):
		    if isinstance(t, int):
		        return t
		    return int(round(datetime.datetime.fromisoformat(t).timestamp() * 1000))
		for e, r in zip(inp, out):
		    want = {
		        "idempotency_key": e["idempotency_key"], "tenant_id": e["tenant_id"],
		        "counter_id": e["counter_id"], "counter_version": 1,
		        "member_ref": e["member_ref"], "item": e.get("item"),
		        "delta": e.get("delta", 1), "event_time": ms(e["event_time"]),
		        "ingest_time": int(sys.argv[3]), "origin": e.get("origin", "backend").upper(),
		        "subject": e.get("subject"), "signature": e.get("signature"),
		        "retracts": None, "retraction_id": None, "attrs": e.get("attrs", {}),
		    }
		    got = dict(r)
		    del got["event_id"]
		    assert got == want, (got, want)
	EOF
}

@test "formats: CSV positions are physical line numbers; blank lines are skipped, not counted" {
	local d=$BATS_TEST_TMPDIR
	printf '%s\n' 'idempotency_key,tenant_id,counter_id,member_ref,delta,event_time,attrs.region' \
		'c1,acme,distance_m,"two' 'lines, with a comma",1,2026-03-01T11:00:00Z,"eu,west"' '' \
		'c2,acme,distance_m,m-2,x,2026-03-01T11:00:00Z,' '' '' \
		'c3,acme,nothing,m-3,1,2026-03-01T11:00:00Z,' >"$d/in.csv"
	cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -o "$d/out.avro" -r "$d/rej.jsonl" --stats "$d/st.json" "$d/in.csv"
	cat "$d/rej.jsonl"
	[ "$(jq -c '[.line, .reason, .field]' "$d/rej.jsonl" | paste -sd' ' -)" = \
		'[5,"bad_field","delta"] [8,"unknown_counter","counter_id"]' ]
	cnt-cat "$d/out.avro" | one '.member_ref == "two\nlines, with a comma" and .attrs == {region: "eu,west"}'
	one '.in == 3 and .inputs[0].records == 3 and .balanced' "$d/st.json"
}

@test "formats: JSON blank and whitespace-only lines are skipped and not counted as records" {
	local d=$BATS_TEST_TMPDIR
	{ echo; ev '.idempotency_key = "j1"'; printf ' \t\r\n\n'; ev '.delta = "x"'; echo; } >"$d/in.jsonl"
	cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -o "$d/out.avro" -r "$d/rej.jsonl" --stats "$d/st.json" "$d/in.jsonl"
	one '.line == 5 and .reason == "bad_field"' "$d/rej.jsonl"
	one '.in == 2 and .out == 1 and .inputs[0].records == 2 and .blank_lines == 4 and .balanced' "$d/st.json"
}

@test "formats: raw.avro and raw.extra-fields.avro (python3-avro) admit the same events" {
	local d=$BATS_TEST_TMPDIR f
	# The fixtures' event times are in 2023 and as early as year 1.
	for f in raw raw.extra-fields; do
		cnt-ingest -d "$DEFS" --keyring "$KR" --now 2023-11-30T00:00:00Z --max-past 20000d -o "$d/$f.avro" \
			-r "$d/$f.rej" --stats "$d/$f.st" "$FIX/$f.avro"
		cnt-cat "$d/$f.avro" >"$d/$f.out"
		jq -c '[.record, .reason, .field]' "$d/$f.rej" >"$d/$f.reasons"
	done
	cmp "$d/raw.out" "$d/raw.extra-fields.out"
	cmp "$d/raw.reasons" "$d/raw.extra-fields.reasons"
	# The fixtures' signatures are hex text, not signature fields
	# (cnt-keyring(5)): the six backend events that would pass every other
	# check carry one, so they are rejected bad_signature and nothing is
	# admitted; every record's decoding is checked through the rejects.
	one '.in == 20 and .balanced and .inputs[0].format == "avro" and .out == 0 and .rejected == 20
		and .rejected_by_reason.bad_signature == 6' "$d/raw.st"
	# Rejects carry the record decoded as JSON, record numbers are 1-based.
	jq -e -s --slurpfile exp "$FIX/raw.expected.jsonl" 'length == 20 and all(.[]; .raw == $exp[.record - 1])' "$d/raw.rej"
	[ "$(jq -r 'select(.reason == "bad_signature") | .raw.signature' "$d/raw.rej" | paste -sd' ')" = \
		"3178e3dd151e3ab226 1829dead 649eae138f b42d6205be0dbe7842 643b995f1c87 2c47517a75a3f119b9d9" ]
}

@test "formats: detected from the extension, sniffed on standard input, or forced with -f" {
	local d=$BATS_TEST_TMPDIR
	cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -c null -o "$d/ref.avro" "$DATA/events.jsonl"
	# stdin: JSON lines, CSV, Avro, sniffed
	cat "$DATA/events.jsonl" | cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -c null --stats "$d/s1" >"$d/1.avro"
	cat "$DATA/events.csv" | cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -c null --stats "$d/s2" >"$d/2.avro"
	cat "$BATS_FILE_TMPDIR/events.avro" | cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -c null --stats "$d/s3" - >"$d/3.avro"
	# forced: CSV on stdin, JSON in a file named .csv
	cat "$DATA/events.csv" | cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -c null -f csv --stats "$d/s4" >"$d/4.avro"
	cp "$DATA/events.jsonl" "$d/looks-like.csv"
	cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -c null -f json --stats "$d/s5" -o "$d/5.avro" "$d/looks-like.csv"
	# no telling extension: sniffed
	cp "$DATA/events.csv" "$d/events.txt"
	cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -c null --stats "$d/s6" -o "$d/6.avro" "$d/events.txt"
	for i in 1 2 3 4 5 6; do cmp "$d/ref.avro" "$d/$i.avro"; done
	[ "$(jq -r '.inputs[0] | "\(.name) \(.format)"' "$d/s1" "$d/s2" "$d/s3" "$d/s4" "$d/s5" "$d/s6" | paste -sd, -)" = \
		"- json,- csv,- avro,- csv,$d/looks-like.csv json,$d/events.txt csv" ]
	# A JSON file read as CSV is not silently accepted: its "header" is bad.
	run --separate-stderr cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -f csv -o "$d/7.avro" "$DATA/events.jsonl"
	[ "$status" -eq 2 ]
	[[ "$stderr" == "cnt-ingest: '$DATA/events.jsonl': line 1: CSV header: "* ]]
	[ ! -e "$d/7.avro" ]
}

# ---- outputs and errors -------------------------------------------------

@test "-o: the file appears only when complete, and no temporary file is left" {
	local d=$BATS_TEST_TMPDIR/o pid i
	mkdir "$d"
	mkfifo "$d/in.jsonl"
	timeout 20 cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -o "$d/out.avro" "$d/in.jsonl" 3>&- &
	pid=$!
	exec 7<>"$d/in.jsonl"   # read-write: never blocks, even if cnt-ingest died
	ev '.idempotency_key = "p1"' >&7
	# running: only a hidden temporary file (waits for a slow start)
	for i in $(seq 100); do
		ls -A "$d" | grep -E '^\.out\.avro\.' >/dev/null && break
		sleep 0.1
	done
	ls -A "$d" | grep -E '^\.out\.avro\.' >/dev/null
	[ ! -e "$d/out.avro" ]
	ev '.idempotency_key = "p2"' >&7
	exec 7>&-
	wait "$pid"
	rm "$d/in.jsonl"
	[ "$(ls -A "$d")" = out.avro ]
	[ "$(keys_of "$d/out.avro")" = p1,p2 ]
}

# fatal_case OPTIONS...: the run must fail with status 2, one line on
# standard error starting "cnt-ingest: ", and leave nothing in $D (no output,
# reject, duplicate or stats file, no temporary file).
fatal_case() {
	D=$BATS_TEST_TMPDIR/out
	mkdir -p "$D"
	run --separate-stderr cnt-ingest -o "$D/out.avro" -r "$D/rej.jsonl" -D "$D/dup.jsonl" --stats "$D/st.json" "$@"
	echo "status $status; stderr: $stderr"
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	[ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
	[[ "$stderr" == "cnt-ingest: "* ]]
	[ -z "$(ls -A "$D")" ]
}

@test "fatal: a second input that does not exist" {
	fatal_case -d "$DEFS" --now "$NOW" "$DATA/mixed.jsonl" "$BATS_TEST_TMPDIR/nope.jsonl"
	[[ "$stderr" == *"cannot open '$BATS_TEST_TMPDIR/nope.jsonl'"* ]]
}

@test "fatal: a second input that cannot be read (a directory)" {
	mkdir "$BATS_TEST_TMPDIR/dir"
	fatal_case -d "$DEFS" --now "$NOW" "$DATA/events.jsonl" "$BATS_TEST_TMPDIR/dir"
	[[ "$stderr" == *"cannot read '$BATS_TEST_TMPDIR/dir'"* ]]
}

@test "fatal: a corrupt Avro input, after good records" {
	fatal_case -d "$DEFS" --now "$NOW" "$DATA/events.jsonl" "$FIX/corrupt.truncated.avro"
	[[ "$stderr" == *"corrupt.truncated.avro"*"truncated"* ]]
}

@test "fatal: an Avro input that is not a RawEvent" {
	fatal_case -d "$DEFS" --now "$NOW" "$FIX/bad.type-mismatch.avro"
}

@test "fatal: definitions errors name the JSON path" {
	local d=$BATS_TEST_TMPDIR
	echo '{"format":"cnt-definitions/1","tenants":[{"tenant_id":"a","timezone":"Mars/Olympus"}]}' >"$d/d1.json"
	fatal_case -d "$d/d1.json" "$DATA/events.jsonl"
	[[ "$stderr" == *'$.tenants[0].timezone'*'Mars/Olympus'* ]]
	echo '{"format":"cnt-definitions/1","tenants":[{"tenant_id":"a","timezone":"UTC"}],
		"counters":[{"tenant_id":"a","counter_id":"c","versions":[{"version":1,"type":"exact","bounds_lo":5,"bounds_hi":1}]}]}' >"$d/d2.json"
	fatal_case -d "$d/d2.json" "$DATA/events.jsonl"
	[[ "$stderr" == *'$.counters[0].versions[0]'* ]]
	echo '{"format":"cnt-definitions/1","tenants":[{"tenant_id":"a","timezone":"UTC","event_quota_per_s":"3"}]}' >"$d/d3.json"
	fatal_case -d "$d/d3.json" "$DATA/events.jsonl"
	[[ "$stderr" == *'$.tenants[0].event_quota_per_s'* ]]
	echo '{"format":"cnt-definitions/1","tenants":[' >"$d/d4.json"
	fatal_case -d "$d/d4.json" "$DATA/events.jsonl"
	[[ "$stderr" == *"d4.json"* ]]
	fatal_case -d "$d/missing.json" "$DATA/events.jsonl"
	[[ "$stderr" == *"missing.json"* ]]
}

@test "default codec: zstandard for a file, null for a pipe; every codec is readable" {
	local d=$BATS_TEST_TMPDIR c
	cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -o "$d/f.avro" "$DATA/events.jsonl"
	cnt-cat --meta "$d/f.avro" | one '.codec == "zstandard"'
	cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" "$DATA/events.jsonl" >"$d/redirected.avro"
	cnt-cat --meta "$d/redirected.avro" | one '.codec == "zstandard"'
	cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" "$DATA/events.jsonl" | cnt-cat --meta | one '.codec == "null"'
	cnt-cat "$d/f.avro" >"$d/ref.jsonl"
	for c in null deflate snappy xz zstandard bzip2; do
		cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -c "$c" -o "$d/$c.avro" "$DATA/events.jsonl"
		cnt-cat --meta "$d/$c.avro" | one --arg c "$c" '.codec == $c'
		cnt-cat "$d/$c.avro" | cmp - "$d/ref.jsonl"
	done
	cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -c zstandard --level 19 -o "$d/l19.avro" "$DATA/events.jsonl"
	cnt-cat "$d/l19.avro" | cmp - "$d/ref.jsonl"
}

@test "--level: zstandard's fast levels are negative; no codec takes a negative level as its default" {
	local d=$BATS_TEST_TMPDIR
	seq 1 3000 | jq -c '{idempotency_key: "e\(.)", tenant_id: "acme", counter_id: "distance_m", member_ref: "m\(. % 97)",
		event_time: "2026-03-01T10:00:00Z", delta: (. % 13), attrs: {note: "a note that repeats \(. % 7)"}}' >"$d/in.jsonl"
	cnt-ingest -d "$DEFS" --now "$NOW" -o "$d/def.avro" "$d/in.jsonl"
	cnt-ingest -d "$DEFS" --now "$NOW" --level 3 -o "$d/l3.avro" "$d/in.jsonl"
	cmp "$d/def.avro" "$d/l3.avro"
	cnt-ingest -d "$DEFS" --now "$NOW" --level -5 -o "$d/fast.avro" "$d/in.jsonl"
	# not the default's bytes (a -5 taken as the default would be), and larger
	! cmp -s "$d/fast.avro" "$d/def.avro"
	[ "$(stat -c %s "$d/fast.avro")" -gt "$(stat -c %s "$d/def.avro")" ]
	cnt-cat "$d/def.avro" >"$d/ref.jsonl"
	cnt-cat "$d/fast.avro" | cmp - "$d/ref.jsonl"
	# a negative level for any other codec, and zstandard's 0, stop the run
	for spec in deflate:-1 xz:-2 bzip2:-1 zstandard:0; do
		run --separate-stderr cnt-ingest -d "$DEFS" --now "$NOW" -c "${spec%:*}" --level "${spec#*:}" -o "$d/bad.avro" "$d/in.jsonl"
		[ "$status" -ne 0 ]
		[[ "$stderr" == *"${spec%:*}: compression level ${spec#*:} is "* ]]
		[ ! -e "$d/bad.avro" ]
	done
	[[ "$stderr" == *"is not one of "*"..-1 (its fast levels) or 1..22"* ]]
}

@test "bad options: exit 2 with a message or the usage, and no output" {
	local d=$BATS_TEST_TMPDIR/bo
	mkdir "$d"
	run --separate-stderr cnt-ingest -d "$DEFS" --keyring "$KR" --bogus -o "$d/o.avro" "$DATA/events.jsonl"
	[ "$status" -eq 2 ] && [[ "$stderr" == *"usage: cnt-ingest"* ]]
	run --separate-stderr cnt-ingest -o "$d/o.avro" "$DATA/events.jsonl"
	[ "$status" -eq 2 ] && [[ "$stderr" == *"-d definitions is required"*"usage: cnt-ingest"* ]]
	run --separate-stderr cnt-ingest -d "$DEFS" --keyring "$KR" -o "$d/o.avro" -f xml "$DATA/events.jsonl"
	[ "$status" -eq 2 ] && [[ "$stderr" == "cnt-ingest: --format: 'xml'"* ]]
	run --separate-stderr cnt-ingest -d "$DEFS" --keyring "$KR" -o "$d/o.avro" --now yesterday "$DATA/events.jsonl"
	[ "$status" -eq 2 ] && [[ "$stderr" == "cnt-ingest: --now: 'yesterday'"* ]]
	run --separate-stderr cnt-ingest -d "$DEFS" --keyring "$KR" -o "$d/o.avro" --max-past 60 "$DATA/events.jsonl"
	[ "$status" -eq 2 ] && [[ "$stderr" == "cnt-ingest: --max-past: '60'"* ]]
	run --separate-stderr cnt-ingest -d "$DEFS" --keyring "$KR" -o "$d/o.avro" --max-future=-5s "$DATA/events.jsonl"
	[ "$status" -eq 2 ] && [[ "$stderr" == "cnt-ingest: --max-future: '-5s'"* ]]
	run --separate-stderr cnt-ingest -d "$DEFS" --keyring "$KR" -o "$d/o.avro" -c lz4 "$DATA/events.jsonl"
	[ "$status" -eq 2 ] && [[ "$stderr" == "cnt-ingest: --codec: 'lz4'"* ]]
	run --separate-stderr cnt-ingest -d "$DEFS" --keyring "$KR" -o "$d/o.avro" --level high "$DATA/events.jsonl"
	[ "$status" -eq 2 ] && [[ "$stderr" == "cnt-ingest: --level: 'high'"* ]]
	run --separate-stderr cnt-ingest -d "$DEFS" --keyring "$KR" -o "$d/o.avro" --level 2x "$DATA/events.jsonl"
	[ "$status" -eq 2 ] && [[ "$stderr" == "cnt-ingest: --level: '2x'"* ]]
	run --separate-stderr cnt-ingest -d "$DEFS" --keyring "$KR" -r - "$DATA/events.jsonl"
	[ "$status" -eq 2 ] && [[ "$stderr" == "cnt-ingest: the events go to standard output: -r and -D need a file name"* ]]
	run --separate-stderr cnt-ingest -d "$DEFS" --keyring "$KR" -o - -D - "$DATA/events.jsonl"
	[ "$status" -eq 2 ] && [[ "$stderr" == *"-r and -D need a file name"*"usage: cnt-ingest"* ]]
	[ -z "$(ls -A "$d")" ]
}

@test "--stats -: the counts on standard error, the events on standard output; -r - with -o" {
	local d=$BATS_TEST_TMPDIR
	cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -c null --stats - "$DATA/events.jsonl" 2>"$d/st" >"$d/out.avro"
	one '.tool == "cnt-ingest" and .in == 8 and .out == 8' "$d/st"
	[ "$(cnt-cat --count "$d/out.avro")" -eq 8 ]
	{ ev '.idempotency_key = "k1"'; ev '.tenant_id = "nobody"'; } >"$d/in.jsonl"
	cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -o "$d/out.avro" -r - "$d/in.jsonl" >"$d/rej"
	one '.line == 2 and .reason == "unknown_tenant"' "$d/rej"
}

@test "--help: exit 0, usage and every option on standard output" {
	run --separate-stderr cnt-ingest --help
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[[ "$output" == "usage: cnt-ingest -d definitions"* ]]
	local o
	for o in --definitions --output --rejects --duplicates --format --now --live --max-past --max-future \
		--codec --level --stats --verbose --progress --no-progress --help --version; do
		[[ "$output" == *"$o"* ]]
	done
}

@test "without -r, each reject is one line on standard error, naming file and line" {
	local d=$BATS_TEST_TMPDIR
	{ ev '.idempotency_key = "s1"'; ev '.tenant_id = "nobody"'; echo '{'; } >"$d/in.jsonl"
	run --separate-stderr cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -o "$d/out.avro" "$d/in.jsonl"
	echo "$stderr"
	[ "$status" -eq 0 ]
	[ "$(printf '%s\n' "$stderr" | wc -l)" -eq 2 ]
	[[ "$(printf '%s\n' "$stderr" | sed -n 1p)" == "cnt-ingest: '$d/in.jsonl' line 2: rejected (unknown_tenant): tenant 'nobody' is not declared" ]]
	[[ "$(printf '%s\n' "$stderr" | sed -n 2p)" == "cnt-ingest: '$d/in.jsonl' line 3: rejected (malformed): "* ]]
	[ "$(keys_of "$d/out.avro")" = s1 ]
	# standard input is named '-'; Avro positions are record numbers
	ev '.tenant_id = "nobody"' | cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -c null 2>"$d/err" >/dev/null
	grep -qx "cnt-ingest: '-' line 1: rejected (unknown_tenant): tenant 'nobody' is not declared" "$d/err"
	cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -o "$d/r.avro" "$FIX/raw.avro" 2>"$d/err"
	grep -q "^cnt-ingest: '$FIX/raw.avro' record 1: rejected (" "$d/err"
	[ "$(wc -l <"$d/err")" -eq 20 ]
}

@test "a line longer than 1 MiB is one malformed record, whether or not it fits the read buffer" {
	local d=$BATS_TEST_TMPDIR
	# 2 MB (inside the 4 MiB read buffer) and 6 MB (longer than it)
	{ ev '.idempotency_key = "l1"'
	  /usr/bin/python3 -c 'print("{\"idempotency_key\":\"" + "x" * 6000000 + "\"}")'
	  ev '.idempotency_key = "l2"'
	  /usr/bin/python3 -c 'print("{\"idempotency_key\":\"" + "y" * 2000000 + "\"}")'
	  ev '.idempotency_key = "l3"'; } >"$d/in.jsonl"
	run -0 cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -o "$d/out.avro" -r "$d/rej" --stats "$d/st" "$d/in.jsonl"
	[ "$(keys_of "$d/out.avro")" = l1,l2,l3 ]
	jq -s -e 'map([.line, .reason, .message]) == [[2, "malformed", "line longer than 1048576 bytes"],
		[4, "malformed", "line longer than 1048576 bytes"]] and map(.raw | length) == [256, 256]' "$d/rej"
	jq -e '.in == 5 and .out == 3 and .rejected == 2' "$d/st"
}

@test "compression threads, niced or not, do not change the bytes written, nor reading from a pipe or read-ahead what is read" {
	local d=$BATS_TEST_TMPDIR
	# enough events for several 256 KiB blocks, so blocks really overlap
	jq -nc 'range(1; 4001) | {idempotency_key: "t\(.)", tenant_id: "acme", counter_id: "distance_m",
		member_ref: "m-\(. % 97)", delta: 5, event_time: "2026-03-01T11:00:00Z"}' >"$d/in.jsonl"
	CNT_WRITE_THREADS=0 cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -c zstandard -o "$d/a.avro" "$d/in.jsonl"
	CNT_WRITE_THREADS=2 cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -c zstandard -o "$d/b.avro" "$d/in.jsonl"
	CNT_WRITE_THREADS=1 cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -c xz -o "$d/c.avro" "$d/in.jsonl"
	CNT_WRITE_THREADS=0 cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -c xz -o "$d/e.avro" "$d/in.jsonl"
	# compressing threads that yield to admission, or not (cnt(7))
	CNT_WRITE_NICE=0 cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -c zstandard -o "$d/f.avro" "$d/in.jsonl"
	CNT_WRITE_NICE=19 cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -c zstandard -o "$d/g.avro" "$d/in.jsonl"
	# lines from a pipe, chunked as they come, not as a file's are
	cat "$d/in.jsonl" | cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -c zstandard -o "$d/h.avro" -
	cmp "$d/a.avro" "$d/b.avro"
	cmp "$d/a.avro" "$d/f.avro"
	cmp "$d/a.avro" "$d/g.avro"
	cmp "$d/a.avro" "$d/h.avro"
	cmp "$d/c.avro" "$d/e.avro"
	[ "$(cnt-cat --meta "$d/a.avro" | jq -s length)" -eq 1 ]
	CNT_READ_THREADS=0 cnt-cat "$d/a.avro" >"$d/r0"
	CNT_READ_THREADS=2 cnt-cat "$d/a.avro" >"$d/r2"
	cmp "$d/r0" "$d/r2"
	[ "$(wc -l <"$d/r2")" -eq 4000 ]
}

@test "a block that cannot be written on a compressing thread: status 3, one line, nothing left, with or without threads" {
	local d=$BATS_TEST_TMPDIR
	# several 256 KiB blocks; the header fits under the 50 KiB file limit, the blocks do not
	jq -nc 'range(1; 8001) | {idempotency_key: "w\(.)", tenant_id: "acme", counter_id: "distance_m",
		member_ref: "m-\(. % 97)", delta: 5, event_time: "2026-03-01T11:00:00Z"}' >"$d/in.jsonl"
	for t in 0 1 2; do
		mkdir "$d/o$t"
		run --separate-stderr sh -c 'trap "" XFSZ; ulimit -f 50; CNT_WRITE_THREADS=$1 cnt-ingest -d "$2" --keyring "$3" --now "$4" -c zstandard -o "$5/out.avro" "$6"' \
			sh "$t" "$DEFS" "$KR" "$NOW" "$d/o$t" "$d/in.jsonl"
		[ "$status" -eq 3 ]
		[ "$stderr" = "cnt-ingest: '$d/o$t/out.avro': write error: File too large" ]
		[ -z "$(ls -A "$d/o$t")" ]
	done
}

@test "a closed pipe while compressing threads write blocks: quiet, ends by SIGPIPE" {
	local d=$BATS_TEST_TMPDIR
	jq -nc 'range(1; 8001) | {idempotency_key: "p\(.)", tenant_id: "acme", counter_id: "distance_m",
		member_ref: "m-\(. % 97)", delta: 5, event_time: "2026-03-01T11:00:00Z"}' >"$d/in.jsonl"
	for t in 0 2; do
		run --separate-stderr bash -c 'CNT_WRITE_THREADS=$1 cnt-ingest -d "$2" --keyring "$3" --now "$4" -c zstandard "$5" | head -c 100 >/dev/null; echo "${PIPESTATUS[0]}"' \
			sh "$t" "$DEFS" "$KR" "$NOW" "$d/in.jsonl"
		[ "$output" = 141 ] && [ -z "$stderr" ]
	done
}

@test "the duplicate table's size does not change the verdicts: a file (sized from its length) and a pipe (grown from 64 Ki) give the same bytes" {
	local d=$BATS_TEST_TMPDIR
	# 150,000 distinct keys (more than a 3/4-full table of 131,072 holds,
	# so the pipe's table grows twice), every 7th record a duplicate of an
	# earlier one, across three counters and two tenants
	/usr/bin/python3 - "$d/in.jsonl" <<-'PY'
	import json, sys
	cs = [("acme", "distance_m"), ("acme", "likes"), ("globex", "wins")]
	with open(sys.argv[1], "w") as f:
	    k = 0
	    for i in range(175000):
	        if i % 7 == 6:
	            key = "k%d" % ((i * 7919) % k)
	        else:
	            key = "k%d" % k
	            k += 1
	        t, c = cs[i % 3]
	        f.write(json.dumps({"idempotency_key": key, "tenant_id": t, "counter_id": c,
	            "member_ref": "m-%d" % (i % 1013), "delta": i % 50, "event_time": "2026-03-01T11:%02d:00Z" % (i % 60)},
	            separators=(",", ":")) + "\n")
	PY
	[ "$(wc -l <"$d/in.jsonl")" -eq 175000 ]
	cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -c zstandard -o "$d/a.avro" -r "$d/a.rej" -D "$d/a.dup" \
		--stats "$d/a.st" "$d/in.jsonl"
	cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -c zstandard -o "$d/b.avro" -r "$d/b.rej" -D "$d/b.dup" \
		--stats "$d/b.st" - <"$d/in.jsonl"
	cmp "$d/a.avro" "$d/b.avro"
	cmp "$d/a.rej" "$d/b.rej"
	# the duplicates and the stats differ only in the input's name
	[ "$(jq -c 'del(.input, .duplicate_of.input)' "$d/a.dup")" = "$(jq -c 'del(.input, .duplicate_of.input)' "$d/b.dup")" ]
	[ "$(wc -l <"$d/a.dup")" -gt 8000 ]
	[ "$(jq -c 'del(.inputs[0].name)' "$d/a.st")" = "$(jq -c 'del(.inputs[0].name)' "$d/b.st")" ]
	jq -e '.in == 175000 and .out == 166339 and .duplicates == 8661 and .balanced and .rejected == 0' "$d/a.st"
}

# ---- hostile input ------------------------------------------------------

@test "3,000,000 zero bytes: one overlong line rejected, the next line read; sniffed as CSV, a bad header at once" {
	local d=$BATS_TEST_TMPDIR
	{ head -c 3000000 /dev/zero; echo; ev '.idempotency_key = "z1"'; } |
		cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -f json -o "$d/out.avro" -r "$d/rej" --stats "$d/st" -
	jq -s -e 'length == 1 and .[0].line == 1 and .[0].reason == "malformed" and
		.[0].message == "line longer than 1048576 bytes" and .[0].raw == ("\u0000" * 256)' "$d/rej"
	[ "$(keys_of "$d/out.avro")" = z1 ]
	one '.in == 2 and .out == 1 and .rejected == 1 and .balanced' "$d/st"
	# Without -f the zeros are not JSON: read as CSV, the header line is
	# too long, which stops the run.
	run --separate-stderr cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -o "$d/o2.avro" - < <(head -c 3000000 /dev/zero)
	[ "$status" -eq 2 ]
	[ "$stderr" = "cnt-ingest: '-': line 1: CSV header: row longer than 1048576 bytes" ]
	[ ! -e "$d/o2.avro" ]
}

# endless MODE CMD...: runs CMD for at most 3 s with standard error in
# $BATS_TEST_TMPDIR/err; the input never ends, so only the timeout ends it.
endless() {
	run timeout 3 sh -c "$1"
	echo "status $status"; cat "$BATS_TEST_TMPDIR/err"
	[ "$status" -eq 124 ]
}

@test "an input that never ends a line: rejected once, as soon as 1 MiB has passed" {
	local d=$BATS_TEST_TMPDIR
	# yes | tr -d '\n' never ends and never has a newline (cat /dev/zero is
	# the same, read as CSV: its header stops the run, as tested above)
	endless "yes | tr -d '\n' | cnt-ingest -d '$DEFS' --now '$NOW' -f json - >/dev/null 2>'$d/err'"
	[ "$(cat "$d/err")" = "cnt-ingest: '-' line 1: rejected (malformed): line longer than 1048576 bytes" ]
	endless "cat /dev/zero | cnt-ingest -d '$DEFS' --now '$NOW' -f json - >/dev/null 2>'$d/err'"
	[ "$(wc -l <"$d/err")" -eq 1 ]
	# A CSV row that never ends, after good rows
	endless "{ printf 'idempotency_key,tenant_id,counter_id,member_ref,delta,event_time\n'
		printf 'c1,acme,distance_m,m-1,5,2026-03-01T11:00:00Z\n'; yes | tr -d '\n'; } |
		cnt-ingest -d '$DEFS' --now '$NOW' -f csv - >/dev/null 2>'$d/err'"
	[ "$(cat "$d/err")" = "cnt-ingest: '-' line 3: rejected (malformed): row longer than 1048576 bytes" ]
}

@test "an overlong line is rejected while the input is still open (a stalled writer)" {
	local d=$BATS_TEST_TMPDIR i
	# 2 MB without a newline, then the writer waits: the reject must not
	# wait for the line (or the input) to end.
	timeout 20 sh -c "{ head -c 2000000 /dev/zero | tr '\0' x; sleep 15; } |
		cnt-ingest -d '$DEFS' --now '$NOW' -f json - >/dev/null 2>'$d/err'" &
	for i in $(seq 100); do
		[ -s "$d/err" ] && break
		sleep 0.1
	done
	kill %1 2>/dev/null || true
	wait || true
	cat "$d/err"
	[ "$(cat "$d/err")" = "cnt-ingest: '-' line 1: rejected (malformed): line longer than 1048576 bytes" ]
}

@test "a run that fails while its input is idle stops at once (the thread reading ahead is not waited for)" {
	local d=$BATS_TEST_TMPDIR writer
	# Lines are read and parsed ahead on a thread of their own.  Here it
	# reads all 1500 lines at once, hands them on and waits on the pipe;
	# the rejects' stream fails when its first 64 KiB are written (line
	# 500 or so), and the run must stop then, not when the writer ends.
	seq 1 1500 | sed 's/^/not json /' >"$d/bad.txt"
	mkfifo "$d/pipe"
	{ cat "$d/bad.txt"; exec sleep 30; } >"$d/pipe" &
	writer=$!
	run --separate-stderr timeout 10 cnt-ingest -d "$DEFS" --now "$NOW" -f json -r /dev/full \
		-o "$d/out.avro" "$d/pipe"
	kill "$writer" 2>/dev/null || true
	[ "$status" -eq 3 ]
	[ "$stderr" = "cnt-ingest: cannot write '/dev/full': No space left on device" ]
	[ ! -e "$d/out.avro" ]
}

@test "CSV: a row longer than 1 MiB is rejected with its first 256 bytes; the next rows read normally" {
	local d=$BATS_TEST_TMPDIR
	{ echo 'idempotency_key,tenant_id,counter_id,member_ref,delta,event_time'
	  echo 'c1,acme,distance_m,m-1,5,2026-03-01T11:00:00Z'
	  head -c 3000000 /dev/zero | tr '\0' y; echo
	  echo 'c2,acme,distance_m,m-1,5,2026-03-01T11:00:00Z'; } >"$d/in.csv"
	cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -o "$d/out.avro" -r "$d/rej" --stats "$d/st" "$d/in.csv"
	jq -s -e 'length == 1 and .[0].line == 3 and .[0].reason == "malformed" and
		.[0].message == "row longer than 1048576 bytes" and .[0].raw == ("y" * 256)' "$d/rej"
	[ "$(keys_of "$d/out.avro")" = c1,c2 ]
	one '.in == 3 and .out == 2 and .balanced' "$d/st"
}

# Regression: a header of empty column names passed NULL to memcmp
# (UBSan under make check-san).
@test "CSV: a header of empty names is refused without undefined behaviour" {
	local d=$BATS_TEST_TMPDIR
	run --separate-stderr cnt-ingest -f csv -d "$DEFS" -o "$d/out.avro" - < <(printf ',\n1,2\n')
	[ "$status" -eq 2 ]
	[ "$stderr" = "cnt-ingest: '-': line 1: CSV header: column '' appears twice" ]
	[ ! -e "$d/out.avro" ]
	# one empty name is a column that is ignored
	printf ',idempotency_key,tenant_id,counter_id,member_ref,delta,event_time\nx,e1,acme,distance_m,m-1,5,2026-03-01T11:00:00Z\n' |
		cnt-ingest -f csv -d "$DEFS" --now "$NOW" -o "$d/out.avro"
	[ "$(keys_of "$d/out.avro")" = e1 ]
}

@test "without -r, the first 200 rejects are shown, the rest counted and summed up by reason" {
	local d=$BATS_TEST_TMPDIR
	# 100,000 records: 1 good, 89,999 of an unknown tenant, 10,000 malformed
	awk 'BEGIN {
		print "{\"idempotency_key\":\"good\",\"tenant_id\":\"acme\",\"counter_id\":\"distance_m\",\"member_ref\":\"m\",\"delta\":1,\"event_time\":\"2026-03-01T11:00:00Z\"}"
		for (i = 2; i <= 100000; i++)
			if (i % 10) printf "{\"idempotency_key\":\"k%d\",\"tenant_id\":\"nobody\",\"counter_id\":\"c\",\"member_ref\":\"m\",\"delta\":1,\"event_time\":\"2026-03-01T11:00:00Z\"}\n", i
			else print "{oops"
	}' >"$d/in.jsonl"
	run --separate-stderr cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -o "$d/out.avro" --stats "$d/st" "$d/in.jsonl"
	[ "$status" -eq 0 ]
	[ "$(printf '%s\n' "$stderr" | wc -l)" -eq 202 ]
	[ "$(printf '%s\n' "$stderr" | grep -c "^cnt-ingest: '$d/in.jsonl' line [0-9]*: rejected (")" -eq 200 ]
	[ "$(printf '%s\n' "$stderr" | sed -n 200p)" = \
		"cnt-ingest: '$d/in.jsonl' line 201: rejected (unknown_tenant): tenant 'nobody' is not declared" ]
	[ "$(printf '%s\n' "$stderr" | sed -n 201p)" = \
		"cnt-ingest: more than 200 records rejected: the rest are counted and summed up at the end (-r FILE keeps every one)" ]
	[ "$(printf '%s\n' "$stderr" | sed -n 202p)" = \
		"cnt-ingest: 99999 records rejected, the first 200 shown; by reason: malformed 10000, unknown_tenant 89999" ]
	[ "$(keys_of "$d/out.avro")" = good ]
	one '.in == 100000 and .rejected == 99999 and .rejected_by_reason.malformed == 10000 and .balanced' "$d/st"
	# with -r every reject is kept and nothing is said
	run --separate-stderr cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -o "$d/out.avro" -r "$d/rej" "$d/in.jsonl"
	[ "$status" -eq 0 ] && [ -z "$stderr" ]
	[ "$(wc -l <"$d/rej")" -eq 99999 ]
}

@test "--stats: input names holding quotes, backslashes and control characters are escaped" {
	local d=$BATS_TEST_TMPDIR name
	name=$(printf '%s/in "q" \\b\tx\001.jsonl' "$d")
	{ ev '.idempotency_key = "s1"'; ev '.idempotency_key = "s1"'; ev '.tenant_id = "nobody"'; } >"$name"
	cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -o "$d/out.avro" -r "$d/rej" -D "$d/dup" --stats "$d/st" "$name"
	one --arg n "$name" '.inputs == [{name: $n, format: "json", records: 3}] and .duplicates == 1' "$d/st"
	"$PY" -c 'import json, sys; s = json.load(open(sys.argv[1])); assert s["inputs"][0]["name"] == sys.argv[2]' \
		"$d/st" "$name"
	one --arg n "$name" '.input == $n and .reason == "unknown_tenant"' "$d/rej"
	one --arg n "$name" '.input == $n and .duplicate_of.input == $n' "$d/dup"
	# the counter whose id holds a quote and a backslash
	ev '.counter_id = "say \"hi\" \\o"' | cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -c null --stats "$d/st2" >/dev/null
	"$PY" -c 'import json, sys
s = json.load(open(sys.argv[1]))
c = [c for c in s["counters"] if c["counter_id"] == "say \"hi\" \\o"]
assert len(c) == 1 and c[0]["accepted"] == 1, c' "$d/st2"
}

@test "--progress: records and bytes on standard error while reading; none when it is not a terminal" {
	local d=$BATS_TEST_TMPDIR
	jq -nc 'range(1; 40001) | {idempotency_key: "p\(.)", tenant_id: "acme", counter_id: "distance_m",
		member_ref: "m", delta: 1, event_time: "2026-03-01T11:00:00Z"}' >"$d/in.jsonl"
	# a pause in the middle, so the 4-a-second redraw is due
	{ head -n 20000 "$d/in.jsonl"; sleep 1; tail -n 20000 "$d/in.jsonl"; } |
		cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -c null --progress - 2>"$d/err" >/dev/null
	grep -q "cnt-ingest: [0-9.]* [kK]* *records, .*records/s" "$d/err"
	# the line is cleared at the end
	[ "$(tail -c 4 "$d/err" | od -An -c | tr -d ' ')" = '\r033[K' ]
	{ head -n 20000 "$d/in.jsonl"; sleep 1; tail -n 20000 "$d/in.jsonl"; } |
		cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -c null - 2>"$d/err" >/dev/null
	[ ! -s "$d/err" ]
}

# ---- faults -------------------------------------------------------------

@test "an output that cannot be written: exit 3, one message, no file left" {
	local d=$BATS_TEST_TMPDIR/f
	mkdir "$d"
	run --separate-stderr cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -o /dev/full -r "$d/rej" "$DATA/mixed.jsonl"
	[ "$status" -eq 3 ] && [ "$stderr" = "cnt-ingest: '/dev/full': write error: No space left on device" ]
	run --separate-stderr sh -c 'cnt-ingest -d "$1" --now "$2" -r /dev/null "$3" >/dev/full' sh "$DEFS" "$NOW" "$DATA/mixed.jsonl"
	[ "$status" -eq 3 ] && [ "$stderr" = "cnt-ingest: 'standard output': write error: No space left on device" ]
	run --separate-stderr cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -o "$d/out.avro" -r /dev/full "$DATA/mixed.jsonl"
	[ "$status" -eq 3 ] && [ "$stderr" = "cnt-ingest: cannot write '/dev/full': No space left on device" ]
	run --separate-stderr cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -o "$d/out.avro" -r "$d/rej" -D /dev/full "$DATA/mixed.jsonl"
	[ "$status" -eq 3 ] && [ "$stderr" = "cnt-ingest: cannot write '/dev/full': No space left on device" ]
	run --separate-stderr cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -o "$d/out.avro" -r "$d/rej" --stats /dev/full "$DATA/mixed.jsonl"
	[ "$status" -eq 3 ] && [[ "$stderr" == "cnt-ingest: --stats: cannot write '/dev/full': No space left on device" ]]
	[ -z "$(ls -A "$d")" ]
}

@test "a closed pipe: quiet, ends by SIGPIPE, even when SIGPIPE is ignored by the parent" {
	local d=$BATS_TEST_TMPDIR
	jq -nc 'range(1; 20001) | {idempotency_key: "c\(.)", tenant_id: "acme", counter_id: "distance_m",
		member_ref: "m", delta: 1, event_time: "2026-03-01T11:00:00Z"}' >"$d/in.jsonl"
	run bash -c 'cnt-ingest -d "$1" --now "$2" -c null -r "$4/rej" "$3" 2>"$4/err" | head -c 10 >/dev/null
		echo "${PIPESTATUS[0]}"' sh "$DEFS" "$NOW" "$d/in.jsonl" "$d"
	[ "$output" = 141 ] && [ ! -s "$d/err" ] && [ ! -e "$d/rej" ]
	run bash -c 'trap "" PIPE; cnt-ingest -d "$1" --now "$2" -c null "$3" 2>"$4/err" | head -c 10 >/dev/null
		echo "${PIPESTATUS[0]}"' sh "$DEFS" "$NOW" "$d/in.jsonl" "$d"
	[ "$output" = 141 ] && [ ! -s "$d/err" ]
	# -r - with -o: the reject stream is the pipe
	awk 'BEGIN { for (i = 0; i < 100000; i++) print "{bad" }' >"$d/bad.jsonl"
	run bash -c 'cnt-ingest -d "$1" --now "$2" -o "$4/out.avro" -r - "$3" 2>"$4/err" | head -n 1 >/dev/null
		echo "${PIPESTATUS[0]}"' sh "$DEFS" "$NOW" "$d/bad.jsonl" "$d"
	[ "$output" = 141 ] && [ ! -s "$d/err" ] && [ ! -e "$d/out.avro" ]
}

# alloc_sweep INPUT: fails the N-th allocation for N = 1, 2, ... until a
# run succeeds; every failing run must end with status 4, one line saying
# "out of memory", and nothing left in the output directory.
alloc_sweep() {
	local d=$BATS_TEST_TMPDIR/a n=1 rc
	while :; do
		rm -rf "$d" && mkdir "$d"
		rc=0
		CNT_FAIL_ALLOC=$n cnt-ingest -d "$DEFS" --keyring "$KR" --now "$NOW" -o "$d/out.avro" -r "$d/rej" -D "$d/dup" \
			--stats "$d/st" "$@" 2>"$BATS_TEST_TMPDIR/err" || rc=$?
		[ "$rc" -eq 0 ] && break
		if [ "$rc" -ne 4 ] || [ "$(wc -l <"$BATS_TEST_TMPDIR/err")" -ne 1 ] ||
		   ! grep -q '^cnt-ingest: .*out of memory' "$BATS_TEST_TMPDIR/err" || [ -n "$(ls -A "$d")" ]; then
			echo "allocation $n: status $rc: $(cat "$BATS_TEST_TMPDIR/err"); left: $(ls -A "$d")"
			return 1
		fi
		n=$((n + 1))
		[ "$n" -lt 5000 ] || return 1
	done
	echo "$n allocations"
	[ "$n" -gt 20 ]
	one '.balanced' "$d/st"
}

@test "allocation failure: exit 4 and no output left, at every allocation (JSON lines, CSV, Avro)" {
	alloc_sweep "$DATA/mixed.jsonl"
	alloc_sweep "$DATA/events.csv"
	alloc_sweep "$FIX/raw.avro" --max-past 20000d
}
