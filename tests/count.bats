#!/usr/bin/env bats
# cnt-count: the counting chain in one process gives exactly the bytes of
#   cnt-dedup | cnt-window | cnt-accumulate -d (day roll-ups included)
# (bucket file, dedup state, duplicates, rejects, --stats numbers) on
# varied inputs: retries and duplicates across inputs, late events, both
# tenants and timezones, unknown counters and tenants, unique, approx and
# item_member counters, compensations, shards, spills with a small
# --memory, one and two threads.

bats_require_minimum_version 1.5.0
load data/core/common

NOW=2026-03-01T12:01:00Z

setup_file() {
	local F=$BATS_FILE_TMPDIR
	/usr/bin/python3 "$BATS_TEST_DIRNAME/data/core/gen-events.py" 7 600 >"$F/in.jsonl"
	# two overlapping halves: the overlap is duplicates across inputs
	head -n 400 "$F/in.jsonl" | cnt-ingest -d "$DEFS" --now "$NOW" -o "$F/a.avro" - 2>/dev/null
	tail -n 300 "$F/in.jsonl" | cnt-ingest -d "$DEFS" --now 2026-03-01T14:00:00Z -o "$F/b.avro" - 2>/dev/null
	# many (member, hour) groups, so that a 1 MiB --memory spills
	"$PY" - >"$F/wide.jsonl" <<-'PYEOF'
	for i in range(12000):
	    print('{"idempotency_key":"w%d","tenant_id":"%s","counter_id":"%s","member_ref":"m%d","delta":%d,"event_time":%d}'
	          % (i, "kol" if i % 3 else "utc", "dist" if i % 3 else "uniq", i % 4000, 1 + i % 7,
	             1772359200000 - (i % 30) * 3600000))
	PYEOF
	cnt-ingest -d "$DEFS" --now "$NOW" --max-past 400d -o "$F/wide.avro" "$F/wide.jsonl" 2>/dev/null
	# definitions without the views counter and the ber tenant: rejects
	jq 'del(.counters[] | select(.counter_id == "views" or .tenant_id == "kol")) |
		del(.tenants[] | select(.tenant_id == "kol"))' "$DEFS" >"$F/less.json"
}

setup() {
	set -o pipefail
	cd "$BATS_TEST_TMPDIR"
	F=$BATS_FILE_TMPDIR
}

# pipe DEFS OUT-PREFIX [dedup opts] -- [window opts] -- [accumulate opts] -- inputs
pipe() {
	local defs=$1 p=$2 d=() w=() a=()
	shift 2
	while [ "$1" != -- ]; do d+=("$1"); shift; done; shift
	while [ "$1" != -- ]; do w+=("$1"); shift; done; shift
	while [ "$1" != -- ]; do a+=("$1"); shift; done; shift
	cnt-dedup -d "$defs" "${d[@]}" --stats "$p.dedup.json" "$@" |
		cnt-window -d "$defs" "${w[@]}" --stats "$p.window.json" |
		cnt-accumulate -d "$defs" "${a[@]}" --stats "$p.acc.json" -o "$p.avro"
}

# same_stats PIPE-PREFIX COUNT-STATS: each step's numbers under its name
# (peak_memory_estimate and spill_runs describe the process, not the data)
same_stats() {
	local s
	for s in dedup:dedup window:window acc:accumulate; do
		diff <(jq -S 'del(.tool, .peak_memory_estimate, .spill_runs)' "$1.${s%%:*}.json") \
			<(jq -S ".${s#*:} | del(.peak_memory_estimate, .spill_runs)" "$2")
	done
}

