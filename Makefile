# SPDX-License-Identifier: MIT
#
# accel-monitor: one non-recursive Makefile.
#
#   make                build bin/accel-monitor
#   make run            install missing packages, build, run the pipeline on the default config
#   make test           install missing packages, build, then every test once: make check, then
#                       check-sanitize with check-deploy beside it (README "Development")
#   make check          the edit loop: the unit tests and the integration tests but the packaging and
#                       fuzz ones, on the current build
#   make check-deploy   the packaging and install tests (DEPLOY_TESTS: the Debian package, the image,
#                       make install, the units, man pages, compose stack, manifests), on the plain build
#   make check-sanitize check's tests built with SANITIZER=address,undefined,float-cast-overflow, and the
#                       short fuzz runs (tests/integration/*_fuzz.sh, build/fuzz)
#   make bench          benchmarks (never part of make test)
#   make fuzz           long libFuzzer runs (never part of make test)
#   make SANITIZER=address,undefined   a sanitized build under build/san
#   V=1                 show full command lines

VERSION := 0.1.0
CC ?= cc
PKG_CONFIG ?= pkg-config

ifeq ($(SANITIZER),)
BUILD := build/release
BIN := bin
OPT := -O2 -g
else
BUILD := build/san
BIN := build/san/bin
OPT := -O1 -g -fno-omit-frame-pointer -fsanitize=$(SANITIZER) -fno-sanitize-recover=all
endif

# Messages are built in fixed buffers on purpose: truncating a long one is the intended behaviour.
WARN := -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 -Wno-format-truncation -Werror
CFLAGS ?=
CFLAGS += -std=c11 $(OPT) $(WARN)
CPPFLAGS += -D_GNU_SOURCE -DACCEL_VERSION='"$(VERSION)"' -MMD -MP
LDFLAGS += $(if $(SANITIZER),-fsanitize=$(SANITIZER))

pc = $(shell $(PKG_CONFIG) --cflags --libs $(1) 2>/dev/null)
LIBS_COMMON := $(call pc,jansson yaml-0.1) -lm
# -ldl: the NVML collector dlopens the driver's library, and accel-monitor libcurl at its first HTTP request (libc
# has dlopen since glibc 2.34; older ones need it). libcurl is never linked into accel-monitor (http_async.h says why).
# -lpthread: the loop's workers (the kubelet's pod list and ECS's answers parsed off the loop); the NVML collector
# waits on events in a thread and reads PCIe throughput on a worker pool.
# libprotobuf-c: the kubelet's pod-resources answers (monitor/host/podres_api.pb-c.c, generated from our own
# podres_api.proto and checked in: regenerate with `cd monitor/host && protoc-c --c_out=. podres_api.proto`).
LIBS_MONITOR := $(LIBS_COMMON) $(call pc,libprotobuf-c) -ldl -lpthread
# Each sink links only what it uses (a sink with no LIBS_SINK_NAME links LIBS_COMMON).
LIBS_SINK_prom := $(LIBS_COMMON) $(call pc,libmicrohttpd gnutls zlib) -lcrypt -lpthread
LIBS_SINK_csv := $(LIBS_COMMON)
LIBS_SINK_cloudwatch := $(LIBS_COMMON) $(call pc,libcurl zlib) -lpthread
LIBS_SINK_top := $(LIBS_COMMON) $(call pc,ncursesw libcurl)
LIBS_SINK_remote-write := $(LIBS_COMMON) $(call pc,libcurl zlib libprotobuf-c snappy) -lpthread
LIBS_SINK_otlp := $(LIBS_COMMON) $(call pc,libcurl zlib libprotobuf-c) -lpthread
LIBS_ALL := $(LIBS_COMMON) $(call pc,libcurl libmicrohttpd gnutls zlib libprotobuf-c snappy) -lcrypt -lpthread -ldl

ifeq ($(V),1)
Q :=
else
Q := @
endif

