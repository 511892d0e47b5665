#!/usr/bin/env bats
# Tenant separation (cnt(7), TENANT SEPARATION): cnt-accumulate
# --split-tenants (one bucket file per tenant, byte for byte that tenant's
# own run; modes; unsafe ids), cnt-project --split-tenants (views per
# tenant), and --tenant / CNT_TENANT on cnt-cat, cnt-diff, cnt-rank and
# cnt-explain: another tenant's file refused with exit status 5, one line
# naming the file and both tenants, nothing printed.

bats_require_minimum_version 1.5.0
load data/core/common

EX="$BATS_TEST_DIRNAME/../examples"
EXDEFS="$EX/definitions.json"
NOW=2026-11-30T09:00:00Z

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	# the core data: tenants utc and kol, each its own events too
	{ ev a dist m1 5; ev b dist m2 6; ev c uniq m1 1 u1; ev d dist m1 7 '' "$T0" kol; ev e dist m3 2 '' "$T0" kol; } >all.jsonl
	for t in utc kol; do jq -c --arg t "$t" 'select(.tenant_id == $t)' all.jsonl >"$t.jsonl"; done
	for f in all utc kol; do
		ingest "$T0" "$f.events.avro" <"$f.jsonl"
		cnt-window -d "$DEFS" "$f.events.avro" >"$f.win.avro"
		cnt-accumulate -o "$f.buckets.avro" "$f.win.avro"
	done
	# the examples: acme and kahani, as the demo admits them, and acme's alone
	cnt-ingest -d "$EXDEFS" --keyring "$EX/keyring.json" --now "$NOW" -o ex.archive.avro "$EX/events.jsonl" 2>/dev/null || true
	jq -c 'select(.tenant_id == "acme")' "$EX/events.jsonl" >acme.jsonl
	cnt-ingest -d "$EXDEFS" --keyring "$EX/keyring.json" --now "$NOW" -o acme.archive.avro acme.jsonl 2>/dev/null || true
	cnt-dedup -d "$EXDEFS" -s ex.state ex.archive.avro | cnt-window -d "$EXDEFS" | cnt-accumulate -o ex.buckets.avro
	cnt-project -d "$EXDEFS" -b acme-30d-distance -w views --now "$NOW" ex.buckets.avro
}

setup() {
	set -o pipefail
	cd "$BATS_TEST_TMPDIR"
	F=$BATS_FILE_TMPDIR
	unset CNT_TENANT
}

@test "--split-tenants: one bucket file per tenant, byte for byte that tenant's own run" {
	run cnt-accumulate --split-tenants out --stats st.json "$F/all.win.avro"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ "$(ls out)" = "$(printf 'kol\nutc')" ]
	[ "$(ls out/utc)" = buckets.avro ]
	cmp out/utc/buckets.avro "$F/utc.buckets.avro"
	cmp out/kol/buckets.avro "$F/kol.buckets.avro"
	# and the records are exactly the single file's, filtered
	diff <(cnt-cat out/utc/buckets.avro out/kol/buckets.avro | sort) <(cnt-cat "$F/all.buckets.avro" | sort)
	one --argjson n "$(cnt-cat --count "$F/all.buckets.avro")" '.out == $n and .in == 5' st.json
	# merging bucket files splits them too; a codec applies to every part
	cnt-accumulate --split-tenants out2 -c null "$F/all.buckets.avro"
	cnt-accumulate -c null -o utc.null.avro "$F/utc.buckets.avro"
	cmp out2/utc/buckets.avro utc.null.avro
}