@test "two overlapping inputs (duplicates across them, late events, two timezones): buckets, duplicates, state and stats as the pipe" {
	pipe "$DEFS" p -s p.state -D p.dups.avro -- -- -- "$F/a.avro" "$F/b.avro"
	for th in 1 2; do
		rm -f c.state
		cnt-count -d "$DEFS" -s c.state -D c.dups.avro --threads $th --stats c.json -o c.avro "$F/a.avro" "$F/b.avro"
		cmp p.avro c.avro
		cmp p.state c.state
		cmp p.dups.avro c.dups.avro
		same_stats p c.json
	done
	# what the inputs give the test: duplicates, late events, both tenants
	jq -e '.duplicates > 0 and .late > 0 and .in == .dedup.in and .out == .accumulate.out and .balanced' c.json
	[ "$(cnt-cat c.avro | jq -r .tenant_id | sort -u | paste -sd, -)" = "kol,utc" ]
}

@test "the dedup state carries across runs as cnt-dedup's does" {
	pipe "$DEFS" p1 -s p.state -- -- -- "$F/a.avro"
	pipe "$DEFS" p2 -s p.state -- -- -- "$F/b.avro"
	cnt-count -d "$DEFS" -s c.state -o c1.avro "$F/a.avro"
	cnt-count -d "$DEFS" -s c.state --stats c2.json -o c2.avro "$F/b.avro"
	cmp p1.avro c1.avro
	cmp p2.avro c2.avro
	cmp p.state c.state
	jq -e '.dedup.state_keys_loaded > 0 and .duplicates > 0' c2.json
	same_stats p2 c2.json
}

@test "--snapshots: the state after each segment, byte for byte cnt-dedup's, with one and two threads" {
	mkdir in
	cp "$F/b.avro" in/
	pipe "$DEFS" p -s p.state --snapshots psnaps -- -- -- "$F/a.avro" "$F/wide.avro" in/b.avro
	for th in 1 2; do
		rm -rf c.state csnaps
		cnt-count -d "$DEFS" -s c.state --snapshots csnaps --threads $th -o c.avro "$F/a.avro" "$F/wide.avro" in/b.avro
		cmp p.avro c.avro
		cmp p.state c.state
		[ "$(ls csnaps)" = "$(printf 'a.avro.state\nb.avro.state\nwide.avro.state')" ]
		for s in a wide b; do
			cmp "psnaps/$s.avro.state" "csnaps/$s.avro.state"
		done
	done
	# each snapshot is a state to start from: the rest of the log counted
	# from the snapshot of a gives what cnt-dedup gives from it
	cp csnaps/a.avro.state from-a
	cp csnaps/a.avro.state from-a-pipe
	cnt-count -d "$DEFS" -s from-a -o crest.avro "$F/wide.avro" in/b.avro
	pipe "$DEFS" rest -s from-a-pipe -- -- -- "$F/wide.avro" in/b.avro
	cmp crest.avro rest.avro
	cmp from-a c.state
	# named segments only, with distinct file names
	run --separate-stderr cnt-count -d "$DEFS" --snapshots s2 -o x.avro "$F/b.avro" in/b.avro
	[ "$status" -eq 2 ]
	[[ $stderr == "cnt-count: --snapshots: segments '$F/b.avro' and 'in/b.avro' have the same file name"* ]]
	run --separate-stderr cnt-count -d "$DEFS" --snapshots s2 -o x.avro - <"$F/a.avro"
	[ "$status" -eq 2 ]
	[[ $stderr == *"--snapshots needs the segments as named files"* ]]
	[ ! -e s2 ] && [ ! -e x.avro ]
	# a snapshot path too long is refused before anything is read
	run --separate-stderr cnt-count -d "$DEFS" --snapshots "$(printf 'd%.0s' $(seq 4100))" -o x.avro "$F/a.avro"
	[ "$status" -eq 2 ]
	[[ $stderr == "cnt-count: --snapshots: the path of the snapshot of '$F/a.avro' is too long"* ]]
	[ ! -e x.avro ]
}

