#!/usr/bin/env bats
# Every tool's options are the same in its --help, its man page (SYNOPSIS
# and option list) and its source, and a letter means one thing in every
# tool (the vocabulary of cnt(7), OPTIONS).  The comparison is done by
# tests/options.py, which reads the mdoc source directly (no mandoc).

bats_require_minimum_version 1.5.0

ROOT="$BATS_TEST_DIRNAME/.."
PY=/usr/bin/python3
TOOLS="cnt-ingest cnt-cat cnt-dedup cnt-window cnt-accumulate cnt-count cnt-diff cnt-project cnt-rank cnt-explain cnt-defs cnt-erase cnt-seal cnt-hold cnt-rebuild cnt-series cnt-stats cnt-canary cnt-audit cnt-expire cnt-partition cnt-cost cnt-sign cnt-shardmap"
command -v cnt-cat >/dev/null 2>&1 || PATH="$ROOT/build/bin:$PATH"

setup_file() {
	local t
	for t in $TOOLS; do
		"$t" --help >"$BATS_FILE_TMPDIR/$t.help"
	done
}

agree() {
	run "$PY" "$ROOT/tests/options.py" check "$1" "$BATS_FILE_TMPDIR/$1.help" "$ROOT/man/$1.1" \
		"$ROOT/cmd/$1.c" "$ROOT/lib/cli/cli.h"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "cnt-ingest: --help, man page SYNOPSIS, option list and source agree" { agree cnt-ingest; }
@test "cnt-cat: --help, man page SYNOPSIS, option list and source agree" { agree cnt-cat; }
@test "cnt-dedup: --help, man page SYNOPSIS, option list and source agree" { agree cnt-dedup; }
@test "cnt-window: --help, man page SYNOPSIS, option list and source agree" { agree cnt-window; }
@test "cnt-accumulate: --help, man page SYNOPSIS, option list and source agree" { agree cnt-accumulate; }
@test "cnt-count: --help, man page SYNOPSIS, option list and source agree" { agree cnt-count; }
@test "cnt-diff: --help, man page SYNOPSIS, option list and source agree" { agree cnt-diff; }
@test "cnt-project: --help, man page SYNOPSIS, option list and source agree" { agree cnt-project; }
@test "cnt-rank: --help, man page SYNOPSIS, option list and source agree" { agree cnt-rank; }
@test "cnt-erase: --help, man page SYNOPSIS, option list and source agree" { agree cnt-erase; }
@test "cnt-explain: --help, man page SYNOPSIS, option list and source agree" { agree cnt-explain; }
@test "cnt-defs: --help, man page SYNOPSIS, option list and source agree" { agree cnt-defs; }
@test "cnt-seal: --help, man page SYNOPSIS, option list and source agree" { agree cnt-seal; }
@test "cnt-hold: --help, man page SYNOPSIS, option list and source agree" { agree cnt-hold; }
@test "cnt-series: --help, man page SYNOPSIS, option list and source agree" { agree cnt-series; }
@test "cnt-stats: --help, man page SYNOPSIS, option list and source agree" { agree cnt-stats; }
@test "cnt-audit: --help, man page SYNOPSIS, option list and source agree" { agree cnt-audit; }
@test "cnt-cost: --help, man page SYNOPSIS, option list and source agree" { agree cnt-cost; }
@test "cnt-expire: --help, man page SYNOPSIS, option list and source agree" { agree cnt-expire; }
@test "cnt-partition: --help, man page SYNOPSIS, option list and source agree" { agree cnt-partition; }
@test "cnt-sign: --help, man page SYNOPSIS, option list and source agree" { agree cnt-sign; }
@test "cnt-shardmap: --help, man page SYNOPSIS, option list and source agree" { agree cnt-shardmap; }
@test "cnt-rebuild (sh): --help, man page SYNOPSIS and option list agree" {
	run "$PY" "$ROOT/tests/options.py" check cnt-rebuild "$BATS_FILE_TMPDIR/cnt-rebuild.help" \
		"$ROOT/man/cnt-rebuild.1" - "$ROOT/lib/cli/cli.h"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "cnt-canary (sh): --help, man page SYNOPSIS and option list agree" {
	run "$PY" "$ROOT/tests/options.py" check cnt-canary "$BATS_FILE_TMPDIR/cnt-canary.help" \
		"$ROOT/man/cnt-canary.1" - "$ROOT/lib/cli/cli.h"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "one vocabulary: a letter means one long option in every tool; shared options everywhere" {
	local t files=()
	for t in $TOOLS; do files+=("$BATS_FILE_TMPDIR/$t.help"); done
	run "$PY" "$ROOT/tests/options.py" vocabulary "${files[@]}"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "every option the --help lists is accepted by the tool" {
	local t opt bad=""
	cd "$BATS_TEST_TMPDIR"
	for t in $TOOLS; do
		# the names of the option list ("  -o, --output FILE  ..."), and
		# whether each takes an argument
		while read -r opt arg; do
			if [ -n "$arg" ]; then set -- "$opt" x; else set -- "$opt"; fi
			timeout 10 "$t" "$@" </dev/null >/dev/null 2>"$BATS_TEST_TMPDIR/err" || :
			if grep -Eq 'unrecognized option|invalid option|requires an argument|doesn.t allow an argument' \
				"$BATS_TEST_TMPDIR/err"; then
				bad="$bad$t $*: $(head -n 1 "$BATS_TEST_TMPDIR/err")"$'\n'
			fi
		done < <(sed -nE 's/^ {1,8}(-[A-Za-z0-9], )?(--?[A-Za-z0-9][A-Za-z0-9-]*)( [^ ]+)?( {2,}.*)?$/\2 \3/p' \
			"$BATS_FILE_TMPDIR/$t.help")
	done
	[ -z "$bad" ] || { printf '%s' "$bad"; return 1; }
}

@test "a bad option is told in getopt's words, what was typed shown by cnt(7)'s rule; status 2, then the usage" {
	local t
	# every tool in C (cnt-retract too, which TOOLS leaves out: its --help
	# lists its modes' options apart): an unknown option holding an escape
	# sequence and a line feed stays on one line, and sends the terminal
	# nothing
	for t in $TOOLS cnt-retract; do
		case $t in cnt-rebuild | cnt-canary) continue ;; esac
		run -2 --separate-stderr "$t" $'--bo\e[2Jgus\nx' </dev/null
		[ "${lines[*]}" = "" ] || { echo "$t wrote to standard output"; return 1; }
		[ "${stderr%%$'\n'*}" = "$t: unrecognized option '--bo\\x1b[2Jgus\\x0ax'" ] || { echo "$t: $stderr"; return 1; }
		[[ ${stderr#*$'\n'} == "usage: $t "* ]]
	done
	# the other complaints, in glibc's words
	run -2 --separate-stderr cnt-cat -x
	[ "${stderr%%$'\n'*}" = "cnt-cat: invalid option -- 'x'" ]
	run -2 --separate-stderr cnt-cat -t$'\x01'
	[ "${stderr%%$'\n'*}" = "cnt-cat: invalid option -- '\\x01'" ]
	run -2 --separate-stderr cnt-cat -t$'\xff'
	[ "${stderr%%$'\n'*}" = "cnt-cat: invalid option -- '\\xff'" ]
	run -2 --separate-stderr cnt-cat -n
	[ "${stderr%%$'\n'*}" = "cnt-cat: option requires an argument -- 'n'" ]
	run -2 --separate-stderr cnt-cat --stats
	[ "${stderr%%$'\n'*}" = "cnt-cat: option '--stats' requires an argument" ]
	run -2 --separate-stderr cnt-cat --sta
	[ "${stderr%%$'\n'*}" = "cnt-cat: option '--stats' requires an argument" ]
	run -2 --separate-stderr cnt-cat --help=1
	[ "${stderr%%$'\n'*}" = "cnt-cat: option '--help' doesn't allow an argument" ]
	run -2 --separate-stderr cnt-cat --s
	[ "${stderr%%$'\n'*}" = "cnt-cat: option '--s' is ambiguous; possibilities: '--schema' '--stats'" ]
	run -2 --separate-stderr cnt-cat --s=1
	[ "${stderr%%$'\n'*}" = "cnt-cat: option '--s=1' is ambiguous; possibilities: '--schema' '--stats'" ]
	# a short option's trouble after a long option's value: the short one
	run -2 --separate-stderr cnt-cat --stats=/dev/null -tx
	[ "${stderr%%$'\n'*}" = "cnt-cat: invalid option -- 'x'" ]
	# an invalid letter inside a cluster, after a value that reads like a
	# long option this letter is the code of (--strict, 'S', takes none)
	run -2 --separate-stderr cnt-accumulate -o --strict=1 -Sv
	[ "${stderr%%$'\n'*}" = "cnt-accumulate: invalid option -- 'S'" ]
	run -2 --separate-stderr cnt-accumulate --strict=1 -Sv
	[ "${stderr%%$'\n'*}" = "cnt-accumulate: option '--strict' doesn't allow an argument" ]
}

@test "cnt-rebuild and cnt-canary (sh) show what was typed by the C tools' rule, byte for byte" {
	local t want long cut
	# every class of the rule: an escape sequence, a line feed, a tab,
	# DEL, C1 (U+0085), a line separator, a bidirectional override and
	# U+061C, a byte that is not UTF-8, a character cut short; kept: a
	# backslash, a two-byte letter and an emoji
	local w=$'a\e[31mb\nc\td\x7fe\xc2\x85f\xe2\x80\xa8g\xe2\x80\xaeh\xd8\x9ci\xffj\xe2\x80k\xc3\xbcl\xf0\x9f\x98\x80m\\n'
	run -2 --separate-stderr cnt-cat "--$w"
	want=${stderr%%$'\n'*}
	want=${want#cnt-cat: }
	[ "$want" = "unrecognized option '--a\\x1b[31mb\\x0ac\\x09d\\x7fe\\xc2\\x85f\\xe2\\x80\\xa8g\\xe2\\x80\\xaeh\\xd8\\x9ci\\xffj\\xe2\\x80k"$'\xc3\xbcl\xf0\x9f\x98\x80m\\n'"'" ]
	long=$(head -c 5000 /dev/zero | tr '\0' '\033')
	for t in cnt-rebuild cnt-canary; do
		run -2 --separate-stderr "$t" "--$w" </dev/null
		[ -z "$output" ] || { echo "$t wrote to standard output"; return 1; }
		[ "${stderr%%$'\n'*}" = "$t: $want" ] || { echo "$t: $stderr"; return 1; }
		[[ ${stderr#*$'\n'} == "usage: $t "* ]]
		# a file name is shown by the same rule
		case $t in
		cnt-rebuild) set -- -b b -w . --buckets x seg ;;
		cnt-canary) set -- --scratch "$BATS_TEST_TMPDIR/s" ;;
		esac
		run -2 --separate-stderr "$t" -d "$BATS_TEST_TMPDIR/no"$'\n\e]0;x\a' "$@"
		[[ ${stderr%%$'\n'*} == "$t: "*"/no\\x0a\\x1b]0;x\\x07'"* ]] || { echo "$t: $stderr"; return 1; }
		# a line over 4095 bytes is cut before an escape, with "..."
		run -2 --separate-stderr "$t" "--$long"
		cut=${stderr%%$'\n'*}
		[ "${#cut}" -le 4095 ] && [ "${#cut}" -ge 4088 ] && [[ $cut == *'\x1b...' ]] || { echo "$t: ${#cut}"; return 1; }
	done
}

# The check itself: a man page that lost an option, or gained a letter the
# tool does not have, is reported (so the tests above cannot pass vacuously).
@test "options.py notices a missing option, a wrong letter and a wrong argument" {
	local man="$BATS_TEST_TMPDIR/cnt-cat.1"
	grep -v '^\.It Fl v , Fl \\-verbose$' "$ROOT/man/cnt-cat.1" >"$man"
	! cmp -s "$man" "$ROOT/man/cnt-cat.1"
	run "$PY" "$ROOT/tests/options.py" check cnt-cat "$BATS_FILE_TMPDIR/cnt-cat.help" "$man" \
		"$ROOT/cmd/cnt-cat.c" "$ROOT/lib/cli/cli.h"
	[ "$status" -eq 1 ]
	[[ $output == *"-v, --verbose is in the --help option list, not in the man page option list"* ]]

	sed 's/^\.It Fl v , Fl \\-verbose$/.It Fl V , Fl \\-verbose/' "$ROOT/man/cnt-cat.1" >"$man"
	run "$PY" "$ROOT/tests/options.py" check cnt-cat "$BATS_FILE_TMPDIR/cnt-cat.help" "$man" \
		"$ROOT/cmd/cnt-cat.c" "$ROOT/lib/cli/cli.h"
	[ "$status" -eq 1 ]
	[[ $output == *"the man page option list says -V, --verbose"* ]]

	sed 's/^\.It Fl v , Fl \\-verbose$/.It Fl v , Fl \\-verbose Ar level/' "$ROOT/man/cnt-cat.1" >"$man"
	run "$PY" "$ROOT/tests/options.py" check cnt-cat "$BATS_FILE_TMPDIR/cnt-cat.help" "$man" \
		"$ROOT/cmd/cnt-cat.c" "$ROOT/lib/cli/cli.h"
	[ "$status" -eq 1 ]
	[[ $output == *"-v, --verbose ARG"* ]]

	# a letter that means two things across tools
	sed 's/^  -v, --verbose /  -o, --verbose /' "$BATS_FILE_TMPDIR/cnt-cat.help" >"$BATS_TEST_TMPDIR/cnt-cat.help"
	run "$PY" "$ROOT/tests/options.py" vocabulary "$BATS_TEST_TMPDIR/cnt-cat.help" "$BATS_FILE_TMPDIR/cnt-ingest.help"
	[ "$status" -eq 1 ]
	[[ $output == *"-o means --output in cnt-ingest; --verbose in cnt-cat"* ]]
}
