#!/bin/sh
# Runs every test of one build: C unit tests, fuzz-corpus replays, the bats
# CLI tests, the man pages' EXAMPLES (tests/man-examples.sh), the demo's
# check (examples/check.sh) and the nightly job (examples/nightly.sh).
# Ends with one line "N passed, N failed" and a non-zero status when
# anything failed.  Every part counts a non-zero
# exit status as a failure, whatever it printed before: a unit binary or
# bats that exits non-zero after an all-passed summary (a leak report, a
# crash in teardown), a replay, a skipped bats test (the project has none).
#   BUILD=build sh tests/run-all.sh        (make check does this)
#   BATS_FILTER=cat sh tests/run-all.sh    (only tests/*cat*.bats)
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
PATH="$PWD/$BUILD/bin:$PATH"
CNT_BUILD="$PWD/$BUILD"
export PATH CNT_BUILD
pass=0
fail=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

note_fail() { fail=$((fail + 1)); echo "FAILED: $1"; }

for t in "$BUILD"/tests/test_*; do
	[ -x "$t" ] || continue
	if "$t" >"$log" 2>&1; then rc=0; else rc=$?; echo "--- $t"; cat "$log"; fi
	line=$(grep -E '[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
	p=$(echo "$line" | sed -E 's/.* ([0-9]+) passed.*/\1/')
	f=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
	if [ -z "$line" ]; then note_fail "$t (crashed or printed no summary)"; continue; fi
	pass=$((pass + p)); fail=$((fail + f))
	# A binary that printed its summary and then exited non-zero (as
	# LeakSanitizer makes it do) has failed, whatever the summary said.
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then note_fail "$t (exit status $rc after its summary)"; fi
done

for r in "$BUILD"/tests/replay_*; do
	[ -x "$r" ] || continue
	name=${r##*/replay_}
	if "$r" tests/fuzz/corpus/"$name" >"$log" 2>&1; then
		pass=$((pass + 1))
	else
		cat "$log"; note_fail "fuzz corpus replay $name"
	fi
done

if command -v bats >/dev/null 2>&1; then
	files=$(ls tests/*${BATS_FILTER:-}*.bats 2>/dev/null)
	if [ -n "$files" ]; then
		# shellcheck disable=SC2086
		if bats --tap $files >"$log" 2>&1; then rc=0; else rc=$?; fi
		grep -E '^not ok' "$log" >/dev/null && sed -n '/^not ok/,/^ok/p' "$log" | grep -v '^ok'
		# A skipped test is not a passed one (tests do not skip).
		s=$(grep -cE '^ok .* # skip' "$log")
		p=$(grep -E '^ok' "$log" | grep -cvE ' # skip')
		f=$(grep -cE '^not ok' "$log")
		pass=$((pass + p)); fail=$((fail + f))
		grep -E '^ok .* # skip' "$log" | while IFS= read -r l; do echo "FAILED: skipped: $l"; done
		fail=$((fail + s))
		if [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then cat "$log"; note_fail "bats ran no test"
		elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && [ "$s" -eq 0 ]; then
			cat "$log"; note_fail "bats (exit status $rc with no failed test)"
		fi
	fi
else
	note_fail "bats is not installed (run scripts/install-deps.sh)"
fi

# The man pages' EXAMPLES: one test per command (its summary line is read
# as a unit binary's is).
if [ -z "${BATS_FILTER:-}" ] && [ -f tests/man-examples.sh ]; then
	if sh tests/man-examples.sh >"$log" 2>&1; then rc=0; else rc=$?; fi
	line=$(grep -E '^man-examples: [0-9]+ passed, [0-9]+ failed$' "$log" | tail -n 1)
	if [ -z "$line" ]; then
		cat "$log"; note_fail "man page examples (exit status $rc, no summary)"
	else
		p=$(echo "$line" | sed -E 's/.* ([0-9]+) passed.*/\1/')
		f=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
		pass=$((pass + p)); fail=$((fail + f))
		[ "$f" -eq 0 ] || grep -v '^ok ' "$log"
		if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then cat "$log"; note_fail "man page examples (exit status $rc after its summary)"; fi
	fi
fi

if [ -z "${BATS_FILTER:-}" ] && [ -f examples/check.sh ]; then
	if sh examples/check.sh >"$log" 2>&1; then pass=$((pass + 1)); else cat "$log"; note_fail "examples"; fi
fi
# The other walkthroughs check themselves (each exits non-zero at the first
# step that shows something other than what it says); each runs in a fresh
# directory of its own.
if [ -z "${BATS_FILTER:-}" ]; then
	for ex in examples/*.sh; do
		case $ex in examples/demo.sh | examples/check.sh | examples/nightly.sh) continue ;; esac
		exdir=$(mktemp -d "${TMPDIR:-/tmp}/cnt-walk.XXXXXX")
		if CNT_DEMO_DIR="$exdir/run" BUILD="$BUILD" sh "$ex" >"$log" 2>&1; then
			pass=$((pass + 1))
		else
			cat "$log"; note_fail "$ex"
		fi
		rm -rf "$exdir"
	done
fi

# The nightly rebuild-and-diff job of examples/nightly.sh, in a directory
# of its own.
if [ -z "${BATS_FILTER:-}" ] && [ -f examples/nightly.sh ]; then
	nd=$(mktemp -d "${TMPDIR:-/tmp}/cnt-nightly.XXXXXX")
	if CNT_NIGHTLY_DIR="$nd" BUILD="$BUILD" sh examples/nightly.sh >"$log" 2>&1; then
		pass=$((pass + 1))
	else
		cat "$log"; note_fail "examples/nightly.sh"
	fi
	rm -rf "$nd"
fi

echo "$BUILD: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
