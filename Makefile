# cnt - counting, ranking and standings over archived event logs.
#
#   make            build the tools into build/bin
#   make check      unit tests, CLI tests (bats), fuzz-corpus replay, examples
#   make check-san  the same under AddressSanitizer + UndefinedBehaviorSanitizer
#   make test       check + check-san (the README's test command)
#   make bench      benchmarks (figures, not pass/fail)
#   make bench-peers  the chain beside DuckDB and the measuring stick
#   make bench-scale  the chain at 1 M, 10 M and 100 M events, memory bounded
#   make bench-decode cnt-cat --count beside the stick's decode-only mode
#   make bench-hot  hot keys: partitions without and with a shard map
#   make fuzz       run the libFuzzer targets (clang), FUZZ_SECONDS each
#   make install    PREFIX=/usr/local DESTDIR=

VERSION   := 0.1.0
PREFIX    ?= /usr/local
DESTDIR   ?=
CC        ?= cc
SAN       ?=
BUILD     ?= $(if $(SAN),build-san,build)
OPT       ?= $(if $(SAN),-O1,-O2)

WARN      := -std=c11 -Wall -Wextra -Wshadow -Wstrict-prototypes \
             -Wmissing-prototypes -Wformat=2 -Wvla -Wwrite-strings \
             -Wpointer-arith -Wcast-qual -Wundef -Werror
comma     := ,
SANFLAGS  := $(if $(SAN),-fsanitize=address$(comma)undefined -fno-sanitize-recover=all -fno-omit-frame-pointer,)
CPPFLAGS  += -D_GNU_SOURCE -DCNT_VERSION='"$(VERSION)"' -Ilib -I$(BUILD)/gen
CFLAGS    ?= $(OPT) -g
ALLCFLAGS := $(WARN) $(CFLAGS) $(SANFLAGS)
# libsodium: Ed25519 for signed events (lib/ingest/sigform.c); through
# pkg-config when it is there, else its usual name.
SODIUM_CFLAGS := $(shell pkg-config --cflags libsodium 2>/dev/null)
SODIUM_LIBS   := $(or $(shell pkg-config --libs libsodium 2>/dev/null),-lsodium)
CPPFLAGS  += $(SODIUM_CFLAGS)
LDLIBS    := -lzstd -lz -lsnappy -llzma -lbz2 -lcsv -ljansson -lxxhash $(SODIUM_LIBS) -lm -lpthread
ALLLDFLAGS := $(LDFLAGS) $(SANFLAGS)
# The tools can be made to fail their N-th allocation (CNT_FAIL_ALLOC=N,
# lib/base/failalloc.c) so that tests/faults.bats can prove every tool
# fails cleanly, and every fsync of a file or a directory fail
# (CNT_FAIL_FSYNC=file or dir); FAILALLOC=0 builds them without it.
FAILALLOC ?= 1
WRAPS     := malloc calloc realloc strdup strndup posix_memalign mmap fsync
TOOLLDFLAGS := $(if $(filter 1,$(FAILALLOC)),$(foreach f,$(WRAPS),-Wl$(comma)--wrap=$(f)),)