@test "undeclared tenants and counters: the same rejects (JSON lines with -r, text on standard error without)" {
	pipe "$F/less.json" p -r p.rej.jsonl -- -- -- "$F/a.avro" "$F/b.avro"
	cnt-count -d "$F/less.json" -r c.rej.jsonl --stats c.json -o c.avro "$F/a.avro" "$F/b.avro"
	cmp p.avro c.avro
	[ -s c.rej.jsonl ]
	diff p.rej.jsonl c.rej.jsonl
	same_stats p c.json
	jq -e '.rejected > 0 and .rejected_by_reason.unknown_tenant > 0 and .rejected_by_reason.unknown_counter > 0' c.json
	run -0 --separate-stderr cnt-count -d "$F/less.json" -o /dev/null "$F/a.avro"
	[[ ${stderr_lines[0]} == "cnt-count: '$F/a.avro' record "*": rejected (unknown_"* ]]
	[ "${#stderr_lines[@]}" -eq "$(cnt-dedup -d "$F/less.json" "$F/a.avro" 2>&1 >/dev/null | wc -l)" ]
}

@test "spills with a small --memory, and shards: the same bytes as the pipe and as without spilling" {
	pipe "$DEFS" p -- --shards 3 -- -m 1M -T . -- "$F/wide.avro" "$F/a.avro"
	for th in 1 2; do
		cnt-count -d "$DEFS" --shards 3 -m 1M -T . --threads $th --stats c.json -o c.avro "$F/wide.avro" "$F/a.avro"
		cmp p.avro c.avro
		same_stats p c.json
		jq -e '.accumulate.spill_runs > 0' c.json
	done
	cnt-count -d "$DEFS" --shards 3 -o big.avro "$F/wide.avro" "$F/a.avro"
	cmp big.avro c.avro
	[ "$(ls -A . | grep -v -e '\.avro$' -e '\.json$')" = "" ]   # no run left behind
}

@test "standard input, and '-' among files; the codec options" {
	pipe "$DEFS" p -- -- -c null -- "$F/a.avro"
	cnt-count -d "$DEFS" -c null -o c.avro <"$F/a.avro"
	cmp p.avro c.avro
	cnt-count -d "$DEFS" -c null <"$F/a.avro" >c2.avro
	cmp p.avro c2.avro
	pipe "$DEFS" q -- -- -- "$F/a.avro" "$F/b.avro"
	cnt-count -d "$DEFS" -o c3.avro "$F/a.avro" - <"$F/b.avro"
	cmp q.avro c3.avro
}

@test "bucket files are zstandard level 1 unless --level says otherwise, from every writer; the archive keeps level 3" {
	pipe "$DEFS" p -- -- -- "$F/wide.avro"
	cnt-count -d "$DEFS" -o c.avro "$F/wide.avro"
	cmp p.avro c.avro
	for l in 1 3; do
		pipe "$DEFS" p$l -- -- --level $l -- "$F/wide.avro"
		cnt-count -d "$DEFS" --level $l -o c$l.avro "$F/wide.avro"
		cmp p$l.avro c$l.avro
	done
	cmp c.avro c1.avro
	! cmp -s c.avro c3.avro
	[ "$(cnt-cat c.avro | md5sum)" = "$(cnt-cat c3.avro | md5sum)" ]
	# other codecs keep their own default
	cnt-count -d "$DEFS" -c deflate -o d.avro "$F/wide.avro"
	cnt-count -d "$DEFS" -c deflate --level 6 -o d6.avro "$F/wide.avro"
	cmp d.avro d6.avro
	# events: the archive, and cnt-dedup's output, at zstandard's default 3
	cnt-ingest -d "$DEFS" --now "$NOW" --max-past 400d -o e.avro "$F/wide.jsonl" 2>/dev/null
	cnt-ingest -d "$DEFS" --now "$NOW" --max-past 400d --level 3 -o e3.avro "$F/wide.jsonl" 2>/dev/null
	cnt-ingest -d "$DEFS" --now "$NOW" --max-past 400d --level 1 -o e1.avro "$F/wide.jsonl" 2>/dev/null
	cmp e.avro e3.avro
	! cmp -s e.avro e1.avro
}

