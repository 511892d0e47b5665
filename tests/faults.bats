#!/usr/bin/env bats
# Fault paths, the same for every tool (cnt(7), EXIT STATUS):
#   - an output that cannot be written (/dev/full): status 3, one line
#     "cnt-x: ..." naming the cause, no output or temporary file left;
#   - a closed pipe, with SIGPIPE at its default and ignored by the parent:
#     nothing on standard error, the tool ends by SIGPIPE (status 141),
#     temporaries removed;
#   - a bad option: status 2 and the usage text; trailing operands where
#     the tool takes none (or after a complete cnt-rank question): status 2;
#   - --version: "cnt-x 0.1.0" on standard output, status 0;
#   - allocation failure (CNT_FAIL_ALLOC=N, lib/base/failalloc.c) at every
#     allocation a small run makes: the run either succeeds with the same
#     output or exits 4 with one "out of memory" line, never a crash, and
#     leaves no output or temporary file;
#   - a run killed by SIGKILL leaves its temporary, which the next run
#     writing the same file removes; SIGTERM removes it at once.
#
# Inputs are the demo's (examples/), counted by the pipeline in
# setup_file, plus a large generated day (20000 events, one member each) so
# that outputs do not fit a pipe buffer.  Long option names are used: they
# are the same before and after the vocabulary change of issue 7.

bats_require_minimum_version 1.5.0

ROOT="$BATS_TEST_DIRNAME/.."
DEFS="$ROOT/examples/definitions.json"
EVENTS="$ROOT/examples/events.jsonl"
KEYRING="$ROOT/examples/keyring.json"
NOW=2026-11-30T09:00:00Z
BOARD=acme-30d-distance
TOOLS="cnt-ingest cnt-cat cnt-dedup cnt-window cnt-accumulate cnt-count cnt-diff cnt-project cnt-rank cnt-explain cnt-defs cnt-erase cnt-seal cnt-hold cnt-series cnt-stats cnt-audit cnt-expire cnt-partition cnt-cost cnt-sign cnt-shardmap"
SEAL_NOW=2026-12-02T00:00:00Z
SERIES=(--definitions "$DEFS" --counter acme/distance_m --from 2026-11-01 --to 2026-12-01)
PY=/usr/bin/python3
ADEFS="$ROOT/tests/data/audit/defs.json"
AUDIT=(cnt-audit --definitions "$ADEFS" --tenant tube --counter views --through 2026-06-09T00:00:00Z)
command -v cnt-cat >/dev/null 2>&1 || PATH="$ROOT/build/bin:$PATH"

setup_file() {
	local F=$BATS_FILE_TMPDIR
	cd "$F"
	cnt-ingest --keyring "$KEYRING" --definitions "$DEFS" --now "$NOW" --output archive.avro --rejects /dev/null "$EVENTS"
	head -n 15 "$EVENTS" >part.jsonl
	cnt-ingest --keyring "$KEYRING" --definitions "$DEFS" --now "$NOW" --output part.avro --rejects /dev/null part.jsonl
	cnt-dedup --definitions "$DEFS" --state part.state --output /dev/null part.avro
	cnt-dedup --definitions "$DEFS" --output deduped.avro archive.avro
	cnt-window --definitions "$DEFS" --output windowed.avro deduped.avro
	cnt-accumulate --output buckets.avro windowed.avro
	cnt-accumulate --output doubled.avro buckets.avro buckets.avro
	cnt-accumulate --definitions "$DEFS" --output daybuckets.avro windowed.avro
	# --stats files of a run, for cnt-stats
	cnt-window --definitions "$DEFS" --output /dev/null --stats winstats.json deduped.avro
	# a shard map of its hottest keys (cnt-shardmap)
	cnt-shardmap derive --now "$NOW" --target 0.02 --output shardmap.json winstats.json
	cnt-diff --stats diffstats.json buckets.avro doubled.avro >/dev/null || :
	cnt-project --definitions "$DEFS" --board "$BOARD" --views views --now "$NOW" buckets.avro
	# a member retracted, ready to be erased (cnt-erase rewrites copies)
	cnt-retract --member m-3307 --tenant acme --counter distance_m --cause deleted --requester dpo \
		--authority art17 --ledger erase-ledger.jsonl --now "$NOW" --output erase-comp.avro archive.avro
	printf '%s\n' '{"member_ref":"m-1042","display_name":"Ana"}' \
		'{"member_ref":"m-2210","display_name":"Ben","opted_out":true}' >members.jsonl

	# Events of a counter the demo's definitions do not declare (admitted
	# under defs2.json): cnt-dedup and cnt-window reject them.
	jq '.counters += [{"tenant_id": "acme", "counter_id": "ghost",
		"versions": [{"version": 1, "type": "exact", "windows": ["all_time"]}]}]' "$DEFS" >defs2.json
	printf '%s\n' \
		'{"idempotency_key":"g1","tenant_id":"acme","counter_id":"ghost","member_ref":"m-1","delta":1,"event_time":"2026-11-29T10:00:00Z"}' \
		'{"idempotency_key":"g2","tenant_id":"acme","counter_id":"ghost","member_ref":"m-2","delta":2,"event_time":"2026-11-29T11:00:00Z"}' >ghost.jsonl
	cnt-ingest --keyring "$KEYRING" --definitions defs2.json --now "$NOW" --output ghost.avro ghost.jsonl

	# A weekly league sealed (cnt-seal): week 48 closes Monday 2026-11-30
	# 00:00 Berlin; m-1042 is then retracted and the buckets rebuilt.
	jq '.leaderboards += [{board_id: "acme-league", tenant_id: "acme", counter_id: "distance_m",
		window: "season", scope_kind: "global", tie_break: ["member_ref_asc"], rank_numbering: "competition"}]
		| .seasons += [{season_id: "w48", board_id: "acme-league", opens_at: "2026-11-23T00:00:00",
		closes_at: "2026-11-30T00:00:00", state: "closing"}]' "$DEFS" >sdefs.json
	cnt-seal close --definitions sdefs.json --season w48 --sealed sealed --now "$SEAL_NOW" buckets.avro
	cnt-retract --member m-1042 --tenant acme --counter distance_m --cause fraud --requester t --authority a \
		--ledger retractions.jsonl --now "$SEAL_NOW" --output comp.avro deduped.avro
	cnt-retract --rebuild buckets.avro --definitions sdefs.json --output revised.avro deduped.avro comp.avro

	# A large day: 20000 events, one member each, so that every output is
	# megabytes (a pipe holds 64 KiB).
	"$PY" - >big.jsonl <<-'EOF'
	for i in range(20000):
	    print('{"idempotency_key":"big-%05d","tenant_id":"acme","counter_id":"distance_m",'
	          '"member_ref":"m-%05d","delta":%d,"event_time":"2026-11-29T%02d:%02d:00Z"}'
	          % (i, i, 1000 + i, i % 24, i % 60))
	EOF
	cnt-ingest --keyring "$KEYRING" --definitions "$DEFS" --now "$NOW" --output big.avro big.jsonl
	cnt-dedup --definitions "$DEFS" --output bigdedup.avro big.avro
	cnt-window --definitions "$DEFS" --output bigwin.avro bigdedup.avro
	cnt-accumulate --output bigbuckets.avro bigwin.avro
	cnt-project --definitions "$DEFS" --board "$BOARD" --views bigviews --now "$NOW" bigbuckets.avro

	# Holds: distance_m with a rate ceiling (4 of the demo's events held),
	# and one the big day's every event exceeds; a decisions ledger with
	# one decision in it.
	jq '.counters[0].holds = [{signal: "rate", window_s: 86400, ceiling: 20000}]' "$DEFS" >holddefs.json
	jq '.counters[0].holds = [{signal: "rate", window_s: 60, ceiling: 0}]' "$DEFS" >allhold.json
	cnt-ingest --keyring "$KEYRING" --definitions holddefs.json --now "$NOW" --output held-log.avro --holds holds.avro \
		--rejects /dev/null "$EVENTS"
	cnt-ingest --keyring "$KEYRING" --definitions allhold.json --now "$NOW" --output /dev/null --holds bigholds.avro big.jsonl
	H1=$(cnt-hold list --output-format json holds.avro | jq -r .hold_id | head -n 1)
	cnt-hold clear --decisions dec0.jsonl --by ana --now "$NOW" --output /dev/null --hold "$H1" holds.avro
	: >ret0.jsonl

	# The batch audit (cnt-audit): a day of beacons with planted rings.
	"$ROOT/tests/data/audit/gen.py" | cnt-ingest --keyring "$KEYRING" --definitions "$ADEFS" --now 2026-06-10T00:00:00Z \
		--max-past 400d --output audit-log.avro -
}

setup() {
	F=$BATS_FILE_TMPDIR
	T=$BATS_TEST_TMPDIR
	O=$T/out
	PROBLEMS=$T/problems
	: >"$PROBLEMS"
	cd "$T"
}

# problem TEXT: notes a failed expectation; check_problems fails the test
# listing them all (so one run shows every tool that is wrong).
problem() {
	printf '%s\n' "$*" >>"$PROBLEMS"
}

check_problems() {
	if [ -s "$PROBLEMS" ]; then
		cat "$PROBLEMS"
		return 1
	fi
}

# leftovers DIR: every temporary-looking entry under DIR (hidden names,
# ".NAME.tmp-PID-XXXXXX", a view's ".v000001.XXXXXX").
leftovers() {
	find "$1" -mindepth 1 -name '.*' 2>/dev/null | sort
}

# files DIR: regular files and links under DIR, relative, sorted.
files() {
	find "$1" -mindepth 1 \( -type f -o -type l \) -printf '%P\n' | sort
}

# one_line TOOL FILE: FILE holds exactly one line, "TOOL: ...".
one_line() {
	[ "$(wc -l <"$2")" -eq 1 ] && [ "$(head -c $((${#1} + 2)) "$2")" = "$1: " ]
}

