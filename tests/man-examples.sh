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
# over, in a fresh copy of the directory the demo leaves (make demo:
# build/demo), with the source tree's examples/ beside it (the demo links
# it there), as the pages' EXAMPLES say: archive.avro, buckets.avro,
# views/ and the demo's other files, examples/definitions.json and
# examples/events.jsonl.  A reader can try them in build/demo.
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
# /usr/bin first: the examples' python3 is the system's, with python3-avro.
PATH="$BUILD/bin:/usr/bin:$PATH"
export PATH

work=$(mktemp -d "${TMPDIR:-/tmp}/cnt-man-base.XXXXXX")
trap 'rm -rf "$work"' EXIT
base="$work/base"

if ! CNT_DEMO_DIR="$base" BUILD="$BUILD" sh examples/demo.sh >"$work/demo.log" 2>&1; then
	cat "$work/demo.log"
	echo "man-examples: the demo, whose directory the examples run in, failed (above)"
	echo "man-examples: 0 passed, 1 failed"
	exit 1
fi

if [ $# -eq 0 ]; then
	set -- man/*.1 man/*.5 man/*.7
fi
/usr/bin/python3 tests/man-examples.py "$base" "$@"