approx_defs() {
	cat >"$1" <<'JSON'
{"format": "cnt-definitions/1",
 "tenants": [{"tenant_id": "t", "timezone": "Europe/Berlin"}],
 "counters": [
  {"tenant_id": "t", "counter_id": "va", "versions": [{"version": 1, "type": "approx",
    "tolerated_error": 0.2, "bounds_lo": 0, "bounds_hi": 100, "windows": ["all_time", "day"]}]},
  {"tenant_id": "t", "counter_id": "ve", "versions": [{"version": 1, "type": "exact",
    "bounds_lo": 0, "bounds_hi": 100, "dimensions": ["device"], "windows": ["all_time", "day"]}]},
  {"tenant_id": "t", "counter_id": "vu", "versions": [{"version": 1, "type": "unique",
    "bounds_lo": 0, "bounds_hi": 100, "windows": ["all_time", "day"]}]}]}
JSON
}

@test "approx (sampled), dimensions, unique, and compensations from cnt-retract: the same bytes as the pipe" {
	approx_defs d.json
	"$PY" - >ev.jsonl <<-'PYEOF'
	import json
	for c in ("va", "ve", "vu"):
	    for m, n in (("m1", 300), ("m2", 20)):
	        for i in range(n):
	            print(json.dumps({"idempotency_key": "k-%s-%d" % (m, i), "tenant_id": "t", "counter_id": c,
	                "member_ref": m, "delta": 1 + i % 3, "item": "it%d" % (i % 17),
	                "event_time": 1772362800000 + i * 1000, "attrs": {"device": "web" if i % 2 else "app"}}))
	PYEOF
	cnt-ingest -d d.json --now 2026-03-01T12:00:00Z -o log.avro ev.jsonl
	cnt-retract --member m2 --tenant t --counter ve --cause fraud --requester r --authority a \
		--ledger ledger.jsonl --now 2026-03-01T12:00:00Z -o comp.avro log.avro
	[ "$(cnt-cat --count comp.avro)" -eq 20 ]
	pipe d.json p -- -- -- log.avro comp.avro
	cnt-count -d d.json --stats c.json -o c.avro log.avro comp.avro
	cmp p.avro c.avro
	same_stats p c.json
	jq -e '.accumulate.compensations == 20 and .accumulate.scaled_extra > 0 and .accumulate.dim_records > 0' c.json
}

@test "errors: no definitions is a usage error; a corrupt input fails with status 2 and leaves no output" {
	run -2 cnt-count "$F/a.avro"
	[[ $output == *"-d definitions is required"* ]]
	run -2 cnt-count -d "$DEFS" --threads 3 "$F/a.avro"
	head -c 3000 "$F/wide.avro" >cut.avro
	for th in 1 2; do
		run -2 cnt-count -d "$DEFS" --threads $th -s st -o c.avro "$F/a.avro" cut.avro
		[[ $output == "cnt-count: "*cut.avro* ]]
		[ "$(ls -A)" = "cut.avro" ]
	done
}

@test "day roll-ups: written as cnt-accumulate -d writes them; --no-days gives the file of cnt-accumulate without -d" {
	cnt-count -d "$DEFS" --stats c.json -o c.avro "$F/a.avro" "$F/b.avro"
	jq -e '.accumulate.day_records > 0' c.json
	[ "$(cnt-cat --meta c.avro | grep -c 'cnt.rollup')" -ge 1 ]
	cnt-dedup -d "$DEFS" "$F/a.avro" "$F/b.avro" | cnt-window -d "$DEFS" | cnt-accumulate -o p.avro
	for th in 1 2; do
		cnt-count -d "$DEFS" --no-days --threads $th --stats n.json -o n.avro "$F/a.avro" "$F/b.avro"
		cmp p.avro n.avro
		jq -e '.accumulate.day_records == 0' n.json
	done
	# the hourly part is the same either way: the day container follows it
	[ "$(cnt-cat n.avro | wc -l)" -lt "$(cnt-cat c.avro | wc -l)" ]
}