# views_whole: the files in $O are only those of whole view versions (a
# version directory with its view.avro and index.bin) and their links.
views_whole() {
	local f
	[ "${1:-}" = scan ] && scan
	for f in "${FILES[@]}"; do
		case $f in
		views/*/*/v[0-9][0-9][0-9][0-9][0-9][0-9]/*)
			[ -f "$O/${f%/*}/view.avro" ] && [ -f "$O/${f%/*}/index.bin" ] || return 1 ;;
		views/*/*/current) ;;
		*) return 1 ;;
		esac
	done
}

# clean_out: after a failure, $O holds no temporary and no file but whole
# view versions (cnt-project publishes each scope's version when it is
# complete; a later failure, such as of --stats, does not take it back).
clean_out() {
	[ -z "$(leftovers "$O")" ] && views_whole scan
}

# ---- output that cannot be written --------------------------------------------

# full TOOL ARG...: runs TOOL; when no argument is /dev/full, its standard
# output is /dev/full.  Expects status 3, one line naming the cause, and
# nothing left in $O.
full() {
	local tool=$1 rc=0 to_stdout=1 a
	for a in "$@"; do [ "$a" = /dev/full ] && to_stdout=0; done
	rm -rf "$O" && mkdir -p "$O"
	if [ "$to_stdout" -eq 1 ]; then
		"$@" >/dev/full 2>"$T/err" </dev/null || rc=$?
	else
		"$@" >"$T/stdout" 2>"$T/err" </dev/null || rc=$?
	fi
	if [ "$rc" -ne 3 ]; then
		problem "$*: status $rc, not 3; stderr: $(head -c 300 "$T/err")"
	elif ! one_line "$tool" "$T/err" || ! grep -q 'No space left on device' "$T/err"; then
		problem "$*: stderr is not one '$tool: ...: No space left on device' line: $(head -c 300 "$T/err")"
	fi
	clean_out || problem "$*: left in the output directory: $(files "$O") $(leftovers "$O")"
}

@test "/dev/full: every output of every tool fails with status 3, one line, nothing left behind" {
	full cnt-ingest --keyring "$KEYRING" --definitions "$DEFS" --now "$NOW" --rejects /dev/null "$EVENTS"
	full cnt-ingest --keyring "$KEYRING" --definitions "$DEFS" --now "$NOW" --output /dev/full --rejects /dev/null "$EVENTS"
	full cnt-ingest --keyring "$KEYRING" --definitions "$DEFS" --now "$NOW" --output "$O/a.avro" --rejects /dev/full "$EVENTS"
	full cnt-ingest --keyring "$KEYRING" --definitions "$DEFS" --now "$NOW" --output "$O/a.avro" --rejects /dev/null \
		--duplicates /dev/full "$EVENTS"
	full cnt-ingest --keyring "$KEYRING" --definitions "$DEFS" --now "$NOW" --output "$O/a.avro" --rejects /dev/null \
		--stats /dev/full "$EVENTS"

	full cnt-cat "$F/archive.avro"
	full cnt-cat --output-format csv "$F/archive.avro"
	full cnt-cat --count "$F/archive.avro"
	full cnt-cat --schema "$F/archive.avro"
	full cnt-cat --meta "$F/archive.avro"

	full cnt-dedup --definitions "$DEFS" "$F/archive.avro"
	full cnt-dedup --definitions "$DEFS" --output /dev/full "$F/archive.avro"
	full cnt-dedup --definitions "$DEFS" --output "$O/a.avro" --duplicates /dev/full "$F/archive.avro"
	full cnt-dedup --definitions "$DEFS" --output "$O/a.avro" --rejects /dev/full "$F/ghost.avro"
	full cnt-dedup --definitions "$DEFS" --output "$O/a.avro" --state "$O/state" --stats /dev/full "$F/archive.avro"
	full cnt-partition --definitions "$DEFS" --parts 2 --output "$O/p" --stats /dev/full "$F/archive.avro"

	full cnt-window --definitions "$DEFS" "$F/deduped.avro"
	full cnt-window --definitions "$DEFS" --output /dev/full "$F/deduped.avro"
	full cnt-window --definitions "$DEFS" --output "$O/a.avro" --rejects /dev/full "$F/ghost.avro"
	full cnt-window --definitions "$DEFS" --output "$O/a.avro" --stats /dev/full "$F/deduped.avro"
	full cnt-window --definitions "$DEFS" --shard-map "$F/shardmap.json" --output /dev/full "$F/deduped.avro"

	full cnt-shardmap derive --now "$NOW" "$F/winstats.json"
	full cnt-shardmap derive --now "$NOW" --output /dev/full "$F/winstats.json"
	full cnt-shardmap derive --now "$NOW" --output "$O/m.json" --stats /dev/full "$F/winstats.json"
	full cnt-shardmap show "$F/shardmap.json"

	full cnt-accumulate "$F/windowed.avro"
	full cnt-accumulate --output /dev/full "$F/windowed.avro"
	full cnt-accumulate --output "$O/a.avro" --stats /dev/full "$F/windowed.avro"

	full cnt-count --definitions "$DEFS" "$F/archive.avro"
	full cnt-count --definitions "$DEFS" --output /dev/full "$F/archive.avro"
	full cnt-count --definitions "$DEFS" --output "$O/a.avro" --duplicates /dev/full "$F/archive.avro" "$F/archive.avro"
	full cnt-count --definitions "$DEFS" --output "$O/a.avro" --rejects /dev/full "$F/ghost.avro"
	full cnt-count --definitions "$DEFS" --output "$O/a.avro" --state "$O/state" --stats /dev/full "$F/archive.avro"

	full cnt-expire --definitions "$DEFS" --now "$NOW" --output "$O/a.avro" "$F/buckets.avro"
	full cnt-expire --definitions "$DEFS" --now "$NOW" --output /dev/full "$F/buckets.avro"
	full cnt-expire --definitions "$DEFS" --now "$NOW" --output "$O/a.avro" --stats /dev/full "$F/buckets.avro"

	full cnt-diff "$F/buckets.avro" "$F/doubled.avro"
	full cnt-diff --stats /dev/full "$F/buckets.avro" "$F/buckets.avro"
	full cnt-stats "$F/winstats.json" "$F/diffstats.json"
	full cnt-stats --output-format json --stats /dev/full "$F/winstats.json"
	jq '.counters[0].versions[0].type = "max"' "$DEFS" >"$T/edited.json"
	full cnt-defs check "$DEFS" "$T/edited.json"
	full cnt-defs check --stats /dev/full "$DEFS" "$DEFS"
	full cnt-diff "$F/views/$BOARD/global/current" "$F/bigviews/$BOARD/global/current"
	full cnt-diff --stats /dev/full "$F/views/$BOARD/global/current" "$F/views/$BOARD/global/current"

	full cnt-project --definitions "$DEFS" --board "$BOARD" --views "$O/views" --now "$NOW" \
		--stats /dev/full "$F/buckets.avro"

	full cnt-rank --views "$F/views" --board "$BOARD" --now "$NOW" top 10
	mkdir -p "$T/e" && cp "$F/archive.avro" "$F/erase-comp.avro" "$F/erase-ledger.jsonl" "$T/e/"
	full cnt-erase --member m-3307 --tenant acme --counter distance_m --cause deleted --requester dpo --authority art17 --now "$NOW" \
		--ledger "$T/e/erase-ledger.jsonl" --stats /dev/full "$T/e/archive.avro" "$T/e/erase-comp.avro"
	for f in archive.avro erase-comp.avro erase-ledger.jsonl; do
		cmp -s "$T/e/$f" "$F/$f" || problem "cnt-erase --stats /dev/full: $f changed"
	done
	[ -z "$(leftovers "$T/e")" ] || problem "cnt-erase --stats /dev/full: left $(leftovers "$T/e")"
	full cnt-rank --views "$F/views" --board "$BOARD" --now "$NOW" --output-format table top 10
	full cnt-rank --views "$F/views" --board "$BOARD" --now "$NOW" rank m-1042

	full cnt-seal show --season w48 --sealed "$F/sealed"
	full cnt-seal show --season w48 --sealed "$F/sealed" --output-format table
	full cnt-seal verify --sealed "$F/sealed" --stats /dev/full
	full cnt-seal close --definitions "$F/sdefs.json" --season w48 --sealed "$O/sealed" --now "$SEAL_NOW" \
		--stats /dev/full "$F/buckets.avro"
	full cnt-ingest --keyring "$KEYRING" --definitions "$F/holddefs.json" --now "$NOW" --output "$O/a.avro" --rejects /dev/null \
		--holds /dev/full "$EVENTS"
	full cnt-hold list "$F/holds.avro"
	full cnt-hold list --output-format json "$F/holds.avro"
	cp "$F/dec0.jsonl" "$T/dec.jsonl"
	full cnt-hold clear --decisions "$T/dec.jsonl" --by ana --now "$NOW" --signal rate --output /dev/full "$F/holds.avro"
	cmp -s "$T/dec.jsonl" "$F/dec0.jsonl" || problem "cnt-hold clear to /dev/full: the decisions ledger changed"
	full cnt-hold list --stats /dev/full "$F/holds.avro"
	full cnt-series "${SERIES[@]}" "$F/buckets.avro"
	full cnt-series "${SERIES[@]}" --output-format json --stats /dev/full "$F/buckets.avro"
	full "${AUDIT[@]}" --dry-run "$F/audit-log.avro"
	full "${AUDIT[@]}" --dry-run --stats /dev/full "$F/audit-log.avro"
	full "${AUDIT[@]}" --requester r --authority a --ledger "$T/al.jsonl" --audits "$T/aa.jsonl" \
		--output /dev/full "$F/audit-log.avro"
	full "${AUDIT[@]}" --requester r --authority a --ledger "$T/al.jsonl" --audits "$T/aa.jsonl" \
		--output "$O/c.avro" "$F/audit-log.avro"
	[ ! -s "$T/al.jsonl" ] && [ ! -s "$T/aa.jsonl" ] || problem "cnt-audit to /dev/full: a ledger was written"
	full cnt-cost --definitions "$DEFS" "$F/archive.avro"
	full cnt-cost --definitions "$DEFS" --output-format json --stats /dev/full "$F/archive.avro"
	check_problems
}