@test "--split-tenants: directories 0750 and files 0640 less the umask; existing directories keep their mode" {
	(umask 022 && cnt-accumulate --split-tenants out "$F/all.win.avro")
	[ "$(stat -c %a out out/utc out/kol out/utc/buckets.avro)" = "$(printf '750\n750\n750\n640')" ]
	(umask 077 && cnt-accumulate --split-tenants out77 "$F/all.win.avro")
	[ "$(stat -c %a out77 out77/utc out77/utc/buckets.avro)" = "$(printf '700\n700\n600')" ]
	mkdir -m 2775 pre pre/utc
	(umask 022 && cnt-accumulate --split-tenants pre "$F/all.win.avro")
	[ "$(stat -c %a pre/utc pre/kol pre/utc/buckets.avro)" = "$(printf '2775\n2750\n640')" ]
	# a rerun replaces the files (and leaves no temporaries)
	cnt-accumulate --split-tenants pre "$F/utc.win.avro"
	[ "$(ls -A pre/utc)" = buckets.avro ]
	cmp pre/utc/buckets.avro "$F/utc.buckets.avro"
}

@test "--split-tenants: a tenant id that is not a safe file name is refused, nothing left behind" {
	# kol's bucket records with the tenant patched (the header keeps "kol")
	cnt-accumulate -c null -o kol.avro "$F/kol.buckets.avro"
	for bad in 'v/l' "$(printf 'v\033l')" '..l'; do
		BAD=$bad "$PY" -c 'import os, sys; b = open(sys.argv[1], "rb").read(); i = b.index(b"avro.schema")
j = b.index(b"\"kol\"", i) + 5  # past the fingerprint table of the header
open(sys.argv[2], "wb").write(b[:j] + b[j:].replace(b"kol", os.environ["BAD"].encode()))' kol.avro bad.avro
		cnt-cat bad.avro | jq -e --arg b "$bad" '.tenant_id == $b' >/dev/null
		run --separate-stderr cnt-accumulate --split-tenants out "$F/utc.buckets.avro" bad.avro
		[ "$status" -eq 2 ]
		[[ $stderr == "cnt-accumulate: 'the scratch file': tenant id '"*"' is not a safe file name: it "* ]]
		[ -z "$(find out -type f)" ]
	done
	# utc's file was open when v/l was refused: removed with the rest
	[ -d out/utc ]
	run cnt-accumulate --split-tenants out -o x.avro "$F/all.win.avro"
	[ "$status" -eq 2 ]
	[[ $output == *"-o and --split-tenants exclude each other"* ]]
	[ ! -e x.avro ]
}

@test "cnt-cat --tenant: its own file printed as without it; another tenant's refused, status 5, nothing printed" {
	cnt-accumulate --split-tenants out "$F/all.win.avro"
	run --separate-stderr cnt-cat --tenant utc out/utc/buckets.avro
	[ "$status" -eq 0 ]
	[ "$output" = "$(cnt-cat out/utc/buckets.avro)" ]
	run --separate-stderr cnt-cat --tenant utc out/utc/buckets.avro out/kol/buckets.avro
	[ "$status" -eq 5 ]
	[ -z "$output" ]
	[ "$stderr" = "cnt-cat: 'out/kol/buckets.avro': declares tenant 'kol' (cnt.fingerprints); refused for tenant 'utc'" ]
	# the log, the windowed events and the bucket file of both tenants
	for f in all.events.avro all.win.avro all.buckets.avro; do
		run --separate-stderr cnt-cat --tenant kol --count "$F/$f"
		[ "$status" -eq 5 ]
		[ -z "$output" ]
		[[ $stderr == "cnt-cat: '$F/$f': declares tenant 'utc' (cnt.fingerprints); refused for tenant 'kol'" ]]
	done
	# --meta and --schema are refused too
	run --separate-stderr cnt-cat --tenant kol --meta "$F/utc.buckets.avro"
	[ "$status" -eq 5 ]
	[ -z "$output" ]
	# a view: its description says whose it is
	run cnt-cat --tenant acme --count "$F/views/acme-30d-distance/global/current/view.avro"
	[ "$status" -eq 0 ]
	[ "$output" = 5 ]
	run --separate-stderr cnt-cat --tenant kahani "$F/views/acme-30d-distance/global/current/view.avro"
	[ "$status" -eq 5 ]
	[[ $stderr == *"declares tenant 'acme' (cnt."*"); refused for tenant 'kahani'" ]]
}

