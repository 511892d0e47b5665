# Helpers shared by the counting-core bats files (dedup, window,
# accumulate, diff, pipeline).  Sourced with `load data/core/common`.

DATA="$BATS_TEST_DIRNAME/data/core"
DEFS="$DATA/defs.json"
PY=/usr/bin/python3
# The day most tests happen on: events at 10:00Z, admitted from 10:00Z on.
T0=2026-03-01T10:00:00Z
T0_MS=1772359200000
H_MS=3600000

# ev KEY COUNTER MEMBER DELTA [ITEM [EVENT_TIME [TENANT]]]: one raw event as
# a JSON line.  EVENT_TIME (RFC 3339 or epoch ms) defaults to $T0, TENANT to
# utc.  Arguments are plain words (no JSON escaping is done): printf, not
# jq, so that making hundreds of events stays cheap.
ev() {
	local t=${6:-$T0} item=''
	[[ $t =~ ^-?[0-9]+$ ]] || t="\"$t\""
	[ -n "${5:-}" ] && item=",\"item\":\"$5\""
	printf '{"idempotency_key":"%s","tenant_id":"%s","counter_id":"%s","member_ref":"%s","delta":%s%s,"event_time":%s}\n' \
		"$1" "${7:-utc}" "$2" "$3" "$4" "$item" "$t"
}

# ingest NOW OUT [DEFS]: admits the JSON lines on standard input with
# ingest time NOW into the events file OUT; fails unless every line is
# admitted.
ingest() {
	local st=$BATS_TEST_TMPDIR/ingest-stats.json
	cnt-ingest -d "${3:-$DEFS}" --now "$1" --max-past 400d -o "$2" --stats "$st" - &&
		jq -e '.rejected == 0 and .duplicates == 0' "$st" >/dev/null
}

# one [jq options] FILTER [FILE...]: the input holds exactly one JSON value
# and FILTER is true of it.
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

# keys_of FILE: the idempotency keys of an events file, in order, comma-separated.
keys_of() {
	cnt-cat "$1" | jq -r .idempotency_key | paste -sd, -
}

# state_keys FILE: the key count in a cnt-dedup state file's header
# (bytes 16..23, little-endian; cnt-dedup(1), STATE FILE).
state_keys() {
	"$PY" -c 'import sys; b = open(sys.argv[1], "rb").read(); print(int.from_bytes(b[16:24], "little"))' "$1"
}

# windowed: events from `ingest`, through cnt-window, printed as JSON lines
# with the event's key beside the bucket fields.
windowed() {
	cnt-cat "$1" | jq -c '{k: .event.idempotency_key, start: .bucket_start, end: .bucket_end,
		late: .late, shard: .shard, it: .event.ingest_time, et: .event.event_time}'
}

# weird_ids DEFS_OUT EVENTS_OUT: definitions declaring a tenant and a
# counter whose ids hold a quote and a backslash (cnt-definitions(5) allows
# them), and an events file (null codec) with one event of them, one of
# utc/dist, and one whose tenant id holds the control characters \x01 and
# \x1b (undeclared: rejected downstream).  Definitions refuse control
# characters, so that id is patched into the file: a tenant "ctlAB" of the
# same length is declared for cnt-ingest and its bytes replaced.  A third
# argument, five bytes in hex, replaces them with those instead.
weird_ids() {
	jq '.tenants += [{tenant_id: "q\"t\\x", timezone: "UTC"}, {tenant_id: "ctlAB", timezone: "UTC"}]
		| .counters += [{tenant_id: "q\"t\\x", counter_id: "c\"1\\", versions: [{version: 1, type: "exact"}]},
		                {tenant_id: "ctlAB", counter_id: "dist", versions: [{version: 1, type: "exact"}]}]' \
		"$DEFS" >"$1"
	{
		printf '%s\n' '{"idempotency_key":"w1","tenant_id":"q\"t\\x","counter_id":"c\"1\\","member_ref":"m","delta":1,"event_time":"2026-03-01T10:00:00Z"}'
		ev w2 dist m1 1
		ev w3 dist m1 1 '' "$T0" ctlAB
	} | cnt-ingest -d "$1" --now "$T0" --max-past 400d -c null -o "$2.tmp" - &&
		"$PY" -c 'import sys; b = open(sys.argv[1], "rb").read(); assert b.count(b"ctlAB") == 3
i = b.rindex(b"ctlAB")  # the event; the others are in the header (cnt.fingerprints)
open(sys.argv[2], "wb").write(b[:i] + bytes.fromhex(sys.argv[3]) + b[i + 5:])' "$2.tmp" "$2" "${3:-63746c011b}" &&
		rm -f "$2.tmp"
}

# many_events N OUT: N events of utc/dist (keys k1..kN), null codec.
many_events() {
	seq "$1" | awk -v t="$T0" '{printf "{\"idempotency_key\":\"k%d\",\"tenant_id\":\"utc\",\"counter_id\":\"dist\",\"member_ref\":\"m%d\",\"delta\":1,\"event_time\":\"%s\"}\n", $1, $1 % 7, t}' |
		cnt-ingest -d "$DEFS" --now "$T0" --max-past 400d -c null -o "$2" -
}