# ---- a closed pipe -------------------------------------------------------------

# head1 MODE TOOL ARG...: TOOL's standard output into `head -c 1`, with
# SIGPIPE ignored by the parent shell (MODE ignore; bash passes an ignored
# signal on to what it runs) or at its default.  Expects status 141 and
# nothing on standard error.
head1() {
	local mode=$1 st
	shift
	if [ "$mode" = ignore ]; then
		st=$(trap '' PIPE; "$@" 2>"$T/err" </dev/null | head -c 1 >/dev/null; echo "${PIPESTATUS[0]}")
	else
		st=$("$@" 2>"$T/err" </dev/null | head -c 1 >/dev/null; echo "${PIPESTATUS[0]}")
	fi
	[ "$st" -eq 141 ] || problem "SIGPIPE $mode: $*: status $st, not 141; stderr: $(head -c 300 "$T/err")"
	[ ! -s "$T/err" ] || problem "SIGPIPE $mode: $*: said something: $(head -c 300 "$T/err")"
}

# closed MODE TOOL ARG...: TOOL with standard output a pipe whose reading end
# is already closed (so even a one-line answer meets it), SIGPIPE ignored or
# at its default.  Expects status 141, nothing on standard error, nothing
# left in $O.
closed() {
	local mode=$1 st
	shift
	rm -rf "$O" && mkdir -p "$O"
	st=$("$PY" -c '
import os, signal, subprocess, sys
mode, err, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
r, w = os.pipe()
os.close(r)
disp = signal.SIG_IGN if mode == "ignore" else signal.SIG_DFL
with open(err, "wb") as e:
    p = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=w, stderr=e,
                       preexec_fn=lambda: signal.signal(signal.SIGPIPE, disp))
print(128 - p.returncode if p.returncode < 0 else p.returncode)
' "$mode" "$T/err" "$@")
	[ "$st" -eq 141 ] || problem "closed pipe, SIGPIPE $mode: $*: status $st, not 141; stderr: $(head -c 300 "$T/err")"
	[ ! -s "$T/err" ] || problem "closed pipe, SIGPIPE $mode: $*: said something: $(head -c 300 "$T/err")"
	clean_out || problem "closed pipe, SIGPIPE $mode: $*: left in the output directory: $(files "$O") $(leftovers "$O")"
}

@test "SIGPIPE: every tool writing into '| head -c 1' ends quietly by SIGPIPE, at default and ignored" {
	local mode
	for mode in default ignore; do
		head1 $mode cnt-ingest --keyring "$KEYRING" --definitions "$DEFS" --now "$NOW" "$F/big.jsonl"
		head1 $mode cnt-cat "$F/big.avro"
		head1 $mode cnt-cat --output-format csv "$F/big.avro"
		head1 $mode cnt-dedup --definitions "$DEFS" "$F/big.avro"
		head1 $mode cnt-window --definitions "$DEFS" "$F/bigdedup.avro"
		head1 $mode cnt-accumulate "$F/bigwin.avro"
		head1 $mode cnt-count --definitions "$DEFS" "$F/big.avro"
		head1 $mode cnt-diff "$F/bigbuckets.avro" "$F/buckets.avro"
		head1 $mode cnt-diff "$F/bigviews/$BOARD/global/current" "$F/views/$BOARD/global/current"
		head1 $mode cnt-rank --views "$F/bigviews" --board "$BOARD" --now "$NOW" top 10000
		head1 $mode cnt-rank --views "$F/bigviews" --board "$BOARD" --now "$NOW" --output-format table top 10000
		head1 $mode cnt-hold list "$F/bigholds.avro"
		head1 $mode cnt-hold list --output-format json "$F/bigholds.avro"
		head1 $mode cnt-series --definitions "$DEFS" --counter acme/distance_m --from 2026-01-01 --to 2027-01-01 \
			--granularity hour "$F/buckets.avro"
		head1 $mode cnt-audit --definitions "$DEFS" --tenant acme --counter distance_m --through "$NOW" \
			--dry-run "$F/big.avro"
	done
	check_problems
}

@test "SIGPIPE: a pipe closed before the first write, every tool, at default and ignored; temporaries removed" {
	local mode
	for mode in default ignore; do
		closed $mode cnt-ingest --keyring "$KEYRING" --definitions "$DEFS" --now "$NOW" --rejects /dev/null "$EVENTS"
		# the rejects go to the closed pipe while the output is a file
		closed $mode cnt-ingest --keyring "$KEYRING" --definitions "$DEFS" --now "$NOW" --output "$O/a.avro" \
			--rejects /dev/stdout "$EVENTS"
		closed $mode cnt-cat --count "$F/archive.avro"
		closed $mode cnt-dedup --definitions "$DEFS" --state "$O/state" "$F/archive.avro"
		closed $mode cnt-window --definitions "$DEFS" --output "$O/a.avro" --rejects /dev/stdout "$F/ghost.avro"
		closed $mode cnt-accumulate --stats "$O/st.json" "$F/windowed.avro"
		closed $mode cnt-count --definitions "$DEFS" --state "$O/state" --stats "$O/st.json" "$F/archive.avro"
		closed $mode cnt-diff "$F/buckets.avro" "$F/doubled.avro"
		closed $mode cnt-diff "$F/views/$BOARD/global/current" "$F/bigviews/$BOARD/global/current"
		closed $mode cnt-project --definitions "$DEFS" --board "$BOARD" --views "$O/views" --now "$NOW" \
			--no-publish --stats /dev/stdout "$F/buckets.avro"
		closed $mode cnt-rank --views "$F/views" --board "$BOARD" --now "$NOW" rank m-1042
		closed $mode cnt-rank --views "$F/views" --board "$BOARD" --now "$NOW" --output-format table top 3
		closed $mode cnt-seal show --season w48 --sealed "$F/sealed"
		closed $mode cnt-seal close --definitions "$F/sdefs.json" --season w48 --sealed "$O/sealed" \
			--now "$SEAL_NOW" --stats /dev/stdout "$F/buckets.avro"
		closed $mode cnt-hold list --output-format json "$F/holds.avro"
		closed $mode cnt-series "${SERIES[@]}" --output-format json "$F/buckets.avro"
		closed $mode cnt-stats --stats "$O/st.json" "$F/winstats.json" "$F/diffstats.json"
		closed $mode "${AUDIT[@]}" --dry-run "$F/audit-log.avro"
		closed $mode cnt-cost --definitions "$DEFS" "$F/archive.avro"
		closed $mode cnt-cost --definitions "$DEFS" --output-format json "$F/archive.avro"
		closed $mode "${AUDIT[@]}" --requester r --authority a --ledger "$T/al.jsonl" --audits "$T/aa.jsonl" \
			--output "$O/c.avro" "$F/audit-log.avro"
		[ ! -s "$T/al.jsonl" ] && [ ! -s "$T/aa.jsonl" ] || problem "cnt-audit into a closed pipe: a ledger was written"
	done
	check_problems
}

# ---- usage errors and --version ---------------------------------------------

# usage_error TOOL ARG...: status 2, nothing on standard output, standard
# error says what is wrong and shows the usage text.
usage_error() {
	local tool=$1 rc=0
	"$@" >"$T/stdout" 2>"$T/err" </dev/null || rc=$?
	[ "$rc" -eq 2 ] || problem "$*: status $rc, not 2; stderr: $(head -c 300 "$T/err")"
	[ ! -s "$T/stdout" ] || problem "$*: printed on standard output: $(head -c 300 "$T/stdout")"
	grep -q "^usage: $tool " "$T/err" || problem "$*: no usage text on standard error: $(head -c 300 "$T/err")"
	[ "$(head -c $((${#tool} + 2)) "$T/err")" = "$tool: " ] ||
		problem "$*: standard error does not start with '$tool: ': $(head -c 300 "$T/err")"
}

@test "a bad option: status 2, the message and the usage text, for every tool" {
	local t
	for t in $TOOLS; do
		usage_error "$t" --bogus-option
		usage_error "$t" -Z
		usage_error "$t" --stats
		usage_error "$t" --help=yes
	done
	check_problems
}

@test "trailing operands where a tool takes none, or after a complete question, are a usage error" {
	local V="$F/views" q
	usage_error cnt-diff "$F/buckets.avro" "$F/buckets.avro" "$F/doubled.avro"
	usage_error cnt-diff "$F/buckets.avro"
	for q in "top 3 extra" "top 3 --bogus" "top 2x" "top -1" "top 0x10" "rank m-1042 extra" \
		"around m-1042 2 extra" "around m-1042 2x" "value m-1042 extra" "top 3 4" "where m-1042" ""; do
		# shellcheck disable=SC2086
		usage_error cnt-rank --views "$V" --board "$BOARD" --now "$NOW" $q
	done
	usage_error cnt-project --views "$V" --board "$BOARD" --publish 1 extra
	usage_error cnt-project --views "$V" --board "$BOARD" --scope global --freeze extra
	usage_error cnt-project --views "$V" --board "$BOARD" --scope global --unfreeze extra
	check_problems
}

@test "cnt-rank: options may follow the question (GNU permutation); -- ends the options" {
	run -0 cnt-rank top 3 --views "$F/views" --board "$BOARD" --now "$NOW" --output-format table
	[[ ${lines[0]} == "board $BOARD "* ]]
	[ "${#lines[@]}" -eq 5 ]
	[[ ${lines[4]} == "token cnt1:$BOARD:global:1:"* ]]
	run -0 cnt-rank --views "$F/views" --board "$BOARD" --now "$NOW" -- top 3
	[ "$(echo "$output" | jq '.entries | length')" -eq 3 ]
}