# The folders are the architecture (README "Layout"): common/ and common/series/ are shared by every program;
# monitor/core, http, host, config, system, nvidia, sysfs, endpoint and app are the producer, each folder including
# only the ones before it (monitor/app/main.c its main);
# sinks/NAME/ is the program accel-NAME, its main sinks/NAME/NAME.c.
COMMON_SRC := $(wildcard common/*.c common/series/*.c common/rows/*.c)
MONITOR_DIRS := core http host config system nvidia sysfs endpoint app
MONITOR_SRC := $(filter-out monitor/app/main.c,$(foreach d,$(MONITOR_DIRS),$(wildcard monitor/$(d)/*.c)))
SINKS := $(notdir $(patsubst %/,%,$(dir $(wildcard sinks/*/*.c))))
SINKS := $(sort $(SINKS))
SINK_MAIN_SRC := $(foreach s,$(SINKS),sinks/$(s)/$(s).c)
SINK_MOD_SRC := $(filter-out $(SINK_MAIN_SRC),$(wildcard sinks/*/*.c))
UNIT_SRC := $(wildcard tests/unit/test_*.c)
BENCH_SRC := $(wildcard bench/*.c)
INTEGRATION := $(filter-out tests/integration/lib.sh,$(wildcard tests/integration/*.sh))

COMMON_OBJ := $(COMMON_SRC:%.c=$(BUILD)/%.o)
SINK_MOD_OBJ := $(SINK_MOD_SRC:%.c=$(BUILD)/%.o)
MONITOR_OBJ := $(MONITOR_SRC:%.c=$(BUILD)/%.o)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
BENCH_BIN := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)

PROGRAMS := $(BIN)/accel-monitor $(SINKS:%=$(BIN)/accel-%)

.PHONY: all deps run test check check-deploy check-sanitize bench fuzz clean
all: $(PROGRAMS)

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(BUILD)/libcommon.a: $(COMMON_OBJ)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/libmonitor.a: $(MONITOR_OBJ)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BIN)/accel-monitor: $(BUILD)/monitor/app/main.o $(BUILD)/libmonitor.a $(BUILD)/libcommon.a
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LIBS_MONITOR)

$(BUILD)/libsinks.a: $(SINK_MOD_OBJ)
	$(Q)rm -f $@ && ar rcs $@ $^

.SECONDEXPANSION:
$(BIN)/accel-%: $$(addprefix $(BUILD)/,$$(addsuffix .o,$$(basename $$(wildcard sinks/$$*/*.c)))) $(BUILD)/libcommon.a
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(or $(LIBS_SINK_$*),$(LIBS_COMMON))

# Every unit test may use any module of common/, monitor/ and sinks/.
$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libsinks.a $(BUILD)/libmonitor.a $(BUILD)/libcommon.a tests/unit/tap.h
	@mkdir -p $(@D)
	@$(if $(Q),echo "  TEST-LD $@")
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libsinks.a $(BUILD)/libmonitor.a \
		$(BUILD)/libcommon.a $(LIBS_ALL)

# Benchmark programs: built like the unit tests, with the project's flags; bench/*.sh run them.
$(BUILD)/bench/%: bench/%.c $(BUILD)/libsinks.a $(BUILD)/libmonitor.a $(BUILD)/libcommon.a
	@mkdir -p $(@D)
	@$(if $(Q),echo "  BENCH   $@")
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libsinks.a $(BUILD)/libmonitor.a \
		$(BUILD)/libcommon.a $(LIBS_ALL)

deps:
	@scripts/install-deps.sh test

# The main pipeline: the producer streaming into the Prometheus endpoint.
PORT ?= 8000
run:
	@scripts/install-deps.sh build
	@$(MAKE) --no-print-directory all
	$(BIN)/accel-monitor | $(BIN)/accel-prom --port $(PORT)

# accel-otlp's test peer (tests/helpers/otlp/receiver.mjs) decodes with OpenTelemetry's own JavaScript packages,
# at the versions its package-lock.json pins: installed into its node_modules (ignored by git) by `npm ci`, again
# when the lock changes. node and npm come with scripts/install-deps.sh test.
OTLP_PEER := tests/helpers/otlp/node_modules/.installed
$(OTLP_PEER): tests/helpers/otlp/package-lock.json tests/helpers/otlp/package.json
	@$(if $(Q),echo "  NPM     tests/helpers/otlp")
	$(Q)cd tests/helpers/otlp && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null
	$(Q)touch $@

tests: $(PROGRAMS) $(UNIT_BIN) $(OTLP_PEER)