@test "cnt-cat --tenant: a record of another tenant is refused although the header declares the caller" {
	# kol's events with one record's tenant patched to utc: the header
	# (cnt.fingerprints) still declares kol only
	ev x dist m1 1 '' "$T0" kol | cnt-ingest -d "$DEFS" --now "$T0" --max-past 400d -c null -o kol1.avro -
	"$PY" -c 'import sys; b = open(sys.argv[1], "rb").read(); i = b.rindex(b"kol")
open(sys.argv[2], "wb").write(b[:i] + b"utc" + b[i + 3:])' kol1.avro lie.avro
	run --separate-stderr cnt-cat --tenant kol lie.avro
	[ "$status" -eq 5 ]
	[ -z "$output" ]
	[ "$stderr" = "cnt-cat: 'lie.avro': holds tenant 'utc' (record 1); refused for tenant 'kol'" ]
	run --separate-stderr cnt-cat --tenant utc lie.avro
	[ "$status" -eq 5 ]
	[ "$stderr" = "cnt-cat: 'lie.avro': declares tenant 'kol' (cnt.fingerprints); refused for tenant 'utc'" ]
}

@test "CNT_TENANT names who is asking; --tenant wins; unsafe ids and pipes are usage errors" {
	CNT_TENANT=kol run --separate-stderr cnt-cat --count "$F/utc.buckets.avro"
	[ "$status" -eq 5 ]
	n=$(cnt-cat --count "$F/utc.buckets.avro")
	CNT_TENANT=kol run --separate-stderr cnt-cat --tenant utc --count "$F/utc.buckets.avro"
	[ "$status" -eq 0 ]
	[ "$output" = "$n" ]
	CNT_TENANT= run cnt-cat --count "$F/all.buckets.avro"
	[ "$status" -eq 0 ]
	CNT_TENANT=../utc run --separate-stderr cnt-cat --count "$F/utc.buckets.avro"
	[ "$status" -eq 2 ]
	[[ $stderr == "cnt-cat: CNT_TENANT: tenant id '../utc' is not a safe file name: it starts with '.'"* ]]
	for id in 'a/b' "$(printf 'a\tb')" '.' ''; do
		run --separate-stderr cnt-cat --tenant "$id" "$F/utc.buckets.avro"
		[ "$status" -eq 2 ]
		[[ $stderr == "cnt-cat: --tenant: tenant id '"* ]]
		[ -z "$output" ]
	done
	run --separate-stderr sh -c 'cat "$1" | cnt-cat --tenant utc' sh "$F/utc.buckets.avro"
	[ "$status" -eq 2 ]
	[ "$stderr" = "cnt-cat: '-': --tenant checks a whole input before printing any of it, so it needs a file, not a pipe" ]
	# standard input redirected from a file can be read twice
	run cnt-cat --tenant utc --count <"$F/utc.buckets.avro"
	[ "$status" -eq 0 ]
	[ "$output" = "$n" ]
}

@test "cnt-diff --tenant: bucket files and views of the caller compared; another tenant's refused before any output" {
	run cnt-diff --tenant utc "$F/utc.buckets.avro" "$F/utc.buckets.avro"
	[ "$status" -eq 0 ]
	run --separate-stderr cnt-diff --tenant utc "$F/utc.buckets.avro" "$F/all.buckets.avro"
	[ "$status" -eq 5 ]
	[ -z "$output" ]
	[ "$stderr" = "cnt-diff: '$F/all.buckets.avro': declares tenant 'kol' (cnt.fingerprints); refused for tenant 'utc'" ]
	run cnt-diff --tenant utc - "$F/utc.buckets.avro" <"$F/utc.buckets.avro"
	[ "$status" -eq 0 ]
	v=$F/views/acme-30d-distance/global
	run cnt-diff --tenant acme "$v/current" "$v/v000001"
	[ "$status" -eq 0 ]
	run --separate-stderr cnt-diff --tenant kahani "$v/current" "$v/v000001"
	[ "$status" -eq 5 ]
	[ -z "$output" ]
	[ "$stderr" = "cnt-diff: '$v/current/view.avro': declares tenant 'acme' (cnt.view); refused for tenant 'kahani'" ]
}