@test "--version prints 'cnt-x VERSION' (the Makefile's) for every tool" {
	local t version
	version=$(sed -n 's/^VERSION *:= *//p' "$ROOT/Makefile")
	[ -n "$version" ]
	for t in $TOOLS; do
		run -0 --separate-stderr "$t" --version
		[ "$output" = "$t $version" ] || problem "$t --version printed '$output'"
		[ -z "$stderr" ] || problem "$t --version said on standard error: $stderr"
	done
	check_problems
}

# ---- allocation failure --------------------------------------------------------

# sweep STATUS PREP CHECK TOOL ARG...: runs TOOL ARG... (writing into $O,
# standard output to $T/stdout) once as a reference, which must end with
# STATUS; then with CNT_FAIL_ALLOC=N for N = 1, 2, ... until 5 runs in a row
# succeed (the run no longer reaches an N-th allocation), at most CAP runs.
# Each run must either end with STATUS and give the reference's standard
# output and files, or end with status 4 and one "out of memory" line,
# leaving no output or temporary file (CHECK names a function that says
# whether what $O holds after a failure is allowed).  PREP names a
# function that sets up $O before each run.  KNOB=CNT_FAIL_JSON_ALLOC
# walks jansson's allocations instead of cnt's own (base/jsonload.h).
CAP=${CNT_FAULTS_CAP:-1000}
KNOB=CNT_FAIL_ALLOC
# The CHECKs that pass only when the files PREP made are there unchanged,
# byte for byte (so the next run needs no fresh PREP).
EXACT_CHECKS="state_kept ledgers_kept guard_kept erase_kept sealed_kept rledger_kept"

# bats runs a DEBUG trap before every command of a test (to report where it
# failed), which costs more than the tool itself in a loop of thousands of
# runs: the sweep runs without it (its findings go to $PROBLEMS, which
# check_problems reports) and puts it back.  (When a command inside fails
# the test under errexit, the trap stays off: bats has the failing line by
# then, and reports it as this call.)
sweep() {
	local trap_debug
	trap_debug=$(trap -p DEBUG)
	trap - DEBUG
	sweep_runs "$@"
	eval "$trap_debug"
}

sweep_runs() {
	local want=$1 prep=$2 check=$3 tool=$4 n=0 ok=0 rc last=0 before ref f prepped same exact
	local -a err plines
	shift 3
	before=$(wc -l <"$PROBLEMS")
	rm -rf "$O" && mkdir -p "$O" && $prep
	rc=0
	"$@" >"$T/ref.stdout" 2>"$T/err" </dev/null || rc=$?
	if [ "$rc" -ne "$want" ]; then
		problem "$*: the reference run ends with $rc, not $want: $(head -c 300 "$T/err")"
		return
	fi
	scan
	ref="${FILES[*]}"
	rm -rf "$T/ref" && cp -a "$O" "$T/ref"
	# what PREP makes, and whether CHECK, passing, proves it unchanged
	rm -rf "$O" && mkdir -p "$O" && $prep
	scan
	prepped="${ALL[*]}"
	same=0
	case " $EXACT_CHECKS " in *" $check "*) exact=1 ;; *) exact=0 ;; esac
	[ "${#FILES[@]}" -eq 0 ] && exact=1
	while [ "$ok" -lt 5 ]; do
		n=$((n + 1))
		if [ "$n" -gt "$CAP" ]; then
			problem "$tool: still failing at $KNOB=$CAP (more allocations than the cap?)"
			return
		fi
		# $O is made afresh by PREP, unless the last run left it as PREP
		# makes it: the same entries, and the files' contents unchanged (no
		# file, or a CHECK that compares them passed)
		if [ "${ALL[*]}" != "$prepped" ] || [ "$same" -eq 0 ] || [ ! -d "$O" ]; then
			rm -rf "$O" && mkdir -p "$O" && $prep
		fi
		rc=0
		if [ "$KNOB" = CNT_FAIL_ALLOC ]; then
			CNT_FAIL_ALLOC=$n "$@" >"$T/stdout" 2>"$T/err" </dev/null || rc=$?
		else
			CNT_FAIL_JSON_ALLOC=$n "$@" >"$T/stdout" 2>"$T/err" </dev/null || rc=$?
		fi
		scan
		same=0
		if [ "$rc" -eq "$want" ]; then
			ok=$((ok + 1))
			cmp -s "$T/stdout" "$T/ref.stdout" ||
				problem "$tool $KNOB=$n: succeeded with another standard output"
			[ "${FILES[*]}" = "$ref" ] ||
				problem "$tool $KNOB=$n: succeeded with other files: ${FILES[*]}"
			# the data files, byte for byte (--stats may hold timings)
			for f in $ref; do
				case $f in *.json) continue ;; esac
				# a link (a view's current) is compared by its target
				if [ -L "$O/$f" ]; then
					[ "$(readlink "$O/$f")" = "$(readlink "$T/ref/$f")" ] ||
						problem "$tool $KNOB=$n: succeeded, but $f points elsewhere"
					continue
				fi
				cmp -s "$O/$f" "$T/ref/$f" || problem "$tool $KNOB=$n: succeeded, but $f differs"
			done
			continue
		fi
		ok=0
		last=$n
		mapfile -t err <"$T/err"
		if [ "$rc" -ne 4 ]; then
			problem "$tool $KNOB=$n: status $rc, not 4 (or $want); stderr: ${err[*]}"
		elif [ "${#err[@]}" -ne 1 ] || [[ ${err[0]} != "$tool: "*"out of memory"* ]]; then
			problem "$tool $KNOB=$n: stderr is not one '$tool: ... out of memory' line: ${err[*]}"
		fi
		[ "${#LEFT[@]}" -eq 0 ] || problem "$tool $KNOB=$n: temporaries left: ${LEFT[*]}"
		if $check; then
			same=$exact
		else
			problem "$tool $KNOB=$n: left in the output directory: ${FILES[*]}"
		fi
		mapfile -t plines <"$PROBLEMS"
		if [ "${#plines[@]}" -gt $((before + 10)) ]; then
			problem "$tool: (stopped at $KNOB=$n after 10 problems)"
			return
		fi
	done
	# Some allocation must have been reached, or the knob does nothing.
	# (CNT_FAIL_JSON_ALLOC is in every build; CNT_FAIL_ALLOC only in FAILALLOC=1's)
	if [ "$last" -eq 0 ] && [ "$KNOB" = CNT_FAIL_ALLOC ]; then
		problem "$tool: no run failed: is it built with FAILALLOC=1?"
	elif [ "$last" -eq 0 ]; then
		problem "$tool: no run failed under $KNOB: does the tool reach jansson?"
	fi
	echo "# $tool: $last allocations failed cleanly" >&3
}

# scan: LEFT, the temporary-looking entries of $O (a name starting with a
# dot; not looked into), FILES, its regular files and links (relative paths,
# sorted), and ALL, every entry of any kind that is not under a hidden one.
# Globbing only, no process: it runs after each of thousands of runs.
scan() {
	local f rel opts=
	LEFT=() FILES=() ALL=()
	shopt -q globstar || opts+=" globstar"
	shopt -q dotglob || opts+=" dotglob"
	shopt -q nullglob || opts+=" nullglob"
	# shellcheck disable=SC2086
	[ -z "$opts" ] || shopt -s $opts
	for f in "$O"/**; do
		rel=${f#"$O"/}
		[ -n "$rel" ] || continue
		case /$rel in
		*/.*/*) continue ;;
		esac
		ALL+=("$rel")
		case /$rel in
		*/.*) LEFT+=("$rel") ;;
		*) if [ -L "$f" ] || [ -f "$f" ]; then FILES+=("$rel"); fi ;;
		esac
	done
	# shellcheck disable=SC2086
	[ -z "$opts" ] || shopt -u $opts
}

no_prep() { :; }
# nothing in $O after a failure
nothing_left() { [ "${#FILES[@]}" -eq 0 ]; }
# the dedup state given to the run is there, unchanged
state_prep() { cp "$F/part.state" "$O/dedup.state"; }
state_kept() { [ "${FILES[*]}" = "dedup.state" ] && cmp -s "$O/dedup.state" "$F/part.state"; }
tmp_prep() { mkdir -p "$O/tmp"; }
# the ledgers given to cnt-hold are there, unchanged
ledger_prep() { cp "$F/dec0.jsonl" "$O/dec.jsonl" && cp "$F/ret0.jsonl" "$O/ret.jsonl"; }
ledgers_kept() {
	[ "${FILES[*]}" = "dec.jsonl ret.jsonl" ] && cmp -s "$O/dec.jsonl" "$F/dec0.jsonl" &&
		cmp -s "$O/ret.jsonl" "$F/ret0.jsonl"
}
@test "allocation failure: cnt-ingest fails cleanly at every allocation" {
	sweep 0 no_prep nothing_left cnt-ingest --keyring "$KEYRING" --definitions "$DEFS" --now "$NOW" --output "$O/a.avro" \
		--rejects "$O/rejects.jsonl" --duplicates "$O/dups.jsonl" --stats "$O/st.json" "$EVENTS"
	check_problems
}

@test "allocation failure: cnt-ingest --members fails cleanly at every allocation" {
	sweep 0 no_prep nothing_left cnt-ingest --definitions "$DEFS" --now "$NOW" --output "$O/a.avro" \
		--rejects "$O/rejects.jsonl" --members "$O/members" --stats "$O/st.json" "$EVENTS"
	check_problems
}