# The libFuzzer targets (tests/fuzz/build.sh: clang, ASan+UBSan, each with the modules its path uses), built
# once into build/fuzz for the short runs of the suite and make fuzz's long ones, again when a source changes.
FUZZ_ALL := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BIN := $(FUZZ_ALL:%=build/fuzz/fuzz_%)
build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/build.sh $(wildcard common/*.[ch] common/series/*.[ch] common/rows/*.c \
		sinks/*/*.[ch] monitor/endpoint/*.[ch] monitor/host/podres_table.[ch] monitor/host/podres_api.pb-c.[ch] \
		monitor/host/jobmap.[ch] monitor/http/grpc.[ch])
	@$(if $(Q),echo "  FUZZ    $@")
	$(Q)tests/fuzz/build.sh $(@D) $*

# The suite: unit binaries and integration scripts, each its own process, run by
# tests/helpers/run_suite.sh (prove, TEST_JOBS at a time, timed; then it fails if a test left a
# process running). Each test is in one group, and make test runs each group once:
#   CHECK_TESTS   the unit tests and the integration tests of the programs: make check, and again built
#                 with the sanitizers in make check-sanitize
#   DEPLOY_TESTS  what the build ships (Debian package, image, make install, units, man pages, compose
#                 stack, manifests): the plain build is what ships, so once, in make check-deploy
#   FUZZ_TESTS    10 s libFuzzer runs of build/fuzz's targets, which are ASan+UBSan builds of their own:
#                 once, in make check-sanitize
DEPLOY_TESTS := $(addprefix tests/integration/,deploy_container.sh deploy_deb.sh deploy_kubernetes.sh \
	deploy_systemd.sh deploy_install.sh deploy_man.sh deploy_compose.sh deploy_ecs.sh)
FUZZ_TESTS := $(wildcard tests/integration/*_fuzz.sh)
CHECK_TESTS := $(UNIT_BIN) $(filter-out $(DEPLOY_TESTS) $(FUZZ_TESTS),$(INTEGRATION))
# Most tests wait on their programs' periods (make check: 134 s of CPU in 280 s at 2 jobs on 2 cores), so 4
# at a time keep two cores busy (148 s).
TEST_JOBS ?= 4
SUITE = ACCEL_BIN=$(abspath $(BIN)) ACCEL_SANITIZED=$(if $(SANITIZER),1,0) TEST_JOBS=$(TEST_JOBS) \
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=99 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	tests/helpers/run_suite.sh

check: tests $(if $(SANITIZER),$(FUZZ_BIN))
	$(SUITE) $(CHECK_TESTS) $(if $(SANITIZER),$(FUZZ_TESTS))

check-deploy: all
	$(if $(SANITIZER),$(error check-deploy runs on the plain build: run it without SANITIZER))
	$(SUITE) $(DEPLOY_TESTS)

check-sanitize:
	$(MAKE) --no-print-directory SANITIZER=address,undefined,float-cast-overflow check

# Every test once, in two steps that each keep both cores busy:
#   1. check's tests on the plain build, while the sanitized build and the fuzz targets are made at the
#      lowest priority on the CPU the tests leave idle (their output in build/san-build.log);
#   2. check-sanitize, while check-deploy's tests run beside it one at a time (their output in
#      build/deploy-tests.log, printed when they end): the sanitized tests mostly wait on their
#      programs' periods and leave a core idle, which the packaging tests (image and package builds, CPU
#      bound) fill.
# The builds run on every core (a fresh clone has nothing built).
NPROC := $(shell nproc 2>/dev/null || echo 2)
SAN_BUILD := $(MAKE) --no-print-directory -j$(NPROC) SANITIZER=address,undefined,float-cast-overflow tests $(FUZZ_BIN)
test: deps
	$(MAKE) --no-print-directory -j$(NPROC) tests
	@mkdir -p build
	nice -n 19 $(SAN_BUILD) >build/san-build.log 2>&1 & b=$$!; \
	$(SUITE) $(CHECK_TESTS); rc=$$?; \
	wait $$b || { tail -40 build/san-build.log; exit 1; }; exit $$rc
	$(MAKE) --no-print-directory TEST_JOBS=1 check-deploy >build/deploy-tests.log 2>&1 & d=$$!; \
	$(MAKE) --no-print-directory check-sanitize; rc=$$?; \
	wait $$d || rc=1; echo "== make check-deploy (build/deploy-tests.log)"; cat build/deploy-tests.log; exit $$rc

# Each benchmark prints its figures next to a baseline measured in the same run.
bench: all $(BENCH_BIN)
	@scripts/install-deps.sh bench
	bench/run.sh
	BUILD=$(BUILD) BIN=$(BIN) bench/smallest_node.sh
	bench/csv_bench.sh
	bench/cloudwatch.sh
	BUILD=$(BUILD) BIN=$(BIN) bench/prom.sh
	BUILD=$(BUILD) bench/nvml_bench.sh
	BUILD=$(BUILD) bench/sysfs_bench.sh
	BUILD=$(BUILD) bench/containers_bench.sh
	$(BUILD)/bench/pods_bench
	$(BUILD)/bench/jobmap_bench
	$(BUILD)/bench/proc_bench
	$(BUILD)/bench/proc_bench 300 16 100
	BUILD=$(BUILD) BIN=$(BIN) bench/top_bench.sh
	BUILD=$(BUILD) BIN=$(BIN) bench/node_bench.py
	BUILD=$(BUILD) BIN=$(BIN) bench/remote_write.sh
	BUILD=$(BUILD) bench/otlp.sh
	BUILD=$(BUILD) bench/expo_bench.sh
	BUILD=$(BUILD) bench/prom_pass.sh
	BUILD=$(BUILD) BIN=$(BIN) bench/endpoint_bench.sh

# A long libFuzzer run of each sink's path, stream line -> samples -> its output, one after the other,
# FUZZ_SECONDS each (short runs are part of the tests). FUZZ_TARGETS=csv picks one.
FUZZ_SECONDS ?= 600
FUZZ_TARGETS ?= $(FUZZ_ALL)
fuzz:
	for t in $(FUZZ_TARGETS); do tests/fuzz/run.sh $$t $(FUZZ_SECONDS) || exit 1; done

clean:
	rm -rf build bin

# Sink objects are prerequisites of a pattern rule, so make would delete them as intermediate
# files after each link. Only those: a bare .SECONDARY would also stop make from building a missing
# object whose source is older than the archive it belongs in.
.SECONDARY: $(SINK_MAIN_SRC:%.c=$(BUILD)/%.o) $(SINK_MOD_SRC:%.c=$(BUILD)/%.o)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# ---- Installation (docs/deploy.md) ---------------------------------------------------------------
#   make install [PREFIX=/usr/local] [DESTDIR=]   programs, man pages, docs and example configs, units
#   make uninstall                                removes what install put there (a changed config stays)
#   make man                                      the man pages (scdoc) under build/man
#   make deb [DEB_DIR=build/deb]                  DEB_DIR/accel-monitor_$(VERSION)_<arch>.deb (dpkg-buildpackage
#                                                 on a copy of the tree, so nothing is written outside it)
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
DOCDIR ?= $(PREFIX)/share/doc/accel-monitor
UNITDIR ?= $(PREFIX)/lib/systemd/system
SYSCONFDIR ?= $(if $(filter /usr,$(PREFIX)),/etc,$(PREFIX)/etc)
SCDOC ?= scdoc
# docs/man/NAME.S.scd -> build/man/NAME.S
MAN_PAGES := $(patsubst docs/man/%.scd,build/man/%,$(wildcard docs/man/*.scd))
UNITS := $(notdir $(wildcard deploy/systemd/*.service deploy/systemd/*.timer))
DOC_FILES := README.md $(wildcard docs/*.md)
EXAMPLES := $(wildcard config/*.json config/*.yaml deploy/prometheus/*.yml deploy/grafana/*.json)
# The paths a unit names, filled in at install time.
SUBST := sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g'

.PHONY: man install uninstall deb
man: $(MAN_PAGES)

build/man/%: docs/man/%.scd
	@mkdir -p $(@D)
	$(Q)$(SCDOC) <$< >$@.tmp.$$$$ && mv $@.tmp.$$$$ $@

install: all man
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 \
		$(DESTDIR)$(DOCDIR)/examples $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSCONFDIR)/accel-monitor
	install -m 755 $(PROGRAMS) $(DESTDIR)$(BINDIR)/
	install -m 644 $(filter %.1,$(MAN_PAGES)) $(DESTDIR)$(MANDIR)/man1/
	install -m 644 $(filter %.5,$(MAN_PAGES)) $(DESTDIR)$(MANDIR)/man5/
	install -m 644 $(DOC_FILES) $(DESTDIR)$(DOCDIR)/
	install -m 644 $(EXAMPLES) $(DESTDIR)$(DOCDIR)/examples/
	for u in $(UNITS); do $(SUBST) deploy/systemd/$$u >$(DESTDIR)$(UNITDIR)/$$u && chmod 644 $(DESTDIR)$(UNITDIR)/$$u || exit 1; done
	@# The environment file the units read: never overwrite one the administrator changed.
	test -e $(DESTDIR)$(SYSCONFDIR)/accel-monitor/accel-monitor.env || \
		install -m 644 deploy/accel-monitor.env $(DESTDIR)$(SYSCONFDIR)/accel-monitor/accel-monitor.env

uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(notdir $(PROGRAMS)))
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(filter %.1,$(MAN_PAGES))))
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man5/,$(notdir $(filter %.5,$(MAN_PAGES))))
	rm -f $(addprefix $(DESTDIR)$(UNITDIR)/,$(UNITS))
	rm -rf $(DESTDIR)$(DOCDIR)
	! cmp -s deploy/accel-monitor.env $(DESTDIR)$(SYSCONFDIR)/accel-monitor/accel-monitor.env || \
		rm -f $(DESTDIR)$(SYSCONFDIR)/accel-monitor/accel-monitor.env
	-rmdir $(DESTDIR)$(SYSCONFDIR)/accel-monitor 2>/dev/null

DEB_DIR ?= build/deb
DEB_SRC := $(DEB_DIR)/accel-monitor-$(VERSION)
deb:
	rm -rf $(DEB_DIR) && mkdir -p $(DEB_SRC)
	tar -c --exclude=./build --exclude=./bin --exclude=./.git --exclude=./tests/helpers/otlp/node_modules . | tar -x -C $(DEB_SRC)
	cd $(DEB_SRC) && dpkg-buildpackage -us -uc -b
	@ls $(DEB_DIR)/*.deb
