#!/bin/sh
# Runs the commands in the EXAMPLES sections of the man pages, as jq runs
# its manual, so that a documented command cannot rot.  tests/run-all.sh
# runs it (make check, make check-san); one test per command.
#   BUILD=build sh tests/man-examples.sh [man/PAGE ...]
#
# The convention, for every display (.Bd -literal ... .Ed, or .Dl) of an
# EXAMPLES section in man/*.1, *.5 and *.7:
#   - A line starting with "$ " starts a command.  The command goes on over
#     the next lines until it is a complete shell command (bash -n accepts
#     it): a trailing backslash, a pipe at the end of a line, an open quote
#     or a case ... esac carry it on.
#   - The lines after a command, up to the next "$ " line or the end of the
#     display, are its output as shown.  When there are any, the command's
#     standard output must be the same, white space ignored (so a long line
#     may be folded); a line holding only "..." stands for any lines.
#   - A command must end with status 0, or with the status that a comment at
#     its end gives: "$ cnt-diff a.avro b.avro   # exit status 1".  A
#     pipeline fails when any of its commands fails (pipefail).
#   - A display after the comment line `.\" man-examples: file NAME` is not
#     run: its text is written to NAME, for the commands after it.  After
#     `.\" man-examples: not run` it is left alone (a fragment).  Any other
#     display without a "$ " line is an error, so that no example escapes
#     by accident.
#   - mdoc escapes are undone (\e, \-, \(dq, \(aq, \&).
# A page's commands run in order in one bash, so files and variables carry
# over, in a fresh copy of a scratch directory that holds the demo's
# files (prepared below, with the tools): the definitions and events of
# examples/ (also as defs.json, events.jsonl and 2026-11-29.jsonl), the
# admitted archive.avro (= 2026-11-29.avro) with rejects.jsonl,
# duplicates.jsonl and stats.json, deduped.avro, windowed.avro,
# window.json, an earlier day 2026-11-22.avro and the dedup.state it
# left, the bucket file buckets.avro (also as
# 2026-11-29.buckets.avro, week.buckets.avro, live.avro, theirs.avro,
# ours.avro, a.avro), doubled.avro (= b.avro, every sum doubled),
# mon.windowed.avro and tue.windowed.avro (the events in two parts),
# empty.avro (a bucket file without records), the published view of
# acme-30d-distance in views/, members.jsonl (display names), today.avro
# (a later log segment, admitted from 2026-11-30.jsonl), other.avro (another producer's events) and
# export.csv.gz (the events as CSV).  --now is 2026-11-30T09:00:00Z
# throughout, as in the demo.
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
# /usr/bin first: the examples' python3 is the system's, with python3-avro.
PATH="$BUILD/bin:/usr/bin:$PATH"
export PATH
NOW=2026-11-30T09:00:00Z

work=$(mktemp -d "${TMPDIR:-/tmp}/cnt-man-base.XXXXXX")
trap 'rm -rf "$work"' EXIT
base="$work/base"
mkdir -p "$base/examples"

prepare() {
	set -e
	cd "$base"
	cp "$ROOT/examples/definitions.json" "$ROOT/examples/events.jsonl" examples/
	cp examples/definitions.json defs.json
	cp examples/events.jsonl events.jsonl
	cp examples/events.jsonl 2026-11-29.jsonl
	cnt-ingest --definitions defs.json --now "$NOW" --output archive.avro --rejects rejects.jsonl \
		--duplicates duplicates.jsonl --stats stats.json events.jsonl
	cp archive.avro 2026-11-29.avro
	cnt-dedup --definitions defs.json --output deduped.avro archive.avro
	# an earlier day, whose keys are the dedup state
	printf '%s\n' '{"idempotency_key":"acme-ride-0900","tenant_id":"acme","counter_id":"distance_m","member_ref":"m-1042","delta":31000,"event_time":"2026-11-22T07:10:00+01:00"}' \
		'{"idempotency_key":"acme-ride-0901","tenant_id":"acme","counter_id":"distance_m","member_ref":"m-2210","delta":12000,"event_time":"2026-11-22T08:00:00+01:00"}' >"$work/22.jsonl"
	cnt-ingest --definitions defs.json --now 2026-11-22T20:00:00Z --output 2026-11-22.avro "$work/22.jsonl"
	cnt-dedup --definitions defs.json --state dedup.state --output /dev/null 2026-11-22.avro
	cnt-window --definitions defs.json --stats window.json --output windowed.avro deduped.avro
	cnt-accumulate --output buckets.avro windowed.avro
	for f in 2026-11-29.buckets.avro week.buckets.avro live.avro theirs.avro ours.avro a.avro; do
		cp buckets.avro "$f"
	done
	cnt-accumulate --output doubled.avro buckets.avro buckets.avro
	cp doubled.avro b.avro
	head -n 15 events.jsonl >"$work/mon.jsonl"
	tail -n +16 events.jsonl >"$work/tue.jsonl"
	: >"$work/empty.jsonl"
	for d in mon tue empty; do
		cnt-ingest --definitions defs.json --now "$NOW" --rejects /dev/null "$work/$d.jsonl" |
			cnt-dedup --definitions defs.json | cnt-window --definitions defs.json >"$d.windowed.avro"
	done
	cnt-accumulate --output empty.avro empty.windowed.avro
	rm empty.windowed.avro
	cnt-project --definitions defs.json --board acme-30d-distance --views views --now "$NOW" buckets.avro
	printf '%s\n' '{"member_ref":"m-1042","display_name":"Ana"}' \
		'{"member_ref":"m-2210","display_name":"Ben"}' \
		'{"member_ref":"m-3307","display_name":"Chidi","opted_out":true}' >members.jsonl
	printf '%s\n' '{"idempotency_key":"acme-ride-0100","tenant_id":"acme","counter_id":"distance_m","member_ref":"m-1042","delta":60000,"event_time":"2026-11-30T09:30:00Z"}' >"$work/today.jsonl"
	cnt-ingest --definitions defs.json --now 2026-11-30T10:00:00Z --output today.avro "$work/today.jsonl"
	cp "$work/today.jsonl" 2026-11-30.jsonl
	cp "$ROOT/tests/fixtures/resolve.missing.avro" other.avro
	/usr/bin/python3 - events.jsonl <<-'EOF' | gzip -n >export.csv.gz
	import csv, json, sys
	cols = ["idempotency_key", "tenant_id", "counter_id", "member_ref", "item", "delta",
	        "event_time", "origin", "subject", "attrs.region", "attrs.device"]
	w = csv.writer(sys.stdout, lineterminator="\n")
	w.writerow(cols)
	for line in open(sys.argv[1], encoding="utf-8"):
	    e = json.loads(line)
	    row = [e.get("attrs", {}).get(c[6:]) if c.startswith("attrs.") else e.get(c) for c in cols]
	    w.writerow(["" if v is None else v for v in row])
	EOF
}

if ! (prepare) >"$work/prepare.log" 2>&1; then
	cat "$work/prepare.log"
	echo "man-examples: cannot prepare the example files (above)"
	echo "man-examples: 0 passed, 1 failed"
	exit 1
fi

if [ $# -eq 0 ]; then
	set -- man/*.1 man/*.5 man/*.7
fi
# cnt.7 is the lead's: its EXAMPLES get "$ " prompts there.
MAN_EXAMPLES_PENDING=${MAN_EXAMPLES_PENDING-cnt.7} /usr/bin/python3 tests/man-examples.py "$base" "$@"