@test "allocation failure: cnt-cost fails cleanly at every allocation" {
	sweep 0 no_prep nothing_left cnt-cost --definitions "$DEFS" --stats "$O/st.json" "$F/archive.avro"
	sweep 0 no_prep nothing_left cnt-cost --definitions "$DEFS" --output-format json "$F/archive.avro"
	sweep 5 no_prep nothing_left cnt-cost --definitions "$DEFS" --tenant kahani "$F/archive.avro"
	check_problems
}

@test "allocation failure: cnt-ingest --holds fails cleanly at every allocation" {
	sweep 0 no_prep nothing_left cnt-ingest --keyring "$KEYRING" --definitions "$F/holddefs.json" --now "$NOW" --output "$O/a.avro" \
		--rejects "$O/rejects.jsonl" --holds "$O/holds.avro" --stats "$O/st.json" "$EVENTS"
	check_problems
}

@test "allocation failure: cnt-hold fails cleanly at every allocation, its ledgers untouched" {
	sweep 0 ledger_prep ledgers_kept cnt-hold list --decisions "$O/dec.jsonl" --output-format json "$F/holds.avro"
	sweep 0 ledger_prep ledgers_kept cnt-hold list --decisions "$O/dec.jsonl" "$F/holds.avro"
	sweep 0 ledger_prep ledgers_kept cnt-hold clear --decisions "$O/dec.jsonl" --by ana --now "$NOW" \
		--signal rate --output "$O/seg.avro" --stats "$O/st.json" "$F/holds.avro"
	sweep 0 ledger_prep ledgers_kept cnt-hold reject --decisions "$O/dec.jsonl" --ledger "$O/ret.jsonl" \
		--by ana --now "$NOW" --signal rate --stats "$O/st.json" "$F/holds.avro"
	check_problems
}

# cnt-audit: nothing but its ledgers, empty, after a failure
audit_left() {
	local f
	for f in "${FILES[@]}"; do
		case $f in audits.jsonl | ledger.jsonl) [ ! -s "$O/$f" ] || return 1 ;; *) return 1 ;; esac
	done
}

# The sweep itself, on a stand-in tool that fails cleanly at its first six
# "allocations" except for one fault of MODE's kind at one of them: each
# fault is found, once (a run after a fault starts from a fresh PREP, so it
# does not inherit the damage), and a clean stand-in gives no problem.
@test "allocation failure: the sweep finds a file left, a temporary, a changed state and a wrong status" {
	mkdir -p "$T/bin"
	cat >"$T/bin/stand-in" <<'EOF'
#!/bin/bash
n=${CNT_FAIL_ALLOC:-0}
if [ "$n" -ge 1 ] && [ "$n" -le 6 ]; then
	case $MODE:$n in
	left:3) echo x >"$O/junk" ;;
	temporary:4) echo x >"$O/.junk.tmp-1" ;;
	state:3) echo x >>"$O/dedup.state" ;;
	status:5) exit 3 ;;
	esac
	echo "stand-in: out of memory" >&2
	exit 4
fi
if [ -e "$O/dedup.state" ] && ! cmp -s "$O/dedup.state" "$F/part.state"; then exit 9; fi
echo out
EOF
	chmod +x "$T/bin/stand-in"
	export O F MODE
	local -a want=(
		"left no_prep nothing_left|stand-in CNT_FAIL_ALLOC=3: left in the output directory: junk"
		"temporary no_prep nothing_left|stand-in CNT_FAIL_ALLOC=4: temporaries left: .junk.tmp-1"
		"state state_prep state_kept|stand-in CNT_FAIL_ALLOC=3: left in the output directory: dedup.state"
		"status state_prep state_kept|stand-in CNT_FAIL_ALLOC=5: status 3, not 4 (or 0); stderr: "
		"none state_prep state_kept|")
	local w args
	for w in "${want[@]}"; do
		read -r MODE args <<<"${w%%|*}"
		: >"$PROBLEMS"
		# shellcheck disable=SC2086
		PATH="$T/bin:$PATH" sweep 0 $args stand-in
		[ "$(cat "$PROBLEMS")" = "${w#*|}" ] || { echo "$MODE: $(cat "$PROBLEMS")"; false; }
	done
}

@test "allocation failure: cnt-audit fails cleanly at every allocation, no ledger line written" {
	sweep 0 no_prep nothing_left "${AUDIT[@]}" --dry-run --output-format json --stats "$O/st.json" "$F/audit-log.avro"
	sweep 0 no_prep audit_left "${AUDIT[@]}" --requester r --authority a --ledger "$O/ledger.jsonl" \
		--audits "$O/audits.jsonl" --now 2026-06-09T03:00:00Z --output "$O/c.avro" --stats "$O/st.json" \
		"$F/audit-log.avro"
	check_problems
}

@test "allocation failure: cnt-cat fails cleanly at every allocation" {
	sweep 0 no_prep nothing_left cnt-cat --iso-time "$F/archive.avro" "$F/buckets.avro"
	sweep 0 no_prep nothing_left cnt-cat --as raw "$F/archive.avro"
	check_problems
}

@test "allocation failure: cnt-dedup fails cleanly at every allocation, its state file untouched" {
	sweep 0 state_prep state_kept cnt-dedup --definitions "$DEFS" --state "$O/dedup.state" \
		--output "$O/a.avro" --duplicates "$O/dups.avro" --stats "$O/st.json" "$F/archive.avro"
	check_problems
}

@test "allocation failure: cnt-partition fails cleanly at every allocation, no part left" {
	sweep 0 no_prep nothing_left cnt-partition --definitions "$DEFS" --parts 3 --output "$O/part" \
		--stats "$O/st.json" "$F/archive.avro"
	check_problems
}