LIB_SRC   := $(sort $(wildcard lib/*/*.c))
LIB_HDR   := $(sort $(wildcard lib/*/*.h))
LIB_OBJ   := $(LIB_SRC:lib/%.c=$(BUILD)/lib/%.o) $(BUILD)/lib/schemas.o
SCHEMAS   := $(sort $(wildcard lib/model/schemas/*.avsc))
CMD_SRC   := $(sort $(wildcard cmd/cnt-*.c))
TOOLS     := $(CMD_SRC:cmd/%.c=$(BUILD)/bin/%)
# Tools written in sh (scripts/cnt-*), copied beside the others.
SCRIPTS   := $(sort $(wildcard scripts/cnt-*))
SCRIPT_BINS := $(SCRIPTS:scripts/%=$(BUILD)/bin/%)
UNIT_SRC  := $(sort $(wildcard tests/unit/test_*.c))
UNITS     := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
FUZZ_SRC  := $(sort $(wildcard tests/fuzz/fuzz_*.c))
REPLAYS   := $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/tests/replay_%)
FUZZ_HDR  := $(wildcard tests/fuzz/*.h)
MAN1      := $(sort $(wildcard man/*.1))
MAN5      := $(sort $(wildcard man/*.5))
MAN7      := $(sort $(wildcard man/*.7))

# Quiet by default; V=1 shows the command lines (as kernel and git builds do).
ifeq ($(V),1)
Q  :=
say = @:
else
Q  := @
say = @printf '  %-6s %s\n' $(1) $(2)
endif

.PHONY: all check check-san test bench bench-approx bench-days bench-peers bench-scale bench-decode bench-hot fuzz install uninstall clean demo tools units replays
all: tools
tools: $(TOOLS) $(SCRIPT_BINS)
units: $(UNITS)
replays: $(REPLAYS)

$(BUILD)/gen/schemas.c: $(SCHEMAS) scripts/embed-schemas.sh
	@mkdir -p $(@D)
	$(call say,GEN,$@)
	$(Q)sh scripts/embed-schemas.sh $(SCHEMAS) > $@.tmp && mv $@.tmp $@

$(BUILD)/lib/schemas.o: $(BUILD)/gen/schemas.c
	@mkdir -p $(@D)
	$(call say,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) $(ALLCFLAGS) -c -o $@ $<

$(BUILD)/lib/%.o: lib/%.c $(LIB_HDR)
	@mkdir -p $(@D)
	$(call say,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) $(ALLCFLAGS) -c -o $@ $<

$(BUILD)/libcnt.a: $(LIB_OBJ)
	$(Q)rm -f $@
	$(call say,AR,$@)
	$(Q)ar rcs $@ $^

$(BUILD)/bin/%: cmd/%.c $(BUILD)/libcnt.a $(LIB_HDR)
	@mkdir -p $(@D)
	$(call say,LD,$@)
	$(Q)$(CC) $(CPPFLAGS) $(ALLCFLAGS) $(ALLLDFLAGS) $(TOOLLDFLAGS) -o $@ $< $(BUILD)/libcnt.a $(LDLIBS)

$(SCRIPT_BINS): $(BUILD)/bin/%: scripts/%
	@mkdir -p $(@D)
	$(call say,CP,$@)
	$(Q)cp $< $@.tmp && chmod 0755 $@.tmp && mv $@.tmp $@

$(BUILD)/tests/test_%: tests/unit/test_%.c tests/unit/unit.h $(BUILD)/libcnt.a $(LIB_HDR)
	@mkdir -p $(@D)
	$(call say,LD,$@)
	$(Q)$(CC) $(CPPFLAGS) $(ALLCFLAGS) $(ALLLDFLAGS) -o $@ $< $(BUILD)/libcnt.a $(LDLIBS)

# Fuzz targets are also linked against a plain driver that replays a corpus,
# so the test command exercises them without libFuzzer.
$(BUILD)/tests/replay_%: tests/fuzz/%.c tests/fuzz/replay.c $(FUZZ_HDR) $(BUILD)/libcnt.a $(LIB_HDR)
	@mkdir -p $(@D)
	$(call say,LD,$@)
	$(Q)$(CC) $(CPPFLAGS) $(ALLCFLAGS) $(ALLLDFLAGS) -o $@ $< tests/fuzz/replay.c $(BUILD)/libcnt.a $(LDLIBS)

check: tools units replays
	BUILD=$(BUILD) sh tests/run-all.sh

check-san:
	@$(MAKE) --no-print-directory SAN=1 check

test: check check-san

bench: tools
	BUILD=$(BUILD) sh tests/bench/run.sh

bench-approx: tools
	BUILD=$(BUILD) sh tests/bench/approx.sh

# Day roll-ups: a 90-day season board vs a 1-day board, and a 90-day
# cnt-series, from day records and from hours, on one bucket file; see
# tests/bench/days.sh.
bench-days: tools
	BUILD=$(BUILD) sh tests/bench/days.sh

# The chain beside DuckDB (npm, installed into build-bench/peers) and the
# measuring stick (../shared/bench/limit-b), interleaved; see tests/bench/README.
bench-peers: tools
	BUILD=$(BUILD) sh tests/bench/peers.sh

# The chain at 1 M, 10 M and 100 M events with --memory bounded; see
# tests/bench/README ("Scaling").
bench-scale: tools
	BUILD=$(BUILD) sh tests/bench/scale.sh

# Decoding the archive beside the measuring stick's --decode-only.
bench-decode: tools
	BUILD=$(BUILD) sh tests/bench/decode.sh

# Hot keys: partitions without and with a shard map (tests/bench/hot.sh).
bench-hot: tools
	BUILD=$(BUILD) sh tests/bench/hot.sh

FUZZ_SECONDS ?= 60
fuzz:
	BUILD=build-fuzz FUZZ_SECONDS=$(FUZZ_SECONDS) sh tests/fuzz/run.sh

# The demo's output starts with the demo: the build before it prints
# nothing but errors (V=1 shows its command lines).
demo:
	@$(MAKE) --no-print-directory tools $(if $(filter 1,$(V)),,>/dev/null)
	@BUILD=$(BUILD) sh examples/demo.sh

install: tools
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/man/man5 $(DESTDIR)$(PREFIX)/share/man/man7 \
		$(DESTDIR)$(PREFIX)/share/cnt/schemas
	install -m 0755 $(TOOLS) $(SCRIPTS) $(DESTDIR)$(PREFIX)/bin/
	$(if $(MAN1),install -m 0644 $(MAN1) $(DESTDIR)$(PREFIX)/share/man/man1/)
	$(if $(MAN5),install -m 0644 $(MAN5) $(DESTDIR)$(PREFIX)/share/man/man5/)
	$(if $(MAN7),install -m 0644 $(MAN7) $(DESTDIR)$(PREFIX)/share/man/man7/)
	install -m 0644 $(SCHEMAS) $(DESTDIR)$(PREFIX)/share/cnt/schemas/

uninstall:
	rm -f $(CMD_SRC:cmd/%.c=$(DESTDIR)$(PREFIX)/bin/%) $(SCRIPTS:scripts/%=$(DESTDIR)$(PREFIX)/bin/%)
	rm -f $(MAN1:man/%=$(DESTDIR)$(PREFIX)/share/man/man1/%) \
	      $(MAN5:man/%=$(DESTDIR)$(PREFIX)/share/man/man5/%) \
	      $(MAN7:man/%=$(DESTDIR)$(PREFIX)/share/man/man7/%)
	rm -rf $(DESTDIR)$(PREFIX)/share/cnt

clean:
	rm -rf build build-san build-fuzz build-bench