@test "cnt-rank --tenant: the view's tenant, and the overlay's, must be the caller's" {
	run cnt-rank -w "$F/views" -b acme-30d-distance --now "$NOW" --tenant acme top 1
	[ "$status" -eq 0 ]
	[[ $output == *'"member_ref":"m-5120"'* ]]
	CNT_TENANT=kahani run --separate-stderr cnt-rank -w "$F/views" -b acme-30d-distance --now "$NOW" top 1
	[ "$status" -eq 5 ]
	[ -z "$output" ]
	[ "$stderr" = "cnt-rank: '$F/views/acme-30d-distance/global/v000001': holds tenant 'acme' (cnt.view); refused for tenant 'kahani'" ]
	run --separate-stderr cnt-rank -w "$F/views" -b acme-30d-distance --now "$NOW" --tenant acme \
		--overlay "$F/ex.archive.avro" rank m-1042
	[ "$status" -eq 5 ]
	[ -z "$output" ]
	[ "$stderr" = "cnt-rank: '$F/ex.archive.avro': declares tenant 'kahani' (cnt.fingerprints); refused for tenant 'acme'" ]
	run cnt-rank -w "$F/views" -b acme-30d-distance --now "$NOW" --tenant acme \
		--overlay "$F/acme.archive.avro" rank m-1042
	[ "$status" -eq 0 ]
}

@test "cnt-explain --tenant: the board, every log and the view are the caller's; rejects and ledgers refused" {
	x() { cnt-explain -d "$EXDEFS" -b acme-30d-distance --member m-1042 --now "$NOW" "$@"; }
	run x --tenant acme -w "$F/views" "$F/acme.archive.avro"
	[ "$status" -eq 0 ]
	[ "$output" = "$(x -w "$F/views" "$F/acme.archive.avro")" ]
	run --separate-stderr x --tenant acme "$F/ex.archive.avro"
	[ "$status" -eq 5 ]
	[ -z "$output" ]
	[ "$stderr" = "cnt-explain: '$F/ex.archive.avro': declares tenant 'kahani' (cnt.fingerprints); refused for tenant 'acme'" ]
	run --separate-stderr x --tenant kahani "$F/acme.archive.avro"
	[ "$status" -eq 5 ]
	[ "$stderr" = "cnt-explain: '$EXDEFS': holds tenant 'acme' (board acme-30d-distance); refused for tenant 'kahani'" ]
	: >rejects.jsonl
	run --separate-stderr x --tenant acme -r rejects.jsonl "$F/acme.archive.avro"
	[ "$status" -eq 5 ]
	[ "$stderr" = "cnt-explain: 'rejects.jsonl': admission's rejects and duplicates are not separated by tenant; refused for tenant 'acme'" ]
	run --separate-stderr x --tenant acme --ledger rejects.jsonl "$F/acme.archive.avro"
	[ "$status" -eq 5 ]
	[ "$stderr" = "cnt-explain: 'rejects.jsonl': ledgers are not separated by tenant; refused for tenant 'acme'" ]
}

@test "cnt-project --split-tenants: views laid out per tenant, the tenant's directory 0750; cnt-rank reads it" {
	(umask 022 && cnt-project -d "$EXDEFS" -b acme-30d-distance -w v --split-tenants --now "$NOW" \
		"$F/ex.buckets.avro")
	[ "$(ls v)" = acme ]
	[ "$(stat -c %a v v/acme)" = "$(printf '750\n750')" ]
	cmp v/acme/acme-30d-distance/global/current/index.bin "$F/views/acme-30d-distance/global/current/index.bin"
	run cnt-rank -w v/acme -b acme-30d-distance --now "$NOW" --tenant acme top 1
	[ "$status" -eq 0 ]
	[[ $output == *'"member_ref":"m-5120"'* ]]
	run cnt-project -w v -b acme-30d-distance --split-tenants --publish 1
	[ "$status" -eq 2 ]
	[[ $output == *"--split-tenants builds views; to publish or freeze, name the tenant's directory"* ]]
	cnt-project -w v/acme -b acme-30d-distance --publish 1
}