# --snapshots: whatever snapshots a failed run completed are whole state
# files, the same as a complete run leaves, and the state is kept.
snaps_ok() {
	local f
	for f in "${FILES[@]}"; do
		case $f in
		dedup.state) cmp -s "$O/dedup.state" "$F/part.state" || return 1 ;;
		snaps/*.state) cmp -s "$O/$f" "$T/ref/$f" || return 1 ;;
		*) return 1 ;;
		esac
	done
}

@test "allocation failure: cnt-dedup --snapshots fails cleanly at every allocation" {
	sweep 0 state_prep snaps_ok cnt-dedup --definitions "$DEFS" --state "$O/dedup.state" \
		--snapshots "$O/snaps" --output "$O/a.avro" "$F/part.avro" "$F/archive.avro"
	check_problems
}

@test "allocation failure: cnt-count --snapshots and --base fail cleanly at every allocation, one thread and two" {
	# with two threads a snapshot is written on the reading thread
	local CAP=$((CAP * 2))
	sweep 0 state_prep state_kept cnt-count --definitions "$DEFS" --state "$O/dedup.state" --no-days \
		--base "$F/buckets.avro" --output "$O/a.avro" "$F/part.avro"
	sweep 0 state_prep snaps_ok cnt-count --definitions "$DEFS" --state "$O/dedup.state" --threads 1 --no-days \
		--snapshots "$O/snaps" --output "$O/a.avro" "$F/part.avro" "$F/archive.avro"
	sweep 0 state_prep snaps_ok cnt-count --definitions "$DEFS" --state "$O/dedup.state" --no-days \
		--snapshots "$O/snaps" --output "$O/a.avro" "$F/part.avro" "$F/archive.avro"
	check_problems
}

@test "allocation failure: cnt-shardmap, and cnt-window and cnt-partition with a map, fail cleanly at every allocation" {
	sweep 0 no_prep nothing_left cnt-shardmap derive --now 2026-12-01T00:00:00Z --map "$F/shardmap.json" \
		--output "$O/m.json" --stats "$O/st.json" "$F/winstats.json" "$F/winstats.json"
	sweep 0 no_prep nothing_left cnt-shardmap show "$F/shardmap.json"
	sweep 0 no_prep nothing_left cnt-window --definitions "$DEFS" --shard-map "$F/shardmap.json" --output "$O/a.avro" \
		--stats "$O/st.json" "$F/deduped.avro"
	sweep 0 no_prep nothing_left cnt-partition --definitions "$DEFS" --shard-map "$F/shardmap.json" --parts 3 \
		--output "$O/part" --stats "$O/st.json" "$F/archive.avro"
	check_problems
}

@test "allocation failure: cnt-window fails cleanly at every allocation" {
	sweep 0 no_prep nothing_left cnt-window --definitions "$DEFS" --output "$O/a.avro" \
		--rejects "$O/rejects.jsonl" --stats "$O/st.json" "$F/deduped.avro" "$F/ghost.avro"
	check_problems
}

@test "allocation failure: cnt-accumulate fails cleanly at every allocation" {
	sweep 0 tmp_prep nothing_left cnt-accumulate --output "$O/a.avro" --tmpdir "$O/tmp" \
		--stats "$O/st.json" "$F/windowed.avro" "$F/buckets.avro"
	check_problems
}

@test "allocation failure: cnt-accumulate with day roll-ups, cnt-project and cnt-expire reading them fail cleanly at every allocation" {
	sweep 0 tmp_prep nothing_left cnt-accumulate --definitions "$DEFS" --output "$O/a.avro" --tmpdir "$O/tmp" \
		--stats "$O/st.json" "$F/windowed.avro"
	sweep 0 no_prep views_whole cnt-project --definitions "$DEFS" --board "$BOARD" --views "$O/views" \
		--now "$NOW" "$F/daybuckets.avro"
	sweep 0 no_prep nothing_left cnt-expire --definitions "$DEFS" --now "$NOW" --output "$O/a.avro" \
		"$F/daybuckets.avro"
	check_problems
}

@test "allocation failure: cnt-count fails cleanly at every allocation, its state file untouched, one thread and two" {
	# three inputs, all four outputs and two threads make about 1000
	# allocations, and with threads the count varies from run to run:
	# twice the usual cap
	local CAP=$((CAP * 2))
	sweep 0 state_prep state_kept cnt-count --definitions "$DEFS" --state "$O/dedup.state" --threads 1 --no-days \
		--output "$O/a.avro" --duplicates "$O/dups.avro" --rejects "$O/rej.jsonl" \
		--stats "$O/st.json" "$F/archive.avro" "$F/part.avro" "$F/ghost.avro"
	sweep 0 state_prep state_kept cnt-count --definitions "$DEFS" --state "$O/dedup.state" --no-days \
		--output "$O/a.avro" --duplicates "$O/dups.avro" --rejects "$O/rej.jsonl" \
		--stats "$O/st.json" "$F/archive.avro" "$F/part.avro" "$F/ghost.avro"
	check_problems
}

@test "allocation failure: cnt-count writing day roll-ups fails cleanly at every allocation, one thread and two" {
	sweep 0 state_prep state_kept cnt-count --definitions "$DEFS" --state "$O/dedup.state" --threads 1 \
		--output "$O/a.avro" --stats "$O/st.json" "$F/archive.avro"
	# two: the halves written on threads of their own (cnt_accum_finish_halves)
	sweep 0 state_prep state_kept cnt-count --definitions "$DEFS" --state "$O/dedup.state" \
		--output "$O/a.avro" --stats "$O/st.json" "$F/archive.avro"
	check_problems
}

@test "allocation failure: tenant separation (--split-tenants, --tenant) fails cleanly at every allocation" {
	sweep 0 tmp_prep nothing_left cnt-accumulate --split-tenants "$O/split" --tmpdir "$O/tmp" \
		--stats "$O/st.json" "$F/buckets.avro"
	sweep 0 tmp_prep nothing_left cnt-count --definitions "$DEFS" --no-days --split-tenants "$O/split" \
		--tmpdir "$O/tmp" --stats "$O/st.json" "$F/archive.avro"
	sweep 0 no_prep nothing_left cnt-cat --tenant acme "$F/views/$BOARD/global/current/view.avro"
	sweep 5 no_prep nothing_left cnt-cat --tenant acme "$F/buckets.avro"
	sweep 5 no_prep nothing_left cnt-rank --tenant kahani -w "$F/views" -b "$BOARD" --now "$NOW" top 3
	check_problems
}

@test "allocation failure: cnt-diff fails cleanly at every allocation" {
	sweep 1 no_prep nothing_left cnt-diff --stats "$O/st.json" "$F/buckets.avro" "$F/doubled.avro"
	sweep 1 no_prep nothing_left cnt-diff --stats "$O/st.json" "$F/views/$BOARD/global/current" \
		"$F/bigviews/$BOARD/global/current"
	check_problems
}

@test "allocation failure: cnt-expire fails cleanly at every allocation" {
	sweep 0 no_prep nothing_left cnt-expire --definitions "$DEFS" --now "$NOW" --output "$O/a.avro" \
		--stats "$O/st.json" "$F/buckets.avro"
	sweep 0 no_prep nothing_left cnt-expire --definitions "$DEFS" --now "$NOW" --dry-run "$F/buckets.avro"
	check_problems
}

@test "allocation failure: cnt-stats fails cleanly at every allocation" {
	sweep 1 no_prep nothing_left cnt-stats --stats "$O/st.json" "$F/winstats.json" "$F/diffstats.json"
	sweep 1 no_prep nothing_left cnt-stats --output-format json --threshold late_ratio=0.5 "$F/winstats.json"
	check_problems
}

@test "allocation failure: cnt-sign fails cleanly at every allocation" {
	jq -c 'select(.tenant_id == "acme") | del(.signature)' "$EVENTS" >"$T/acme.jsonl"
	sweep 0 no_prep nothing_left cnt-sign --key "$ROOT/examples/acme-app-2026.key" --stats "$O/st.json" \
		-o "$O/signed.jsonl" "$T/acme.jsonl"
	sweep 0 no_prep nothing_left cnt-sign --canonical -o "$O/canon.txt" "$T/acme.jsonl"
	check_problems
}

# jansson's allocations are not cnt's (CNT_FAIL_ALLOC does not reach them):
# CNT_FAIL_JSON_ALLOC walks them.  A failure that jansson does not report
# (a key cut short in a dump, a string in a load) would give a signed line
# or a ledger line that differs, with status 0; one in its lexer, a heap
# overflow.  (The definitions' load and a fingerprint under every failed
# allocation: tests/unit/test_jsonload.c.)

# the retraction ledger given to cnt-retract is there, unchanged
rledger_prep() { cp "$F/retractions.jsonl" "$O/ledger.jsonl"; }
rledger_kept() { [ "${FILES[*]}" = "ledger.jsonl" ] && cmp -s "$O/ledger.jsonl" "$F/retractions.jsonl"; }
@test "jansson's allocations failing: cnt-sign, cnt-retract, cnt-shardmap and cnt-rank fail cleanly at every one, or write the same bytes" {
	KNOB=CNT_FAIL_JSON_ALLOC CAP=5000
	# a map and a view's descriptor: loads that jansson's lexer took past
	# a failed allocation into a heap overflow (lib/base/jsonload.c)
	sweep 0 no_prep nothing_left cnt-shardmap show "$F/shardmap.json"
	cnt-project --definitions "$DEFS" --board acme-spring-5k --season acme-2026-spring --views "$T/sv" \
		--now "$NOW" --scopes-from "$F/archive.avro" "$F/buckets.avro"
	cnt-rank --views "$T/sv" --board acme-spring-5k --scope eu --now "$NOW" --guard "$T/G0" value m-1042 >/dev/null
	sweep 0 guard_prep guard_kept cnt-rank --views "$T/sv" --board acme-spring-5k --scope eu --now "$NOW" \
		--guard "$O/G" --stats "$O/st.json" value m-7
	jq -c 'select(.tenant_id == "acme") | del(.signature)' "$EVENTS" | head -n 4 >"$T/acme.jsonl"
	sweep 0 no_prep nothing_left cnt-sign --key "$ROOT/examples/acme-app-2026.key" -o "$O/signed.jsonl" "$T/acme.jsonl"
	sweep 0 rledger_prep rledger_kept cnt-retract --member m-3307 --tenant acme --counter distance_m \
		--cause deleted --requester dpo --authority art17 --ledger "$O/ledger.jsonl" --now "$NOW" \
		--output "$O/comp.avro" "$F/archive.avro"
	check_problems
}

@test "cnt-sign: a full disk and a closed pipe fail cleanly" {
	jq -c 'select(.tenant_id == "acme")' "$EVENTS" >"$T/acme.jsonl"
	full cnt-sign --key "$ROOT/examples/acme-app-2026.key" "$T/acme.jsonl"
	full cnt-sign --key "$ROOT/examples/acme-app-2026.key" -o /dev/full "$T/acme.jsonl"
	for mode in default ignore; do
		closed $mode cnt-sign --key "$ROOT/examples/acme-app-2026.key" "$T/acme.jsonl"
	done
	check_problems
}

@test "allocation failure: cnt-project fails cleanly at every allocation" {
	sweep 0 no_prep views_whole cnt-project --definitions "$DEFS" --board "$BOARD" --views "$O/views" \
		--now "$NOW" --stats "$O/st.json" "$F/buckets.avro"
	check_problems
}

@test "allocation failure: cnt-defs fails cleanly at every allocation" {
	jq '.counters[0].versions[0].type = "max" | .counters[1].versions[0].windows += ["month"]' "$DEFS" >"$T/edited.json"
	sweep 1 no_prep nothing_left cnt-defs check --stats "$O/st.json" "$DEFS" "$T/edited.json"
	check_problems
}

# the guard given to cnt-rank --guard is there, unchanged, after a failure
guard_prep() { cp "$T/G0" "$O/G"; }
guard_kept() { [ "${FILES[*]}" = "G" ] && cmp -s "$O/G" "$T/G0"; }

@test "allocation failure: cnt-project --verified, cnt-rank --verified and --guard fail cleanly at every allocation" {
	# an audit of the demo's counter through the demo's as-of (an hour boundary in Berlin)
	"$PY" "$ROOT/tests/data/verified/audit.py" "$T/audits.jsonl" acme distance_m 1796029200000
	sweep 0 no_prep views_whole cnt-project --definitions "$DEFS" --board "$BOARD" --views "$O/views" \
		--now "$NOW" --verified "$T/audits.jsonl" --stats "$O/st.json" "$F/buckets.avro"
	cnt-project --definitions "$DEFS" --board "$BOARD" --views "$T/views" --now "$NOW" \
		--verified "$T/audits.jsonl" "$F/buckets.avro"
	sweep 0 no_prep nothing_left cnt-rank --views "$T/views" --board "$BOARD" --now "$NOW" --verified \
		--output-format table top 3
	# a guard over a season board (the guard refuses moving windows)
	cnt-project --definitions "$DEFS" --board acme-spring-5k --season acme-2026-spring --views "$T/sv" \
		--now "$NOW" --scopes-from "$F/archive.avro" "$F/buckets.avro"
	cnt-rank --views "$T/sv" --board acme-spring-5k --scope eu --now "$NOW" --guard "$T/G0" value m-1042 >/dev/null
	cnt-rank --views "$T/sv" --board acme-spring-5k --scope eu --now "$NOW" --guard "$T/G0" value m-9 >/dev/null
	sweep 0 guard_prep guard_kept cnt-rank --views "$T/sv" --board acme-spring-5k --scope eu --now "$NOW" \
		--guard "$O/G" --stats "$O/st.json" value m-7
	check_problems
}

@test "allocation failure: cnt-rank fails cleanly at every allocation" {
	sweep 0 no_prep nothing_left cnt-rank --views "$F/views" --board "$BOARD" --now "$NOW" \
		--overlay "$F/archive.avro" --directory "$F/members.jsonl" around m-1042 2
	sweep 0 no_prep nothing_left cnt-rank --views "$F/views" --board "$BOARD" --now "$NOW" \
		--output-format table top 10
	check_problems
}

# retention: a failed build leaves whole versions, current and the record;
# version 1 is gone only when its retirement is recorded
retain_prep() { cp -a "$T/rviews" "$O/views"; }
retain_whole() {
	local f
	for f in "${FILES[@]}"; do
		case $f in
		views/*/*/v[0-9][0-9][0-9][0-9][0-9][0-9]/*)
			[ -f "$O/${f%/*}/view.avro" ] && [ -f "$O/${f%/*}/index.bin" ] || return 1 ;;
		views/*/*/current | views/*/*/retention) ;;
		*) return 1 ;;
		esac
	done
	[ -d "$O/views/$BOARD/global/v000001" ] || grep -qx 'retired 1 [0-9]*' "$O/views/$BOARD/global/retention"
}

