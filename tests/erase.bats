#!/usr/bin/env bats
# cnt-erase: the deletion path.  After a retraction (compensations counted
# and merged, touched buckets rebuilt), erasing the member from the archive
# leaves an archive whose full rebuild equals the live numbers, for every
# counter type; only the segments holding the member's events change, each
# into exactly what the writer makes from the remaining records; the
# ledger records what went without the member in the clear; a rerun finds
# nothing; an unreadable segment, an unretracted event or a failed
# allocation changes nothing.

bats_require_minimum_version 1.5.0
load data/core/common

NOW=2026-03-01T11:10:00Z     # on time for 10:xx and 11:xx events (lateness 600 s)
LATE=2026-03-01T13:00:00Z    # late for them
WHO=(--requester dpo-1 --authority gdpr-art17 --ledger ledger.jsonl --now 2026-03-04T09:00:00Z)

setup() {
	set -o pipefail
	cd "$BATS_TEST_TMPDIR"
	jq '.counters += [
		{tenant_id: "utc", counter_id: "lo", versions: [{version: 1, type: "min", lateness_horizon_s: 600}]},
		{tenant_id: "utc", counter_id: "hi", versions: [{version: 1, type: "max", lateness_horizon_s: 600}]}]' \
		"$DEFS" >defs.json
	DEFS=$PWD/defs.json
}

# log1.avro (on time), log2.avro (late): every counter type, members m1
# and m2; log3.avro: m2 and m3 only.
make_log() {
	for c in dist uniq lo hi; do
		ev "$c-1" "$c" m1 10 v1 2026-03-01T10:00:00Z
		ev "$c-2" "$c" m1 3 v2 2026-03-01T10:10:00Z
		ev "$c-3" "$c" m2 7 v1 2026-03-01T10:20:00Z
		ev "$c-4" "$c" m2 5 v3 2026-03-01T11:05:00Z
	done >ontime.jsonl
	for c in dist uniq lo hi; do
		ev "$c-5" "$c" m1 4 v4 2026-03-01T10:40:00Z
		ev "$c-6" "$c" m2 2 v5 2026-03-01T10:50:00Z
	done >late.jsonl
	for c in dist uniq lo hi; do
		ev "$c-7" "$c" m3 8 v6 2026-03-01T10:30:00Z
		ev "$c-8" "$c" m2 1 v7 2026-03-01T10:35:00Z
	done >other.jsonl
	ingest "$NOW" log1.avro <ontime.jsonl
	ingest "$LATE" log2.avro <late.jsonl
	ingest "$NOW" log3.avro <other.jsonl
}

# rebuild OUT SEGMENT...: the full rebuild, cnt-dedup | cnt-window | cnt-accumulate
rebuild() {
	local out=$1
	shift
	cnt-dedup -d "$DEFS" "$@" | cnt-window -d "$DEFS" | cnt-accumulate -o "$out"
}

# retract_member M: retracts M in every counter (comp-C.avro each), counts
# and merges the compensations into merged.avro and rebuilds the touched
# buckets into live.avro: the live numbers after the retraction.
retract_member() {
	local c
	rebuild old.avro log1.avro log2.avro log3.avro
	for c in dist uniq lo hi; do
		cnt-retract --member "$1" --tenant utc --counter "$c" --cause deleted "${WHO[@]}" -o "comp-$c.avro" \
			log1.avro log2.avro log3.avro
	done
	cnt-window -d "$DEFS" comp-*.avro | cnt-accumulate -o cb.avro
	cnt-accumulate -o merged.avro old.avro cb.avro
	cnt-retract --rebuild merged.avro -d "$DEFS" -o live.avro log1.avro log2.avro log3.avro comp-*.avro
}

# snapshot: copies of the archive and the ledger, with inode numbers
snapshot() {
	mkdir -p snap
	for f in log1.avro log2.avro log3.avro comp-*.avro ledger.jsonl; do
		[ -e "$f" ] && cp -p "$f" "snap/$f"
	done
	stat -c '%n %i' log*.avro comp-*.avro 2>/dev/null >snap/inodes || :
}

