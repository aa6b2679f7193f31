# zcfs — plain Makefile. `make` builds bin/; `make deps` installs the
# Debian packages everything else needs (root), `make ci` runs what CI runs.
#
#   make                 build with -Werror (WERROR=0 to relax locally)
#   make deps            install missing Debian packages (root)
#   make man             the man pages (docs/man/*.scd) into build/man
#   make install         binaries, units, policy, man pages, completion (PREFIX, DESTDIR)
#   make check           unit tests + fuzz corpora (any user); as root also check-root
#   make check-root      integration tests (root: real mounts, zcfsd, plugins)
#   make check-asan      check under ASan+UBSan, into build/asan (ASAN_SKIP_TESTS: tests left out);
#                        no fuzz replay: the fuzz targets are ASan+UBSan builds already (build/fuzz)
#   make check-tsan      the threaded server under TSan, into build/tsan
#   make lint            bans, shellcheck, structure checks (scripts/lint.sh)
#   make ci              lint + check + check-asan on CI's bounded ASan set (.ci/run)
#   make bench           fio suite, writes bench/results/
#   make bench-projquota  fio direct 1M on project-quota volumes vs native, in
#                        the 7.3 guest (bench/results/projquota)
#   make conformance     pjdfstest + xfstests -g quick on every data path (root,
#                        ~1-2 h), writes build/conformance.md; conformance-ci: CI's part
#   make kernel          fetch Debian's newest kernel with FUSE buffer pools (>= 7.3)
#                        and its modules into build/kernel (scripts/fetch-kernel.sh)
#   make kernel-test [KERNEL=bzImage] [KMODS=dir]  boot a kernel in qemu (TCG)
#                        and run the zcfs tests that fit (kernel/README.md)
#   make kernel-guest-test / kernel-test-full  the project's tests in a guest
#                        of the make-kernel kernel (CI's set / every case;
#                        KERNEL= KMODS=: a kernel already fetched, no fetch)
#   make projquota-guest-test  project-quota volumes in that guest: fsx and
#                        pjdfstest whole on XFS / ext4 (passthrough, server)
#   make kernel-pjdfstest [PATHS="zerocopy bufpool"]  pjdfstest whole on
#                        zcfs-serve's pool / zero-copy mounts in that guest
#   V=1                  print full command lines

CC       ?= cc
CFLAGS   ?= -O2 -g
WERROR   ?= 1
SANITIZE ?=
BUILD    ?= build
BIN      ?= bin

PKGS := liburing libcap-ng json-c libseccomp fuse3 libmicrohttpd
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
# sd_notify and the servers' scopes (sd-bus): zcfsd and the volume plugin only
SYSTEMD_LIBS := $(shell pkg-config --libs libsystemd 2>/dev/null)

override CFLAGS += -std=gnu11 -Wall -Wextra -Wshadow -Wformat=2 -Wvla \
	-Wmissing-prototypes -Wstrict-prototypes -Werror=implicit-function-declaration \
	-fstack-protector-strong -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 \
	-I. $(PKG_CFLAGS) -MMD -MP -pthread
override LDFLAGS += -pthread -Wl,-z,relro -Wl,-z,now
ifeq ($(WERROR),1)
override CFLAGS += -Werror
endif
ifneq ($(SANITIZE),)
override CFLAGS += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
override LDFLAGS += -fsanitize=$(SANITIZE)
endif

ifeq ($(V),1)
Q :=
else
Q := @
endif