@test "allocation failure: cnt-project retiring a version, cnt-rank --pin and --if-newer fail cleanly at every allocation" {
	for d in 2026-11-30 2026-12-01; do
		cnt-project --definitions "$DEFS" --board "$BOARD" --views "$T/rviews" --now ${d}T09:00:00Z "$F/buckets.avro"
	done
	tok1=$(cnt-rank --views "$T/rviews" --board "$BOARD" --view-version 1 top 1 | jq -r .token)
	tok2=$(cnt-rank --views "$T/rviews" --board "$BOARD" top 1 | jq -r .token)
	sweep 0 retain_prep retain_whole cnt-project --definitions "$DEFS" --board "$BOARD" --views "$O/views" \
		--now 2026-12-02T09:00:00Z --stats "$O/st.json" "$F/buckets.avro"
	sweep 0 no_prep nothing_left cnt-rank --views "$T/rviews" --board "$BOARD" --now "$NOW" --pin "$tok1" \
		--offset 1 --output-format table top 2
	sweep 6 no_prep nothing_left cnt-rank --views "$T/rviews" --board "$BOARD" --if-newer "$tok2" rank m-1042
	cp -a "$T/rviews" "$T/rv3"
	cnt-project --definitions "$DEFS" --board "$BOARD" --views "$T/rv3" --now 2026-12-02T09:00:00Z "$F/buckets.avro"
	sweep 7 no_prep nothing_left cnt-rank --views "$T/rv3" --board "$BOARD" --pin "$tok1" top 2
	check_problems
}

# cnt-erase rewrites its segments and appends to its ledger: copies in $O,
# which a failed run leaves as they were.  One segment (the ledger proves
# the retraction), so that the sweep stays under CAP; tests/erase.bats
# sweeps a run over seven.
erase_prep() { cp "$F/archive.avro" "$F/erase-comp.avro" "$F/erase-ledger.jsonl" "$O/"; }
erase_kept() {
	local f
	[ "${FILES[*]}" = "archive.avro erase-comp.avro erase-ledger.jsonl" ] || return 1
	for f in "${FILES[@]}"; do cmp -s "$O/$f" "$F/$f" || return 1; done
}
@test "allocation failure: cnt-series fails cleanly at every allocation" {
	sweep 0 no_prep nothing_left cnt-series "${SERIES[@]}" --granularity hour --stats "$O/st.json" "$F/buckets.avro"
	sweep 0 no_prep nothing_left cnt-series "${SERIES[@]}" --member m-1042 --output-format json "$F/buckets.avro"
	check_problems
}

@test "allocation failure: cnt-erase fails cleanly at every allocation, the archive and ledger untouched" {
	sweep 0 erase_prep erase_kept cnt-erase --member m-3307 --tenant acme --counter distance_m --cause deleted --requester dpo \
		--authority art17 --now "$NOW" --ledger "$O/erase-ledger.jsonl" --stats "$O/st.json" \
		"$O/archive.avro"
	check_problems
}

@test "allocation failure: cnt-explain fails cleanly at every allocation" {
	printf '%s\n' '{"input":"x","line":3,"reason":"bad_field","message":"m","raw":"{\"member_ref\":\"m-1042\",\"tenant_id\":\"acme\",\"counter_id\":\"distance_m\"}"}' \
		>"$BATS_TEST_TMPDIR/rejects.jsonl"
	sweep 0 no_prep nothing_left cnt-explain --definitions "$DEFS" --board "$BOARD" --member m-1042 \
		--now "$NOW" --views "$F/views" --rejects "$BATS_TEST_TMPDIR/rejects.jsonl" --stats "$O/st.json" \
		"$F/archive.avro"
	check_problems
}