# unchanged: the archive and the ledger are as at the snapshot, the same
# files (inodes), and no temporary is left
unchanged() {
	local f
	for f in snap/*.avro snap/ledger.jsonl; do
		[ -e "$f" ] || continue
		cmp "$f" "${f#snap/}" || return 1
	done
	[ "$(stat -c '%n %i' log*.avro comp-*.avro 2>/dev/null)" = "$(cat snap/inodes)" ]
	no_temporaries
}

no_temporaries() {
	[ -z "$(find . -name '.*' -mindepth 1 -print | grep -v '^\./snap')" ]
}

# value FILE COUNTER: the records of one counter, whole, as JSON lines
value() {
	cnt-cat "$1" | jq -c --arg c "$2" 'select(.counter_id == $c)'
}

@test "rebuild from the erased archive equals the live numbers: exact by the merge, every type by --rebuild" {
	make_log
	retract_member m1
	snapshot
	run --separate-stderr cnt-erase --member m1 --tenant utc --cause deleted "${WHO[@]}" --stats st.json \
		log1.avro log2.avro log3.avro comp-*.avro
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	one '.tool == "cnt-erase" and .in == 44 and .erased == 24 and .originals == 12 and .compensations == 12
		and .out == 20 and .segments == 7 and .rewritten == 6 and .ledger_records == 1' st.json
	[ -z "$(cnt-cat log1.avro log2.avro comp-*.avro | jq -r 'select(.member_ref == "m1")')" ]
	rebuild rebuilt.avro log1.avro log2.avro log3.avro comp-*.avro
	# the exact counter: the merged compensations are already the rebuild
	[ "$(value merged.avro dist)" = "$(value rebuilt.avro dist)" ]
	[ -n "$(value rebuilt.avro dist)" ]
	# every type: the rebuilt touched buckets, byte for byte
	cmp live.avro rebuilt.avro
	cnt-diff live.avro rebuilt.avro
	# log3 holds no m1 event: the same file, untouched
	cmp log3.avro snap/log3.avro
	[ "$(stat -c %i log3.avro)" = "$(grep '^log3.avro ' snap/inodes | cut -d' ' -f2)" ]
	[ "$(stat -c %i log1.avro)" != "$(grep '^log1.avro ' snap/inodes | cut -d' ' -f2)" ]
	no_temporaries
}

@test "a rewritten segment is byte for byte what the writer makes of the remaining records" {
	make_log
	retract_member m1
	cnt-erase --member m1 --tenant utc --cause deleted "${WHO[@]}" log1.avro log2.avro log3.avro comp-*.avro
	grep -v '"member_ref":"m1"' ontime.jsonl | ingest "$NOW" ref1.avro
	grep -v '"member_ref":"m1"' late.jsonl | ingest "$LATE" ref2.avro
	cmp log1.avro ref1.avro
	cmp log2.avro ref2.avro
	# a compensation segment of m1 alone: the writer's header-only file
	ingest "$NOW" empty.avro </dev/null
	cmp comp-dist.avro empty.avro
	[ "$(cnt-cat --count comp-hi.avro)" -eq 0 ]
}

@test "the segment's own codec and level are kept (found from its first block); --level forces one" {
	make_log
	local spec codec level lv
	for spec in zstandard:19 zstandard:-3 zstandard:default deflate:1 xz:2 bzip2:4 snappy:default null:default; do
		codec=${spec%:*} level=${spec#*:} lv=()
		[ "$level" != default ] && lv=(--level "$level")
		rm -f ledger.jsonl
		cnt-ingest -d "$DEFS" --now "$NOW" --max-past 400d -c "$codec" "${lv[@]}" -o seg.avro ontime.jsonl
		grep -v '"member_ref":"m1"' ontime.jsonl |
			cnt-ingest -d "$DEFS" --now "$NOW" --max-past 400d -c "$codec" "${lv[@]}" -o ref.avro -
		# compensations of m1 and m2 in one segment, given id: erasing m1
		# leaves what retracting m2 alone writes
		cnt-cat seg.avro | jq -r 'select(.counter_id == "dist") | .event_id' >keys
		cnt-cat seg.avro | jq -r 'select(.counter_id == "dist" and .member_ref == "m2") | .event_id' >keys2
		cnt-retract --events keys --retraction-id r-both "${WHO[@]}" --cause deleted -c "$codec" "${lv[@]}" -o comp.avro seg.avro
		cnt-retract --events keys2 --retraction-id r-both --requester dpo-1 --authority gdpr-art17 \
			--ledger fresh.jsonl --now 2026-03-04T09:00:00Z --cause deleted -c "$codec" "${lv[@]}" -o comp-ref.avro seg.avro
		rm -f fresh.jsonl
		cnt-erase --member m1 --cause deleted "${WHO[@]}" --counter dist seg.avro comp.avro
		cnt-retract --member m1 --tenant utc --counter uniq --cause deleted "${WHO[@]}" -o c2.avro seg.avro
		cnt-retract --member m1 --tenant utc --counter lo --cause deleted "${WHO[@]}" -o c3.avro seg.avro
		cnt-retract --member m1 --tenant utc --counter hi --cause deleted "${WHO[@]}" -o c4.avro seg.avro
		cnt-erase --member m1 --cause deleted "${WHO[@]}" seg.avro comp.avro c2.avro c3.avro c4.avro
		cmp seg.avro ref.avro || { echo "$spec: the segment differs"; return 1; }
		cmp comp.avro comp-ref.avro || { echo "$spec: the compensations differ"; return 1; }
		[ "$(cnt-cat --meta seg.avro | jq -r .codec)" = "$codec" ]
	done
	# --level: every rewritten segment at that level instead
	cnt-ingest -d "$DEFS" --now "$NOW" --max-past 400d -c zstandard --level 19 -o seg.avro ontime.jsonl
	grep -v '"member_ref":"m2"' ontime.jsonl |
		cnt-ingest -d "$DEFS" --now "$NOW" --max-past 400d -c zstandard --level 5 -o ref.avro -
	rm -f ledger.jsonl
	for c in dist uniq lo hi; do
		cnt-retract --member m2 --tenant utc --counter $c --cause deleted "${WHO[@]}" -o /dev/null seg.avro
	done
	cnt-erase --member m2 --cause deleted "${WHO[@]}" --level 5 seg.avro
	cmp seg.avro ref.avro
}

@test "the ledger record: kind erasure, event ids and counts per segment, digests, no member in the clear" {
	make_log
	retract_member m1
	for f in log1.avro log2.avro comp-dist.avro; do
		cnt-cat "$f" | jq -r 'select(.member_ref == "m1") | .event_id' | paste -sd, - >"$f.ids"
	done
	cnt-erase --member m1 --tenant utc --cause deleted "${WHO[@]}" --erasure-id gdpr-0042 \
		log1.avro log2.avro log3.avro comp-*.avro
	[ "$(wc -l <ledger.jsonl)" -eq 5 ]
	tail -n 1 ledger.jsonl >rec.json
	# the member appears nowhere in the record, only its hash
	! grep -q m1 rec.json
	one '.kind == "erasure" and .erasure_id == "gdpr-0042" and .cause == "deleted" and .requested_by == "dpo-1"
		and .authority == "gdpr-art17" and .created_at == "2026-03-04T09:00:00.000Z" and .erased == 24
		and (.selector | keys) == ["member_xxh3", "tenant_id"] and .selector.tenant_id == "utc"
		and .counters == ([("dist", "hi", "lo", "uniq") | {tenant_id: "utc", counter_id: .}])
		and (.selector.member_xxh3 | test("^[0-9a-f]{32}$"))
		and ([.segments[].segment] == ["log1.avro", "log2.avro", "comp-dist.avro", "comp-hi.avro", "comp-lo.avro", "comp-uniq.avro"])
		and (.segments[0] | .originals == 8 and .compensations == 0 and .kept == 8)
		and (.segments[1] | .originals == 4 and .compensations == 0 and .kept == 4)
		and (.segments[2] | .originals == 0 and .compensations == 3 and .kept == 0)
		and all(.segments[]; (.before | test("^[0-9a-f]{32}$")) and (.after | test("^[0-9a-f]{32}$")) and .before != .after)
		and (.prev | test("^[0-9a-f]{32}$"))' rec.json
	for i in 0 1 2; do
		f=$(jq -r ".segments[$i].segment" rec.json)
		[ "$(jq -r ".segments[$i].event_ids | join(\",\")" rec.json)" = "$(cat "$f.ids")" ]
	done
	# the chain holds: cnt-retract reads the ledger on; an erased event counts as retracted
	cnt-retract --member m2 --tenant utc --counter dist --cause banned "${WHO[@]}" -o c-m2.avro log1.avro log2.avro
	[ "$(wc -l <ledger.jsonl)" -eq 6 ]
	# the digests chain too: a second erasure of log1 starts from the first one's after
	cnt-erase --member m2 --tenant utc --counter dist --cause deleted "${WHO[@]}" log1.avro log2.avro c-m2.avro
	[ "$(tail -n 1 ledger.jsonl | jq -r '.segments[0].before')" = "$(jq -r '.segments[0].after' rec.json)" ]
	# another member, another hash; a changed byte in the erasure record breaks the chain
	[ "$(tail -n 1 ledger.jsonl | jq -r .selector.member_xxh3)" != "$(jq -r .selector.member_xxh3 rec.json)" ]
	sed -i '5s/gdpr-0042/gdpr-0043/' ledger.jsonl
	snapshot
	run cnt-erase --member m3 --cause deleted "${WHO[@]}" log3.avro
	[ "$status" -eq 2 ]
	[[ "$output" == *"line 6: the hash chain is broken"* ]]
	unchanged
}

@test "a batched erasure: each record lists the counters of its own segments' events" {
	# 16 segments of dist events and one of a hi event: the first record
	# (16 segments, cnt-erase(1)) is dist's alone
	for i in $(seq -w 1 16); do
		ev "d$i" dist m9 1 v1 2026-03-01T10:00:00Z | ingest "$NOW" "s$i.avro"
	done
	ev h1 hi m9 1 v1 2026-03-01T10:00:00Z | ingest "$NOW" s17.avro
	cnt-retract --member m9 --tenant utc --counter dist --cause deleted "${WHO[@]}" -o comp-d.avro s*.avro
	cnt-retract --member m9 --tenant utc --counter hi --cause deleted "${WHO[@]}" -o comp-h.avro s*.avro
	cnt-erase --member m9 --tenant utc --cause deleted "${WHO[@]}" s*.avro comp-d.avro comp-h.avro
	[ "$(wc -l <ledger.jsonl)" -eq 4 ]
	jq -e -s '.[0].counters == [{tenant_id: "utc", counter_id: "dist"}]
		and .[1].counters == [{tenant_id: "utc", counter_id: "hi"}]
		and .[2].kind == "erasure" and (.[2].segments | length) == 16
		and .[2].counters == [{tenant_id: "utc", counter_id: "dist"}]
		and ([.[3].segments[].segment] == ["s17.avro", "comp-d.avro", "comp-h.avro"])
		and .[3].counters == [{tenant_id: "utc", counter_id: "dist"}, {tenant_id: "utc", counter_id: "hi"}]' ledger.jsonl
}

@test "an erasure record lists the originals: cnt-retract takes them as retracted" {
	make_log
	cp log1.avro backup.avro
	cnt-retract --member m1 --tenant utc --counter dist --cause deleted "${WHO[@]}" -o comp.avro log1.avro
	# a ledger of its own for the erasure: the compensation segment proves the retraction
	cnt-erase --member m1 --counter dist --cause deleted --requester dpo-1 --authority gdpr-art17 \
		--ledger erased.jsonl --now 2026-03-04T09:00:00Z log1.avro comp.avro
	cnt-retract --member m1 --tenant utc --counter dist --cause deleted --requester dpo-1 --authority gdpr-art17 \
		--ledger erased.jsonl -o again.avro --stats st.json backup.avro
	one '.out == 0 and .already_retracted == 2 and .ledger_records == 0' st.json
}

@test "idempotent: erasing again finds nothing, says so, writes nothing" {
	make_log
	retract_member m1
	cnt-erase --member m1 --cause deleted "${WHO[@]}" log1.avro log2.avro log3.avro comp-*.avro
	snapshot
	run --separate-stderr cnt-erase --member m1 --cause deleted "${WHO[@]}" --stats st.json \
		log1.avro log2.avro log3.avro comp-*.avro
	[ "$status" -eq 0 ]
	[ "$stderr" = "cnt-erase: no event of the member in the 7 segments: nothing erased" ]
	one '.erased == 0 and .rewritten == 0 and .ledger_records == 0 and .in == 20 and .out == 20' st.json
	unchanged
	# -v says what it does
	cnt-retract --member m3 --tenant utc --counter dist --cause deleted "${WHO[@]}" -o c3.avro log3.avro
	run --separate-stderr cnt-erase -v --member m3 --cause deleted --counter dist "${WHO[@]}" log3.avro c3.avro
	[ "$status" -eq 0 ]
	[ "$stderr" = "cnt-erase: erasing 2 events (1 originals, 1 compensations) from 2 of 2 segments" ]
}

@test "an event of the member not yet retracted: refused, named, nothing changed" {
	make_log
	cnt-retract --event dist-3 --tenant utc --counter dist --cause deleted "${WHO[@]}" -o c.avro log1.avro
	snapshot
	id=$(cnt-cat log1.avro | jq -r 'select(.idempotency_key == "dist-4") | .event_id')
	run --separate-stderr cnt-erase --member m2 --counter dist --cause deleted "${WHO[@]}" log1.avro c.avro
	[ "$status" -eq 2 ]
	[ "$stderr" = "cnt-erase: event $id of the member is not retracted: retract it first (cnt-retract --member), so that the counters lose it too; nothing erased" ]
	unchanged
	# the ledger alone proves a retraction: the compensations need not be given
	cnt-retract --member m2 --tenant utc --counter dist --cause deleted "${WHO[@]}" -o c2.avro log1.avro c.avro
	cnt-erase --member m2 --counter dist --cause deleted "${WHO[@]}" --stats st.json log1.avro
	one '.erased == 2 and .originals == 2 and .compensations == 0' st.json
}

@test "an event id the ledger cannot name (a NUL byte, from a segment no tool admitted): refused, named, nothing changed" {
	{ ev n-1 dist m9 10 '' 2026-03-01T10:00:00Z; ev n-2 dist m9 20 '' 2026-03-01T10:05:00Z; } |
		cnt-ingest -d "$DEFS" --now "$NOW" -c deflate -o clean.avro -
	# Debian's python3-avro writes it again, a NUL in n-2's event_id
	"$PY" "$DATA/avro-poke.py" clean.avro bad.avro n-2 event_id '"\0" + v[1:]'
	cp bad.avro before.avro
	id=$(cnt-cat clean.avro | jq -r 'select(.idempotency_key == "n-2") | .event_id')
	run -2 --separate-stderr cnt-erase --member m9 --cause deleted "${WHO[@]}" bad.avro
	[ "$stderr" = "cnt-erase: 'bad.avro' record 2: its event_id '\\x00${id:1}' is not UTF-8 text without NUL bytes, which the erasure record cannot name (a segment no tool admitted?); nothing erased" ]
	cmp before.avro bad.avro
	[ ! -s ledger.jsonl ]
	no_temporaries
}

@test "a segment that cannot be read is refused before anything is written" {
	make_log
	retract_member m1
	# a flipped byte in the sync marker of the last data block (before the
	# 31-byte end marker) of a segment without m1
	size=$(stat -c %s log3.avro)
	printf '\xff' | dd of=log3.avro bs=1 seek=$((size - 40)) conv=notrunc status=none
	snapshot
	run --separate-stderr cnt-erase --member m1 --cause deleted "${WHO[@]}" log1.avro log2.avro comp-*.avro log3.avro
	[ "$status" -eq 2 ]
	[[ "$stderr" == "cnt-erase: 'log3.avro'"* ]]
	[ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
	unchanged
	# truncated
	cp snap/log3.avro log3.avro
	head -c $((size - 30)) log2.avro >cut.avro
	run cnt-erase --member m1 --cause deleted "${WHO[@]}" log1.avro cut.avro
	[ "$status" -eq 2 ]
	[[ "$output" == *"'cut.avro'"* ]]
	# not an event file, several containers, a link, the same file twice, standard input
	run cnt-erase --member m1 --cause deleted "${WHO[@]}" log1.avro merged.avro
	[ "$status" -eq 2 ]
	cat log1.avro log2.avro >joined.avro
	run cnt-erase --member m1 --cause deleted "${WHO[@]}" joined.avro
	[ "$status" -eq 2 ]
	[[ "$output" == *"more than one container"* ]]
	ln log2.avro hard.avro
	run cnt-erase --member m1 --cause deleted "${WHO[@]}" log1.avro hard.avro comp-*.avro
	[ "$status" -eq 2 ]
	[[ "$output" == *"'hard.avro' has 2 hard links: the other names would keep the erased events"* ]]
	rm hard.avro
	ln -s log2.avro soft.avro
	run cnt-erase --member m1 --cause deleted "${WHO[@]}" soft.avro
	[ "$status" -eq 2 ]
	[[ "$output" == *"symbolic link"* ]]
	run cnt-erase --member m1 --cause deleted "${WHO[@]}" log1.avro ./log1.avro
	[ "$status" -eq 2 ]
	[[ "$output" == *"are the same file"* ]]
	run cnt-erase --member m1 --cause deleted "${WHO[@]}" - <log1.avro
	[ "$status" -eq 2 ]
	[[ "$output" == *"not standard input"* ]]
	unchanged
}

@test "usage: member, cause, requester, authority, ledger and a segment are required" {
	make_log
	for args in "--cause deleted --requester a --authority b --ledger l" \
		"--member m1 --cause theft --requester a --authority b --ledger l" \
		"--member m1 --requester a --authority b --ledger l" "--member m1 --cause deleted --authority b --ledger l" \
		"--member m1 --cause deleted --requester a --ledger l" "--member m1 --cause deleted --requester a --authority b"; do
		run cnt-erase $args log1.avro
		[ "$status" -eq 2 ]
		[[ "$output" == *"usage: cnt-erase "* ]]
	done
	run cnt-erase --member m1 --cause deleted --requester a --authority b --ledger l
	[ "$status" -eq 2 ]
	[[ "$output" == *"the segments to erase from are required"* ]]
	run cnt-erase --member m1 --cause deleted --requester a --authority b --ledger l --level 2x log1.avro
	[ "$status" -eq 2 ]
	# what the ledger keeps as JSON text must be UTF-8
	for o in --requester --authority --tenant --counter --erasure-id; do
		run -2 --separate-stderr cnt-erase --member m1 --cause deleted --requester a --authority b --ledger l \
			"$o" $'v\xff' log1.avro
		[ "${stderr%%$'\n'*}" = "cnt-erase: $o: not UTF-8 text, which the ledger (JSON) cannot keep" ]
	done
	# so is a segment's name, which the record keeps (it was "out of memory"
	# after the first batch of 16 segments had been rewritten)
	cp log1.avro $'seg\xff.avro'
	run -2 --separate-stderr cnt-erase --member m1 --cause deleted --requester a --authority b --ledger l $'seg\xff.avro'
	[ "${stderr%%$'\n'*}" = "cnt-erase: a segment's name: not UTF-8 text, which the ledger (JSON) cannot keep" ]
	[ ! -e l ]
}

@test "strings with quotes, backslashes and control characters stay valid JSON; --stats parses" {
	jq '.tenants += [{tenant_id: "q\"t\\x", timezone: "UTC"}]
		| .counters += [{tenant_id: "q\"t\\x", counter_id: "c\"1\\", versions: [{version: 1, type: "exact"}]}]' \
		"$DEFS" >weird.json
	printf '%s\n' '{"idempotency_key":"w1","tenant_id":"q\"t\\x","counter_id":"c\"1\\","member_ref":"m\"\\","delta":1,"event_time":"2026-03-01T10:00:00Z"}' |
		ingest "$NOW" w.avro weird.json
	cnt-retract --member 'm"\' --tenant 'q"t\x' --counter 'c"1\' --cause deleted "${WHO[@]}" -o wc.avro w.avro
	cnt-erase --member 'm"\' --tenant 'q"t\x' --counter 'c"1\' --cause deleted --requester $'a"b\\c\x01' \
		--authority $'x\ty' --ledger ledger.jsonl --stats st.json w.avro wc.avro
	tail -n 1 ledger.jsonl | one '.requested_by == "a\"b\\c\u0001" and .authority == "x\ty"
		and .selector.tenant_id == "q\"t\\x" and .selector.counter_id == "c\"1\\" and .erased == 2'
	jq -e '.erased == 2' st.json >/dev/null
}

@test "cnt-rank on views rebuilt from the erased archive no longer lists the member" {
	local V=$BATS_TEST_DIRNAME/data/views vnow=2026-03-01T12:00:00Z
	cnt-ingest -d "$V/defs.json" --now "$vnow" -o log.avro "$V/ranking.jsonl"
	cnt-window -d "$V/defs.json" log.avro | cnt-accumulate -o old.avro
	cnt-retract --member a --tenant utc --counter pts --cause deleted "${WHO[@]}" -o comp.avro log.avro
	cnt-window -d "$V/defs.json" comp.avro | cnt-accumulate -o cb.avro
	cnt-accumulate -o merged.avro old.avro cb.avro
	cnt-retract --rebuild merged.avro -d "$V/defs.json" -o live.avro log.avro comp.avro
	cnt-erase --member a --cause deleted "${WHO[@]}" log.avro comp.avro
	cnt-dedup -d "$V/defs.json" log.avro comp.avro | cnt-window -d "$V/defs.json" | cnt-accumulate -o rebuilt.avro
	cmp live.avro rebuilt.avro
	cnt-project -d "$V/defs.json" -b rk_ord -w v --now "$vnow" rebuilt.avro
	cnt-rank -w v -b rk_ord --now "$vnow" top 10 >top.json
	[ "$(jq -r '[.entries[] | "\(.member_ref):\(.rank)"] | join(" ")' top.json)" = 'b:1 d:2 c:3 e:4' ]
	run cnt-rank -w v -b rk_ord --now "$vnow" rank a
	[[ "$output" != *'"rank":1'* ]]
	[ -z "$(cnt-cat log.avro comp.avro | jq -r 'select(.member_ref == "a")')" ]
}

@test "out of memory at any allocation: status 4, one line, the archive and the ledger unchanged" {
	make_log
	retract_member m1
	snapshot
	local n=1 rc
	while :; do
		rc=0
		CNT_FAIL_ALLOC=$n cnt-erase --member m1 --cause deleted "${WHO[@]}" --stats st.json \
			log1.avro log2.avro log3.avro comp-*.avro 2>err || rc=$?
		[ "$rc" -eq 0 ] && break
		[ "$rc" -eq 4 ] || { echo "allocation $n: status $rc: $(cat err)"; return 1; }
		[ "$(wc -l <err)" -eq 1 ] && [[ "$(cat err)" == "cnt-erase: "*"out of memory"* ]]
		[ ! -e st.json ]
		unchanged || { echo "allocation $n: the archive changed"; return 1; }
		n=$((n + 1))
	done
	[ "$n" -gt 20 ]
	[ "$(wc -l <ledger.jsonl)" -eq 5 ]
	[ -z "$(cnt-cat log1.avro | jq -r 'select(.member_ref == "m1")')" ]
}

@test "a signal while the new segments are written: no temporary left, the archive whole" {
	"$PY" - >big.jsonl <<-'EOF'
	for i in range(100000):
	    print('{"idempotency_key":"big-%06d","tenant_id":"utc","counter_id":"dist","member_ref":"m%d","delta":%d,"event_time":"2026-03-01T10:%02d:00Z"}'
	          % (i, i % 3, 1 + i % 7, i % 60))
	EOF
	ingest "$NOW" big.avro <big.jsonl
	cnt-retract --member m1 --tenant utc --counter dist --cause deleted "${WHO[@]}" -o comp.avro big.avro
	cp big.avro big.before
	cp ledger.jsonl ledger.before
	local pid rc=0 i
	env --default-signal=TERM cnt-erase --member m1 --cause deleted "${WHO[@]}" big.avro comp.avro 2>err &
	pid=$!
	for i in $(seq 2000); do
		compgen -G ".big.avro.tmp-$pid-??????" >/dev/null && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.002
	done
	kill -TERM "$pid" 2>/dev/null || :
	wait "$pid" || rc=$?
	no_temporaries
	if [ "$rc" -eq 143 ]; then
		# ended by the signal: as before, or (signal after the append) recorded and rerun-able
		cmp big.avro big.before || [ "$(wc -l <ledger.jsonl)" -eq 2 ]
		cnt-erase --member m1 --cause deleted "${WHO[@]}" big.avro comp.avro
	else
		[ "$rc" -eq 0 ]
	fi
	[ -z "$(cnt-cat big.avro | jq -r 'select(.member_ref == "m1") | .event_id' | head -n 1)" ]
}