@test "--shard-map: the bytes of cnt-window --shard-map in the pipe; it excludes --shards" {
	cnt-window -d "$DEFS" --stats w.json -o /dev/null <(cnt-dedup -d "$DEFS" "$F/a.avro" "$F/b.avro")
	cnt-shardmap derive --now "$NOW" --target 0.01 -o map.json w.json
	jq -e '.keys | length > 0' map.json
	pipe "$DEFS" p -- --shard-map map.json -- -- "$F/a.avro" "$F/b.avro"
	for th in 1 2; do
		cnt-count -d "$DEFS" --shard-map map.json --threads $th --stats c.json -o c.avro "$F/a.avro" "$F/b.avro"
		cmp p.avro c.avro
		same_stats p c.json
	done
	# a mapped key is in more than one shard
	[ "$(cnt-cat c.avro | jq -r 'select(.shard > 0) | .member_ref' | sort -u | wc -l)" -gt 0 ]
	run -2 cnt-count -d "$DEFS" --shards 2 --shard-map map.json -o x.avro "$F/a.avro"
	[[ $output == *"--shards and --shard-map exclude each other"* ]]
	[ ! -e x.avro ]
}

@test "two threads: halves of more than a megabyte each, encoded on their own threads and merged, give the pipe's bytes" {
	# 60000 (member, hour) groups in two zones: each half's records pass
	# through several of the 1 MiB chunks its thread hands over
	"$PY" - >many.jsonl <<-'PYEOF'
	for i in range(60000):
	    print('{"idempotency_key":"n%d","tenant_id":"%s","counter_id":"dist","member_ref":"member-%d","delta":%d,"event_time":%d}'
	          % (i, "kol" if i % 2 else "utc", i % 20000, 1 + i % 7, 1772359200000 - (i % 3) * 3600000 * 7))
	PYEOF
	cnt-ingest -d "$DEFS" --now "$NOW" --max-past 400d -o many.avro many.jsonl 2>/dev/null
	pipe "$DEFS" p -- -- -c null -- many.avro
	[ "$(stat -c %s p.avro)" -gt 4000000 ]
	for th in 2 1; do
		cnt-count -d "$DEFS" -c null --threads $th --stats c.json -o c.avro many.avro
		cmp p.avro c.avro
		same_stats p c.json
	done
	# UTC's members have two days, Kolkata's one
	jq -e '.accumulate.day_records == 30000' c.json
}

@test "--split-tenants: one bucket file per tenant, the bytes of cnt-accumulate --split-tenants; it needs --no-days and excludes -o" {
	cnt-dedup -d "$DEFS" "$F/a.avro" "$F/b.avro" | cnt-window -d "$DEFS" | cnt-accumulate --split-tenants want
	for threads in 1 2; do
		cnt-count -d "$DEFS" --threads $threads --no-days --split-tenants got.$threads -s state.$threads "$F/a.avro" "$F/b.avro"
		(cd want && find . -type f | sort) >want.list
		(cd got.$threads && find . -type f | sort) >got.list
		cmp want.list got.list
		[ "$(wc -l <want.list)" -ge 2 ]   # both tenants of the input
		while read -r f; do cmp "want/$f" "got.$threads/$f"; done <want.list
		[ -s state.$threads ]
	done
	run -2 --separate-stderr cnt-count -d "$DEFS" --split-tenants x "$F/a.avro"
	[[ $stderr == *"--split-tenants needs --no-days"* ]]
	run -2 --separate-stderr cnt-count -d "$DEFS" --no-days --split-tenants x -o y.avro "$F/a.avro"
	[[ $stderr == *"-o and --split-tenants exclude each other"* ]]
	[ ! -e x ] && [ ! -e y.avro ]
}