# the sealed directory given to the run is there, unchanged
sealed_prep() { cp -a "$F/sealed" "$O/sealed"; }
sealed_kept() {
	local f
	for f in "${FILES[@]}"; do [[ $f == sealed/* ]] || return 1; done
	diff -r "$O/sealed" "$F/sealed" >/dev/null
}
@test "allocation failure: cnt-seal fails cleanly at every allocation, a sealed directory untouched" {
	sweep 0 no_prep nothing_left cnt-seal close --definitions "$F/sdefs.json" --season w48 --sealed "$O/sealed" \
		--now "$SEAL_NOW" --stats "$O/st.json" "$F/buckets.avro"
	sweep 0 sealed_prep sealed_kept cnt-seal correct --definitions "$F/sdefs.json" --season w48 \
		--sealed "$O/sealed" --retractions "$F/retractions.jsonl" --now "$SEAL_NOW" --stats "$O/st.json" \
		"$F/revised.avro"
	sweep 0 no_prep nothing_left cnt-seal show --season w48 --sealed "$F/sealed" --output-format table
	sweep 0 no_prep nothing_left cnt-seal verify --sealed "$F/sealed" --stats "$O/st.json"
	check_problems
}

# ---- killed runs ----------------------------------------------------------------

# start_slow FEED TOOL ARG...: starts TOOL in the background reading the
# FIFO $T/in, which is kept open on descriptor 7 after FEED (a file) is
# written into it, so the tool waits for more; its output is $T/out.avro.
# Sets PID; waits until the temporary $T/.out.avro.tmp-PID-XXXXXX exists.
start_slow() {
	local feed=$1 i
	shift
	rm -f "$T/in" && mkfifo "$T/in"
	# A background command of a shell without job control starts with
	# SIGINT ignored, and a suite run under nohup with SIGHUP ignored (the
	# tools keep an ignored signal ignored): env gives both the default
	# handling, as a terminal's foreground job has.
	env --default-signal=INT,HUP "$@" >"$T/stdout" 2>"$T/err" </dev/null &
	PID=$!
	exec 7>"$T/in"
	cat "$feed" >&7
	for i in $(seq 100); do
		compgen -G "$T/.out.avro.tmp-$PID-??????" >/dev/null && return 0
		sleep 0.05
	done
	echo "$1: no temporary $T/.out.avro.tmp-$PID-XXXXXX appeared; stderr: $(cat "$T/err")"
	kill -KILL "$PID"
	exec 7>&-
	return 1
}

# slow_case N: the tool, its feed (the start of its input) and a whole
# input for the tools that write Avro while they read, N = 1..4.
slow_case() {
	case $1 in
	1) head -n 5 "$EVENTS" >"$T/feed"
	   TOOL=(cnt-ingest --keyring "$KEYRING" --definitions "$DEFS" --now "$NOW" --format json --rejects /dev/null)
	   WHOLE=$EVENTS ;;
	2) head -c 400 "$F/archive.avro" >"$T/feed"
	   TOOL=(cnt-dedup --definitions "$DEFS"); WHOLE=$F/archive.avro ;;
	3) head -c 400 "$F/deduped.avro" >"$T/feed"
	   TOOL=(cnt-window --definitions "$DEFS"); WHOLE=$F/deduped.avro ;;
	4) head -c 400 "$F/windowed.avro" >"$T/feed"
	   TOOL=(cnt-accumulate); WHOLE=$F/windowed.avro ;;
	esac
}

# gone PID: waits up to 5 s for PID to end; kills it and fails if it does not.
gone() {
	local i
	for i in $(seq 100); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.05
	done
	kill -KILL "$1"
	return 1
}

@test "SIGKILL mid-run leaves the temporary; the next run writing the same file removes it" {
	local i rc tmp
	for i in 1 2 3 4; do
		slow_case $i
		rm -f "$T/out.avro"
		start_slow "$T/feed" "${TOOL[@]}" --output "$T/out.avro" "$T/in"
		rc=0
		kill -KILL "$PID"
		wait "$PID" || rc=$?
		exec 7>&-
		[ "$rc" -eq 137 ]
		tmp=$(compgen -G "$T/.out.avro.tmp-$PID-??????")
		[ -f "$tmp" ]
		[ ! -e "$T/out.avro" ]
		# The next run writing out.avro removes the dead run's temporary.
		"${TOOL[@]}" --output "$T/out.avro" "$WHOLE" || { echo "${TOOL[0]}: the second run failed"; return 1; }
		[ ! -e "$tmp" ] || { echo "${TOOL[0]}: $tmp is still there"; return 1; }
		[ -z "$(leftovers "$T")" ]
		[ -s "$T/out.avro" ]
	done
}

@test "SIGTERM, SIGINT and SIGHUP mid-run: the tool removes its temporary itself and ends by the signal" {
	local i sig rc want bad=""
	for i in 1 2 3 4; do
		slow_case $i
		for sig in TERM INT HUP; do
			rm -f "$T/out.avro"
			start_slow "$T/feed" "${TOOL[@]}" --output "$T/out.avro" "$T/in"
			rc=0
			kill -$sig "$PID"
			gone "$PID" || bad="$bad${TOOL[0]} SIG$sig: still running 5 s later (killed)"$'\n'
			wait "$PID" || rc=$?
			exec 7>&-
			want=$((128 + $(kill -l $sig)))
			[ "$rc" -eq "$want" ] || bad="$bad${TOOL[0]} SIG$sig: status $rc, not $want"$'\n'
			[ -z "$(leftovers "$T")" ] || bad="$bad${TOOL[0]} SIG$sig: left $(leftovers "$T")"$'\n'
			[ ! -e "$T/out.avro" ] || bad="$bad${TOOL[0]} SIG$sig: wrote out.avro"$'\n'
			rm -f "$T"/.out.avro.tmp-*
		done
	done
	[ -z "$bad" ] || { printf '%s' "$bad"; return 1; }
}

# in_open PID: PID is (within 5 s) waiting in open(2) for a FIFO's reader.
in_open() {
	local i
	for i in $(seq 100); do
		[ "$(cat "/proc/$1/wchan" 2>/dev/null)" = wait_for_partner ] && return 0
		sleep 0.05
	done
	return 1
}

@test "an output that is a FIFO nobody reads yet: SIGTERM, SIGINT and SIGHUP end the tool waiting to open it" {
	local sig rc bad="" args
	mkfifo "$T/out.fifo"
	# the main output, and a side output opened after it
	for args in "cnt-accumulate --output $T/out.fifo $F/windowed.avro" \
		"cnt-window --definitions $DEFS --output $T/w.avro --rejects $T/out.fifo $F/deduped.avro"; do
		for sig in TERM INT HUP; do
			# (SIGINT's and SIGHUP's default handling back: start_slow says why)
			# shellcheck disable=SC2086
			env --default-signal=INT,HUP $args &
			PID=$!
			in_open "$PID" || bad="$bad$args: not waiting for the FIFO's reader"$'\n'
			rc=0
			kill -$sig "$PID"
			gone "$PID" || bad="$bad$args SIG$sig: still running 5 s later (killed)"$'\n'
			wait "$PID" || rc=$?
			[ "$rc" -eq $((128 + $(kill -l $sig))) ] || bad="$bad$args SIG$sig: status $rc"$'\n'
			[ -z "$(leftovers "$T")" ] || bad="$bad$args SIG$sig: left $(leftovers "$T")"$'\n'
			[ ! -e "$T/w.avro" ] || bad="$bad$args SIG$sig: wrote w.avro"$'\n'
		done
	done
	[ -z "$bad" ] || { printf '%s' "$bad"; return 1; }
	# a reader that comes gets the output (the codec given: a FIFO's
	# default is null, a file's zstandard)
	cnt-accumulate -c zstandard --output "$T/out.fifo" "$F/windowed.avro" &
	PID=$!
	cat "$T/out.fifo" >"$T/got.avro"
	wait "$PID"
	cnt-accumulate -c zstandard --output "$T/want.avro" "$F/windowed.avro"
	cmp "$T/got.avro" "$T/want.avro"
}

@test "every output is a temporary renamed into place: a dead run's leftovers go, a live one's stay" {
	local dead live=$$ f
	dead=$(sh -c 'echo $$')   # a process that has ended
	check_leftovers() {
		# after a run of "$@" that writes each of $NAMES in $O
		for f in $NAMES; do
			[ ! -e "$O/.$f.tmp-$dead-abcdef" ] || problem "$1: the dead run's temporary of $f is still there"
			[ -e "$O/.$f.tmp-$live-abcdef" ] || problem "$1: removed the temporary of $f of a live process"
			[ -e "$O/$f" ] || problem "$1: did not write $f"
		done
	}
	plant() {
		rm -rf "$O" && mkdir -p "$O"
		for f in $NAMES; do
			echo half >"$O/.$f.tmp-$dead-abcdef"
			echo half >"$O/.$f.tmp-$live-abcdef"
		done
	}
	NAMES="a.avro rej.jsonl dup.jsonl st.json"; plant
	cnt-ingest --keyring "$KEYRING" --definitions "$DEFS" --now "$NOW" --output "$O/a.avro" --rejects "$O/rej.jsonl" \
		--duplicates "$O/dup.jsonl" --stats "$O/st.json" "$EVENTS"
	check_leftovers cnt-ingest
	NAMES="a.avro dup.avro state st.json"; plant
	cnt-dedup --definitions "$DEFS" --output "$O/a.avro" --duplicates "$O/dup.avro" --state "$O/state" \
		--stats "$O/st.json" "$F/archive.avro"
	check_leftovers cnt-dedup
	NAMES="a.avro rej.jsonl st.json"; plant
	cnt-window --definitions "$DEFS" --output "$O/a.avro" --rejects "$O/rej.jsonl" --stats "$O/st.json" \
		"$F/deduped.avro" "$F/ghost.avro"
	check_leftovers cnt-window
	NAMES="a.avro st.json"; plant
	cnt-accumulate --output "$O/a.avro" --stats "$O/st.json" "$F/windowed.avro"
	check_leftovers cnt-accumulate
	NAMES="a.avro dup.avro state st.json"; plant
	cnt-count --definitions "$DEFS" --output "$O/a.avro" --duplicates "$O/dup.avro" --state "$O/state" \
		--stats "$O/st.json" "$F/archive.avro"
	check_leftovers cnt-count
	NAMES="st.json"; plant
	cnt-diff --stats "$O/st.json" "$F/buckets.avro" "$F/buckets.avro"
	check_leftovers cnt-diff
	NAMES="st.json"; plant
	cnt-project --definitions "$DEFS" --board "$BOARD" --views "$O/views" --now "$NOW" \
		--stats "$O/st.json" "$F/buckets.avro"
	check_leftovers cnt-project
	check_problems
}

# CNT_FAIL_FSYNC (lib/base/failalloc.c): every fsync of a regular file, or
# of a directory, fails with EIO.  A tool that exits 0 has put the bytes
# and the name of each file it wrote on disk (cnt(7), FILES).
@test "a disk that cannot flush: a file's bytes or its new name not on disk is status 3, never success" {
	local rc
	# the bytes: nothing left, no temporary
	mkdir a
	rc=0; CNT_FAIL_FSYNC=file cnt-ingest --keyring "$KEYRING" --definitions "$DEFS" --now "$NOW" --output a/x.avro \
		--rejects /dev/null "$EVENTS" 2>err || rc=$?
	[ "$rc" -eq 3 ] && [ "$(cat err)" = "cnt-ingest: cannot write 'a/x.avro': Input/output error" ] || { cat err; return 1; }
	[ -z "$(ls -A a)" ]
	# the name: the file is whole and in place, but the run says it may not
	# survive a crash
	rc=0; CNT_FAIL_FSYNC=dir cnt-ingest --keyring "$KEYRING" --definitions "$DEFS" --now "$NOW" --output a/x.avro \
		--rejects /dev/null "$EVENTS" 2>err || rc=$?
	[ "$rc" -eq 3 ] || { cat err; return 1; }
	[ "$(cat err)" = "cnt-ingest: 'a/x.avro' is written, but flushing its directory failed (Input/output error): its name may not survive a crash; write it again" ]
	cmp a/x.avro "$F/archive.avro"
	[ "$(ls -A a)" = x.avro ]
	# a bare name: its directory is the working one
	rc=0; CNT_FAIL_FSYNC=dir cnt-dedup --definitions "$DEFS" --output d.avro "$F/archive.avro" 2>err || rc=$?
	[ "$rc" -eq 3 ] && grep -q "^cnt-dedup: 'd.avro' is written, but flushing its directory failed" err
	# the same runs with fsync working succeed: the failures above are the
	# flushes, not the runs
	cnt-ingest --keyring "$KEYRING" --definitions "$DEFS" --now "$NOW" --output a/y.avro --rejects /dev/null "$EVENTS"
	cmp a/y.avro "$F/archive.avro"
	# a sealed season: each standing is linked to its name and its directory
	# flushed; when that fails, nothing is sealed
	rc=0; CNT_FAIL_FSYNC=dir cnt-seal close --definitions "$F/sdefs.json" --season w48 --sealed s \
		--now "$SEAL_NOW" "$F/buckets.avro" 2>err || rc=$?
	[ "$rc" -eq 3 ] && grep -q "is written, but flushing its directory failed" err || { cat err; return 1; }
	[ -z "$(files s | grep -v '^\.')" ] || { files s; return 1; }
	cnt-seal close --definitions "$F/sdefs.json" --season w48 --sealed s --now "$SEAL_NOW" "$F/buckets.avro"
	diff <(files s) <(files "$F/sealed")
}

@test "a new ledger's first line flushes its directory too; a later line only the ledger" {
	local rc
	cp "$F/deduped.avro" log.avro
	# m-3307: not yet in retractions.jsonl, so every run appends a line
	R=(cnt-retract --member m-3307 --tenant acme --counter distance_m --cause fraud --requester t --authority a
		--now "$SEAL_NOW" --output -)
	# a new ledger: its name must reach the disk with its first line
	rc=0; CNT_FAIL_FSYNC=dir "${R[@]}" --ledger new.jsonl log.avro >/dev/null 2>err || rc=$?
	[ "$rc" -eq 3 ] && [ "$(cat err)" = "cnt-retract: 'new.jsonl' is written, but flushing its directory failed (Input/output error): its name may not survive a crash; write it again" ] ||
		{ cat err; return 1; }
	# a ledger that has lines: the directory is not flushed again
	cp "$F/retractions.jsonl" old.jsonl
	CNT_FAIL_FSYNC=dir "${R[@]}" --ledger old.jsonl log.avro >/dev/null
	[ "$(wc -l <old.jsonl)" -eq $(($(wc -l <"$F/retractions.jsonl") + 1)) ]
	# the line itself not flushed: status 3
	cp "$F/retractions.jsonl" old2.jsonl
	rc=0; CNT_FAIL_FSYNC=file "${R[@]}" --ledger old2.jsonl log.avro >/dev/null 2>err || rc=$?
	[ "$rc" -eq 3 ] && grep -q "^cnt-retract: cannot append to ledger 'old2.jsonl': Input/output error" err || { cat err; return 1; }
}
