#!/bin/sh
# Builds every tests/fuzz/fuzz_*.c as a libFuzzer binary (clang,
# AddressSanitizer + UndefinedBehaviorSanitizer) and runs each for
# FUZZ_SECONDS, starting from its committed seed corpus
# tests/fuzz/corpus/NAME/.  New inputs the fuzzer finds go to a scratch
# directory under $BUILD, never into the committed corpus; a crashing input
# is saved as $BUILD/artifacts/NAME/crash-* (add it to the corpus once the
# bug is fixed, so `make check` replays it).  Exits non-zero when any target
# fails to build or crashes.
#   make fuzz                                   (60 s per target)
#   BUILD=build-fuzz FUZZ_SECONDS=10 sh tests/fuzz/run.sh [fuzz_container ...]
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build-fuzz}
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
FUZZ_CC=${FUZZ_CC:-clang}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}

if ! command -v "$FUZZ_CC" >/dev/null 2>&1; then
	echo "fuzz: $FUZZ_CC is not installed (libFuzzer needs clang)" >&2
	exit 2
fi

CFLAGS="-std=c11 -D_GNU_SOURCE -DCNT_VERSION=\"fuzz\" -Ilib -I$BUILD/gen -O1 -g \
-fno-omit-frame-pointer -Wall -Wextra -Wno-unused-command-line-argument"
SAN=address,undefined
# Any sanitizer report is a failure: without this, UBSan reports and goes on.

# The embedded schemas, by the Makefile's own rule.
make -s BUILD="$BUILD" CC="$FUZZ_CC" "$BUILD/gen/schemas.c" || exit 2

# The library, instrumented for coverage but without libFuzzer's main().
mkdir -p "$BUILD/lib" "$BUILD/bin" "$BUILD/artifacts" "$BUILD/corpus" || exit 2
objs=""
objname() { case $1 in lib/*) n=${1#lib/}; echo "$BUILD/lib/${n%.c}.o";; *) echo "$BUILD/lib/$(basename "$1" .c).o";; esac; }
# failalloc.c is for the tools' --wrap link only (Makefile, FAILALLOC).
srcs=$(ls lib/*/*.c | grep -v '/failalloc\.c$')
for src in $srcs "$BUILD/gen/schemas.c"; do
	objs="$objs $(objname "$src")"
done
for src in $srcs "$BUILD/gen/schemas.c"; do
	obj=$(objname "$src")
	if [ ! -f "$obj" ] || [ "$src" -nt "$obj" ] || [ -n "$(find lib -name '*.h' -newer "$obj" | head -n 1)" ]; then
		echo "$src"
	fi
done | xargs -r -P "$JOBS" -I{} sh -c '
	src={}; case $src in lib/*) n=${src#lib/}; obj="$0/lib/${n%.c}.o";; *) obj="$0/lib/$(basename "$src" .c).o";; esac
	mkdir -p "$(dirname "$obj")"
	# shellcheck disable=SC2086
	$1 $2 -fsanitize=fuzzer-no-link,$3 -fno-sanitize-recover=all -c -o "$obj" "$src" || { echo "fuzz: cannot compile $src" >&2; exit 255; }
' "$BUILD" "$FUZZ_CC" "$CFLAGS" "$SAN" || exit 2

if [ $# -gt 0 ]; then
	targets=""
	for t in "$@"; do targets="$targets tests/fuzz/${t%.c}.c"; done
else
	targets=$(ls tests/fuzz/fuzz_*.c 2>/dev/null)
fi
[ -n "$targets" ] || { echo "fuzz: no tests/fuzz/fuzz_*.c" >&2; exit 2; }

failed=""
for src in $targets; do
	name=$(basename "$src" .c)
	bin="$BUILD/bin/$name"
	log="$BUILD/$name.log"
	# shellcheck disable=SC2086
	if ! $FUZZ_CC $CFLAGS -fsanitize=fuzzer,$SAN -fno-sanitize-recover=all -o "$bin" "$src" $objs \
		-lzstd -lz -lsnappy -llzma -lbz2 -lcsv -ljansson -lxxhash -lsodium -lm -lpthread; then
		echo "fuzz: $name: build failed"
		failed="$failed $name"
		continue
	fi
	scratch="$BUILD/corpus/$name"
	mkdir -p "$scratch" "$BUILD/artifacts/$name"
	seeds=""
	[ -d "tests/fuzz/corpus/$name" ] && seeds="tests/fuzz/corpus/$name"
	echo "fuzz: $name for ${FUZZ_SECONDS}s"
	# The first corpus directory receives new inputs; the seeds are only read.
	# shellcheck disable=SC2086
	if "$bin" -max_total_time="$FUZZ_SECONDS" -timeout=10 -rss_limit_mb=2048 \
		-malloc_limit_mb=1024 -print_final_stats=1 \
		-artifact_prefix="$BUILD/artifacts/$name/" "$scratch" $seeds >"$log" 2>&1; then
		grep -E '^(#[0-9]+.*DONE|stat::number_of_executed_units)' "$log" | tail -n 1
	else
		tail -n 60 "$log"
		echo "fuzz: $name CRASHED; input in $BUILD/artifacts/$name/, log $log"
		failed="$failed $name"
	fi
done

if [ -n "$failed" ]; then
	echo "fuzz: failed:$failed"
	exit 1
fi
echo "fuzz: all targets ran ${FUZZ_SECONDS}s without a crash"