# common/: what every program links (logging, parsing, files, the zcfsd
# client, the ownership record codec zcfs-serve and zcfsd both write).
COMMON_SRC := $(wildcard common/*.c)
# One include path, the repository root: a header of the same folder is
# included by its name, any other by its path from the root
# ("daemon/serve/backend/inode.h", "plugin/common/zclient.h"), so every
# #include names its layer. Only the generated protobuf-c headers
# (build/gen) have a path of their own, for the code that uses them.
SERVE_SRC  := $(filter-out daemon/serve/main.c,$(wildcard daemon/serve/*.c daemon/serve/*/*.c))
ZCFSD_SRC  := $(filter-out daemon/zcfsd/main.c,$(wildcard daemon/zcfsd/*.c daemon/zcfsd/*/*.c))
CTL_SRC    := $(filter-out daemon/ctl/main.c,$(wildcard daemon/ctl/*.c))
COMMON_OBJ := $(COMMON_SRC:%.c=$(BUILD)/%.o)
SERVE_OBJ  := $(SERVE_SRC:%.c=$(BUILD)/%.o)
ZCFSD_OBJ  := $(ZCFSD_SRC:%.c=$(BUILD)/%.o)
CTL_OBJ    := $(CTL_SRC:%.c=$(BUILD)/%.o)
# Orchestrator plugins: plugin/csi -> zcfs-csi, plugin/volume ->
# zcfs-volume-plugin, both with plugin/common and common.
PLUGIN_COMMON_SRC := $(wildcard plugin/common/*.c)
CSI_SRC    := $(filter-out plugin/csi/main.c plugin/csi/flexvolume.c,$(wildcard plugin/csi/*.c))
VOLPLUGIN_SRC := $(filter-out plugin/volume/main.c,$(wildcard plugin/volume/*.c))
PLUGIN_COMMON_OBJ := $(PLUGIN_COMMON_SRC:%.c=$(BUILD)/%.o)
CSI_OBJ    := $(CSI_SRC:%.c=$(BUILD)/%.o)
# zcfs-csi serve: gRPC's C core + protobuf-c messages that protoc-c
# compiles at build time from plugin/proto/*.proto (and the well-known
# wrappers.proto from the protobuf headers) into $(BUILD)/gen.
CSI_GRPC_SRC := plugin/csi/grpc_server.c plugin/csi/grpc_dispatch.c plugin/csi/pb_json.c
CSI_CORE_SRC := $(filter-out $(CSI_GRPC_SRC),$(CSI_SRC))
CSI_CORE_OBJ := $(CSI_CORE_SRC:%.c=$(BUILD)/%.o)
PROTO_INC  ?= /usr/include
GEN        := $(BUILD)/gen
PROTO_GEN  := $(GEN)/csi.pb-c.c $(GEN)/pluginregistration.pb-c.c $(GEN)/google/protobuf/wrappers.pb-c.c
PROTO_HDR  := $(PROTO_GEN:.c=.h)
PROTO_OBJ  := $(PROTO_GEN:.c=.o)
GRPC_LIBS  := -lgrpc -lgpr -lprotobuf-c
VOLPLUGIN_OBJ := $(VOLPLUGIN_SRC:%.c=$(BUILD)/%.o)
GEN_INC    := -I$(GEN)
$(BUILD)/plugin/csi/%.o $(BUILD)/tests/unit/test_csi%.o: override CFLAGS += $(GEN_INC)

UNIT_SRC   := $(wildcard tests/unit/test_*.c)
UNIT_BIN   := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/unit/%)
# The integration tests' C helpers (tests/integration/helpers/NAME.c) are
# built as $(BUILD)/tests/integration/NAME, the tests' $ZCFS_TESTBIN.
ITEST_SRC  := $(wildcard tests/integration/helpers/*.c)
ITEST_BIN  := $(ITEST_SRC:tests/integration/helpers/%.c=$(BUILD)/tests/integration/%)
BENCH_SRC  := $(wildcard bench/*.c)
BENCH_BIN  := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)

PROGS := $(BIN)/zcfs-serve
ifneq ($(wildcard daemon/zcfsd/main.c),)
PROGS += $(BIN)/zcfsd
endif
ifneq ($(wildcard daemon/ctl/main.c),)
PROGS += $(BIN)/zcfsctl
endif
ifneq ($(wildcard plugin/csi/main.c),)
PROGS += $(BIN)/zcfs-csi
endif
ifneq ($(wildcard plugin/csi/flexvolume.c),)
PROGS += $(BIN)/zcfs-flexvolume
endif
ifneq ($(wildcard plugin/volume/main.c),)
PROGS += $(BIN)/zcfs-volume-plugin
endif

FUZZ_SRC     := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN     := $(FUZZ_SRC:tests/fuzz/%.c=build/fuzz/%)
FUZZ_SECONDS ?= 10
FUZZ_CFLAGS  := -std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE \
	-D_FILE_OFFSET_BITS=64 -I. $(PKG_CFLAGS) -pthread

.PHONY: image docker-plugin all man unit-bin deps install check check-root check-unit check-integration check-asan check-tsan ci bench conformance conformance-ci clean lint fuzz fuzz-replay \
	kernel kernel-test kernel-guest-test kernel-test-full kernel-pjdfstest projquota-guest-test bench-projquota
all: $(PROGS) $(ITEST_BIN) $(BENCH_BIN)

deps:
	$(Q)scripts/install-deps.sh

# Man pages: docs/man/NAME.SECTION.scd, the one source, rendered by scdoc
# (Debian's scdoc: small, no dependencies, clean roff) into build/man.
# t_man checks that every option --help prints is in its page and that
# man renders each page without a warning.
MAN_SRC   := $(wildcard docs/man/*.scd)
MAN_PAGES := $(MAN_SRC:docs/man/%.scd=$(BUILD)/man/%)
man: $(MAN_PAGES)
$(BUILD)/man/%: docs/man/%.scd
	@mkdir -p $(dir $@)
	@command -v scdoc >/dev/null || { echo "man: scdoc is not installed (make deps)" >&2; exit 1; }
	@$(if $(Q),echo "  SCDOC   $<")
	$(Q)scdoc <$< >$@.tmp && mv $@.tmp $@

# make install [PREFIX=/usr/local] [DESTDIR=...]: the binaries, units,
# example policy, docs, man pages and zcfsctl's bash completion
# (deploy/install.sh)
PREFIX ?= /usr/local
install: $(PROGS) $(MAN_PAGES)
	$(Q)DESTDIR="$(DESTDIR)" deploy/install.sh --prefix "$(PREFIX)" --from "$(abspath $(BIN))" \
		--man "$(abspath $(BUILD)/man)"

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) -c -o $@ $<

$(BIN)/zcfs-serve: $(BUILD)/daemon/serve/main.o $(SERVE_OBJ) $(COMMON_OBJ)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

$(BIN)/zcfsd: $(BUILD)/daemon/zcfsd/main.o $(ZCFSD_OBJ) $(COMMON_OBJ)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) $(SYSTEMD_LIBS)

$(BIN)/zcfsctl: $(BUILD)/daemon/ctl/main.o $(CTL_OBJ) $(COMMON_OBJ)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

# The plugins link only what they use (json-c, libmicrohttpd), so the
# FlexVolume copy of zcfs-csi runs on a node with just libjson-c.
$(BIN)/zcfs-csi: $(BUILD)/plugin/csi/main.o $(CSI_OBJ) $(PROTO_OBJ) $(PLUGIN_COMMON_OBJ) $(COMMON_OBJ)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -Wl,--as-needed -o $@ $^ $(GRPC_LIBS) $(PKG_LIBS)

# The FlexVolume driver kubelet execs on the host: static (json-c, libc),
# so it needs nothing the host may lack. The common code goes in through
# an archive: only what the driver uses is linked.
$(BUILD)/libzcfs-plugin.a: $(CSI_CORE_OBJ) $(PLUGIN_COMMON_OBJ) $(COMMON_OBJ)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

$(BIN)/zcfs-flexvolume: $(BUILD)/plugin/csi/flexvolume.o $(BUILD)/libzcfs-plugin.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) $(if $(SANITIZE),,-static) -o $@ $^ -ljson-c

$(GEN)/%.pb-c.c $(GEN)/%.pb-c.h: plugin/proto/%.proto
	@mkdir -p $(GEN)
	@$(if $(Q),echo "  PROTOC  $<")
	$(Q)protoc-c --c_out=$(GEN) -Iplugin/proto -I$(PROTO_INC) $<

$(GEN)/google/protobuf/%.pb-c.c $(GEN)/google/protobuf/%.pb-c.h: $(PROTO_INC)/google/protobuf/%.proto
	@mkdir -p $(GEN)
	@$(if $(Q),echo "  PROTOC  $<")
	$(Q)protoc-c --c_out=$(GEN) -I$(PROTO_INC) $<

# generated code: our warnings are not its author's
$(GEN)/%.o: $(GEN)/%.c $(PROTO_HDR)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(filter-out -Werror -Wmissing-prototypes -Wshadow,$(CFLAGS)) $(GEN_INC) -c -o $@ $<

$(CSI_OBJ) $(BUILD)/plugin/csi/main.o: | $(PROTO_HDR)

$(BIN)/zcfs-volume-plugin: $(BUILD)/plugin/volume/main.o $(VOLPLUGIN_OBJ) $(PLUGIN_COMMON_OBJ) $(COMMON_OBJ)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -Wl,--as-needed -o $@ $^ $(PKG_LIBS) $(SYSTEMD_LIBS)

$(BUILD)/tests/unit/test_csi%: $(BUILD)/tests/unit/test_csi%.o $(CSI_OBJ) $(PROTO_OBJ) $(PLUGIN_COMMON_OBJ) $(COMMON_OBJ)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(GRPC_LIBS) $(PKG_LIBS) -lcmocka

$(BUILD)/tests/unit/test_volplugin%: $(BUILD)/tests/unit/test_volplugin%.o $(VOLPLUGIN_OBJ) $(PLUGIN_COMMON_OBJ) $(COMMON_OBJ)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) -lcmocka

$(BUILD)/tests/unit/%: $(BUILD)/tests/unit/%.o $(SERVE_OBJ) $(ZCFSD_OBJ) $(COMMON_OBJ)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) $(SYSTEMD_LIBS) -lcmocka

$(BUILD)/tests/integration/%: $(BUILD)/tests/integration/helpers/%.o
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^

# holder_proof drives io_uring rings (liburing) restricted by the holder's
# own code (sandbox_holder.c).
$(BUILD)/tests/integration/holder_proof: $(BUILD)/tests/integration/helpers/holder_proof.o \
		$(BUILD)/daemon/serve/sandbox/sandbox_holder.o
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

# sandbox_probe applies zcfs-serve's own sandbox: link the real code in.
$(BUILD)/tests/integration/sandbox_probe: $(BUILD)/tests/integration/helpers/sandbox_probe.o \
		$(BUILD)/daemon/serve/sandbox/sandbox.o $(COMMON_OBJ)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

$(BUILD)/bench/%: $(BUILD)/bench/%.o
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^

# check: what any user can run; as root it goes on with the integration tier.
# FUZZ_REPLAY= leaves the fuzz corpora out (check-asan: the one set of fuzz
# binaries, build/fuzz, is ASan+UBSan whatever BUILD is; make check replays it).
FUZZ_REPLAY ?= fuzz-replay
# The node image the Kubernetes manifests run (scripts/make-image.sh:
# podman import of install.sh's tree with its libraries; no base image
# is pulled). IMAGE= names it.
IMAGE ?= registry.example.com/zcfs/zcfs:0.1.0
image: all
	$(Q)scripts/make-image.sh $(IMAGE)
# The Docker managed plugin (scripts/make-docker-plugin.sh: config.json and
# a rootfs of zcfs-volume-plugin and its libraries), for
# `docker plugin create zcfs build/docker-plugin`.
docker-plugin: all
	$(Q)scripts/make-docker-plugin.sh $(BUILD)/docker-plugin

check: all $(UNIT_BIN)
	$(Q)$(MAKE) --no-print-directory check-unit $(FUZZ_REPLAY)
	$(Q)if [ "$$(id -u)" -eq 0 ]; then $(MAKE) --no-print-directory check-root; \
	else echo "check: integration tests skipped: they need root (as root: make check-root)"; fi

check-root: check-integration

check-unit: $(UNIT_BIN)
	$(Q)tests/run-unit.sh $(UNIT_BIN)

# The man pages too: t_deploy installs them (deploy/install.sh, make image).
check-integration: $(PROGS) $(ITEST_BIN) $(MAN_PAGES)
	$(Q)ZCFS_BIN=$(abspath $(BIN)) ZCFS_TESTBIN=$(abspath $(BUILD)/tests/integration) \
		SKIP_TESTS="$(SKIP_TESTS)" ONLY="$(ONLY)" ZCFS_TRANSPORTS="$(ZCFS_TRANSPORTS)" tests/run-integration.sh

ASAN_VARS = SANITIZE=address,undefined BUILD=build/asan BIN=build/asan/bin CFLAGS="-O1 -g"
check-asan:
	$(Q)$(MAKE) --no-print-directory check $(ASAN_VARS) FUZZ_REPLAY= SKIP_TESTS="$(ASAN_SKIP_TESTS)" \
		ONLY="$(ASAN_ONLY)" ZCFS_TRANSPORTS="$(ASAN_TRANSPORTS)"

# The standalone-server data-path suites under ThreadSanitizer, both
# transports; any report TSan writes fails the target (no timing tests:
# TSan is 5-15x slower). tests/tsan.supp names what the kernel orders.
TSAN_TESTS ?= t_posix t_fio_verify t_fsmodel t_fd_pressure t_quota
check-tsan:
	$(Q)$(MAKE) --no-print-directory SANITIZE=thread BUILD=build/tsan BIN=build/tsan/bin \
		CFLAGS="-O1 -g" all
	$(Q)rm -rf build/tsan/reports && mkdir -p -m 1777 build/tsan/reports
	$(Q)TSAN_OPTIONS="log_path=$(abspath build/tsan/reports)/tsan second_deadlock_stack=1 suppressions=$(abspath tests/tsan.supp)" \
		ZCFS_BIN=$(abspath build/tsan/bin) ZCFS_TESTBIN=$(abspath build/tsan/tests/integration) \
		ZCFS_TEST_LOGDIR=$(abspath build/tsan/test-logs) ONLY="$(TSAN_TESTS)" tests/run-integration.sh; rc=$$?; \
	n=$$(ls build/tsan/reports | wc -l); \
	if [ "$$n" -gt 0 ]; then echo "check-tsan: $$n ThreadSanitizer report(s):"; \
		head -n 40 build/tsan/reports/*; rc=1; fi; \
	echo "tsan: $$([ $$rc -eq 0 ] && echo 1 || echo 0) passed, $$([ $$rc -eq 0 ] && echo 0 || echo 1) failed"; \
	exit $$rc

# The ASan+UBSan run CI affords within 30 minutes beside the plain suite:
# unit tests and the data-path suites (POSIX with uid-switching
# clients, confinement, faults, fio verify, the model checker) on /dev/fuse.
# Timing assertions do not hold at ASan's speed; `make check-asan` runs all.
# Both trees are built first (2 jobs), then scripts/ci-lanes.sh runs the
# plain suite and this tier side by side.
CI_ASAN_ONLY ?= t_posix t_confinement t_fault_enospc t_fio_verify t_fsmodel t_acl \
	t_xattr_symlink t_setid_kill
CI_ASAN_TRANSPORTS ?= devfuse
CI_JOBS ?= 2
# conformance-ci (pjdfstest on a zcfsd volume, xfstests regressions on uring)
# in the ASan lane after it
CI_CONFORMANCE ?= 1
# the kernel lane (make kernel-guest-test on the fetched >= 7.3 kernel)
# after the others
CI_KERNEL ?= 1
ci: deps
	$(Q)$(MAKE) --no-print-directory lint
	$(Q)$(MAKE) --no-print-directory -j$(CI_JOBS) all $(UNIT_BIN) $(FUZZ_BIN)
	$(Q)$(MAKE) --no-print-directory -j$(CI_JOBS) $(ASAN_VARS) all unit-bin
	$(Q)scripts/ci-lanes.sh "$(CI_ASAN_ONLY)" "$(CI_ASAN_TRANSPORTS)" "$(CI_CONFORMANCE)" "$(CI_KERNEL)"

# The unit test binaries of this BUILD tree (for ci's ASan build).
unit-bin: $(UNIT_BIN)

# BACKING=xfs|ext4: every target on one loop-device file system over an
# image on the disk (results in bench/results/BACKING/); default tmpfs.
BACKING ?= tmpfs
# KERNEL=FILE [KMODS=DIR]: in a qemu guest booted from that kernel (TCG;
# bench/guest.sh: the pool and zero-copy paths of Linux >= 7.3), results
# in bench/results/guest/.
bench: deps all
ifneq ($(KERNEL),)
	$(Q)KERNEL="$(KERNEL)" KMODS="$(KMODS)" ZCFS_BIN=$(abspath $(BIN)) ZCFS_BENCHBIN=$(abspath $(BUILD)/bench) \
		bench/guest.sh
else
	$(Q)ZCFS_BIN=$(abspath $(BIN)) ZCFS_BENCHBIN=$(abspath $(BUILD)/bench) BACKING=$(BACKING) bench/run.sh
endif

# The goal figure of issue 26: fio direct 1 MiB on project-quota volumes
# (passthrough kept) against native XFS / ext4 and the server path, in the
# Linux 7.3 guest (bench/projquota-fio.sh; results bench/results/projquota).
bench-projquota: all
	$(Q)ZCFS_BIN=$(abspath $(BIN)) bench/projquota-fio.sh

# External suites as our own checks (tests/conformance/run.sh): pjdfstest
# whole and xfstests -g quick on every data path, build/conformance.md.
# conformance-ci: the part that fits CI's budget, pjdfstest on a zcfsd
# volume (~1 min to build, 4-9 min to run on 2 idle CPUs) and the xfstests
# regressions this project fixed (CONFORMANCE_CI_XFSTESTS) on uring
# (~5 min CPU to build, 4 min to run at load 5).
CONFORMANCE_CI_PLAN ?= pjdfstest:zcfsd xfstests:uring
CONFORMANCE_CI_XFSTESTS ?= generic/003 generic/062 generic/099 generic/120 generic/184 \
	generic/375 generic/412 generic/426 generic/434 generic/444 generic/683 generic/684
conformance: deps all
	$(Q)ZCFS_BIN=$(abspath $(BIN)) tests/conformance/run.sh
conformance-ci: deps all
	$(Q)ZCFS_BIN=$(abspath $(BIN)) CONFORMANCE_PLAN="$(CONFORMANCE_CI_PLAN)" \
		XFSTESTS_ARGS="$(CONFORMANCE_CI_XFSTESTS)" tests/conformance/run.sh

# libFuzzer targets, built with clang: fuzz_fuse_* drive zcfs-serve's
# sources, the others zcfsd's (each without its main).
FUZZ_SERVE := $(filter build/fuzz/fuzz_fuse_%,$(FUZZ_BIN))
FUZZ_CSI := $(filter build/fuzz/fuzz_csi,$(FUZZ_BIN))
FUZZ_CSI_GRPC := $(filter build/fuzz/fuzz_csi_grpc,$(FUZZ_BIN))
FUZZ_VOLPLUGIN := $(filter build/fuzz/fuzz_volplugin,$(FUZZ_BIN))
FUZZ_DAEMON := $(filter-out $(FUZZ_SERVE) $(FUZZ_CSI) $(FUZZ_CSI_GRPC) $(FUZZ_VOLPLUGIN),$(FUZZ_BIN))
$(FUZZ_SERVE): build/fuzz/%: tests/fuzz/%.c $(SERVE_SRC) $(COMMON_SRC)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZ    $@")
	$(Q)clang $(FUZZ_CFLAGS) -o $@ $^ $(PKG_LIBS)
$(FUZZ_DAEMON): build/fuzz/%: tests/fuzz/%.c $(ZCFSD_SRC) $(COMMON_SRC)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZ    $@")
	$(Q)clang $(FUZZ_CFLAGS) -o $@ $^ $(PKG_LIBS) $(SYSTEMD_LIBS)

# fuzz_csi and fuzz_volplugin drive the plugins' sources (without main).
$(FUZZ_CSI): build/fuzz/%: tests/fuzz/%.c $(CSI_CORE_SRC) $(PLUGIN_COMMON_SRC) $(COMMON_SRC)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZ    $@")
	$(Q)clang $(FUZZ_CFLAGS) -o $@ $^ $(PKG_LIBS)
# fuzz_csi_grpc: protobuf-c unpack of every request type + the conversion
# to the JSON request + its parse (no gRPC, no zcfsd).
$(FUZZ_CSI_GRPC): build/fuzz/%: tests/fuzz/%.c $(CSI_CORE_SRC) plugin/csi/grpc_dispatch.c \
		plugin/csi/pb_json.c $(PROTO_GEN) $(PLUGIN_COMMON_SRC) $(COMMON_SRC) | $(PROTO_HDR)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZ    $@")
	$(Q)clang $(FUZZ_CFLAGS) $(GEN_INC) -o $@ $^ -lprotobuf-c $(PKG_LIBS)
$(FUZZ_VOLPLUGIN): build/fuzz/%: tests/fuzz/%.c $(VOLPLUGIN_SRC) $(PLUGIN_COMMON_SRC) $(COMMON_SRC)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZ    $@")
	$(Q)clang $(FUZZ_CFLAGS) -o $@ $^ $(PKG_LIBS)

fuzz: deps $(FUZZ_BIN)
	$(Q)tests/run-fuzz.sh $(FUZZ_SECONDS) $(FUZZ_BIN)

# Replays each committed corpus once (no fuzzing): part of make check.
fuzz-replay: $(FUZZ_BIN)
	$(Q)tests/run-fuzz.sh 0 $(FUZZ_BIN)

# Randomized long run against a model with server kills and zcfsd
# restarts (scripts/soak.sh; not in CI): SOAK_SECONDS, SOAK_TRANSPORTS.
.PHONY: soak
soak: $(PROGS) $(ITEST_BIN)
	$(Q)ZCFS_BIN=$(abspath $(BIN)) ZCFS_TESTBIN=$(abspath $(BUILD)/tests/integration) scripts/soak.sh

lint:
	$(Q)scripts/lint.sh

# Debian's newest kernel with buffer pools, cached in build/kernel
# (current.env: KERNEL=, KMODS=, KVER=); exit 77 when the archive cannot
# be reached and nothing is cached.
kernel:
	$(Q)scripts/fetch-kernel.sh

# The project's own tests (zcfsd, zcfs-csi, fio...) on that kernel in a
# guest sharing the host's root (scripts/kernel-guest-test.sh): CI's set
# (make ci), or every case (kernel-test-full). 77 without a kernel.
kernel-guest-test: $(PROGS) $(ITEST_BIN)
	$(Q)ZCFS_BIN=$(abspath $(BIN)) ZCFS_TESTBIN=$(abspath $(BUILD)/tests/integration) \
		KERNEL_TEST_SET=$(or $(KERNEL_TEST_SET),ci) scripts/kernel-guest-test.sh
kernel-test-full: $(PROGS) $(ITEST_BIN)
	$(Q)ZCFS_BIN=$(abspath $(BIN)) ZCFS_TESTBIN=$(abspath $(BUILD)/tests/integration) \
		KERNEL_TEST_SET=full scripts/kernel-guest-test.sh

# pjdfstest whole on zcfs-serve's pool paths in that guest
# (scripts/kernel-pjdfstest.sh; PATHS="zerocopy bufpool uring-stock",
# SUITES="pjdfstest fsx"; hours under TCG, one guest CPU). 77 without a kernel.
kernel-pjdfstest: $(PROGS) $(ITEST_BIN)
	$(Q)ZCFS_BIN=$(abspath $(BIN)) ZCFS_TESTBIN=$(abspath $(BUILD)/tests/integration) \
		PATHS="$(PATHS)" SUITES="$(SUITES)" scripts/kernel-pjdfstest.sh

# Sized volumes whose size a project quota enforces (XFS prjquota, ext4
# project) in that guest: t_zcfsd_projquota, fsx and pjdfstest whole on
# passthrough and server-path volumes (scripts/projquota-guest-test.sh,
# PQ_CASES=...; hours under TCG). 77 without a kernel.
projquota-guest-test: $(PROGS) $(ITEST_BIN)
	$(Q)ZCFS_BIN=$(abspath $(BIN)) ZCFS_TESTBIN=$(abspath $(BUILD)/tests/integration) \
		scripts/projquota-guest-test.sh

# Opt-in: needs qemu-system-x86 and busybox-static, and a kernel image
# (KERNEL=; default: the make-kernel one).
kernel-test: $(PROGS) $(ITEST_BIN)
	$(Q)KERNEL="$(KERNEL)" KMODS="$(KMODS)" ZCFS_BIN=$(abspath $(BIN)) \
		ZCFS_TESTBIN=$(abspath $(BUILD)/tests/integration) scripts/kernel-test.sh

clean:
	rm -rf build bin

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
