# mevitop build.  `make` builds ./mevitop; `sudo make run` and `sudo make test` are the two
# commands the README promises.  Output goes to build/ (and build-san/ for the sanitizer build
# the tests use).  V=1 shows full commands.

BUILD      ?= build
ARCH       := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
CC         ?= cc
CLANG      ?= clang
BPFTOOL    ?= $(shell command -v bpftool 2>/dev/null || echo /usr/sbin/bpftool)
PYTHON     ?= /usr/bin/python3
VMLINUX    := vmlinux/$(ARCH)/vmlinux.h
# A port is vmlinux/ARCH/: syscalls.h written by hand, vmlinux.h from `make vmlinux` there.
ifneq ($(words $(wildcard $(VMLINUX) vmlinux/$(ARCH)/syscalls.h)),2)
$(if $(filter-out clean vmlinux,$(or $(MAKECMDGOALS),all)),$(error mevitop: no vmlinux/$(ARCH)/vmlinux.h and syscalls.h: architecture $(ARCH) is not supported))
endif
VERSION    := 0.1.0

ifeq ($(V),1)
Q :=
msg =
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

WARN       := -Wall -Wextra -Werror -Wno-unused-parameter -Wshadow -Wformat=2 -Wvla
CFLAGS     ?= -g -O2
# The sanitizer build is a separate tree; SAN=1 selects it (used by the tests).
ifeq ($(SAN),1)
BUILD      := $(BUILD)-san
CFLAGS     += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS    += -fsanitize=address,undefined
endif
# The layers of user/ (see doc/architecture.md): a file's folder is its layer.  Each folder is
# also on the include path, so a bare #include "engine.h" keeps working wherever it is written.
USER_LAYERS := lib model kernel engine exact out ui
# Exact mode's CPU-dependent part is one folder per architecture (user/exact/arch.h,
# doc/arch.md); its headers are found by bare name, so only ARCH's folder is on the path.
EXACT_ARCH := user/exact/arch/$(ARCH)
ifeq ($(wildcard $(EXACT_ARCH)/arch_regs.h),)
$(error no $(EXACT_ARCH)/: exact mode has no backend for '$(ARCH)' (doc/arch.md says how to add one))
endif
ALL_CFLAGS := $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE -MMD -MP \
              -DMEVITOP_VERSION='"$(VERSION)"' -I$(BUILD) -Iuser -I$(EXACT_ARCH) -Ibpf
# No -lmicrohttpd: user/lib/mhd_lazy.c opens it when the web server starts (linked, it and
# GnuTLS loaded in every session: ~2.6 MiB of RSS).
LIBS       := -lbpf -ldw -lelf -lz -lzstd -lncursesw -lroaring -lpthread -lm

BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
              -I$(dir $(VMLINUX)) -Ibpf -I$(BUILD)

# maps.bpf.c defines what the others declare extern; bpftool's linker wants it first.
# fcache.bpf.c (the page cache walk and counters) is a skeleton of its own: it shares no
# map with the others and loads only when files are watched.  So is vmas.bpf.c (the start's
# VMA pass): the start's second thread loads it beside the main skeleton's load, where its
# CO-RE relocations (~8 ms of libbpf: types no other program reads) cost no wall time.
BPF_SOLO   := bpf/fcache.bpf.c bpf/vmas.bpf.c
BPF_SRCS   := bpf/maps.bpf.c $(filter-out bpf/maps.bpf.c $(BPF_SOLO),$(sort $(wildcard bpf/*.bpf.c)))
BPF_OBJS   := $(patsubst bpf/%.bpf.c,$(BUILD)/bpf/%.bpf.o,$(BPF_SRCS))
SKEL       := $(BUILD)/mevitop.skel.h $(BUILD)/fcache.skel.h $(BUILD)/vmas.skel.h

# user/ holds the core modules; each subfolder of user/ is a layer of its own (user/LAYER/*.c).
USER_SRCS  := $(sort $(wildcard user/*.c user/*/*.c $(EXACT_ARCH)/*.c))
USER_OBJS  := $(patsubst user/%.c,$(BUILD)/user/%.o,$(USER_SRCS))
# Everything but main.o, so unit tests and helpers can link the engine.
LIB_OBJS   := $(filter-out $(BUILD)/user/main.o,$(USER_OBJS))

UNIT_SRCS  := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BINS  := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))
WL_SRCS    := $(sort $(wildcard tests/workloads/*.c))
WL_BINS    := $(patsubst tests/workloads/%.c,$(BUILD)/workloads/%,$(WL_SRCS)) \
	      $(BUILD)/workloads/wl32
BENCH_SRCS := $(sort $(wildcard bench/*.c))
BENCH_BINS := $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRCS))

DEB_PKGS   := clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev pkg-config make gcc \
              libncurses-dev libroaring-dev libcmocka-dev python3 python3-pytest tmux \
              procps util-linux mount libmicrohttpd-dev prometheus libzstd-dev libdw-dev
# What only the benchmarks run beside mevitop (a real server and its load tool, the
# in-kernel floor, perf's page-fault sampling, node_exporter as idle_cost.py's yardstick):
# installed by `make bench`, not `make test`.
BENCH_PKGS := redis-server redis-tools bpftrace linux-perf vmtouch smem prometheus-node-exporter
# What only the tests run (the UI tests drive real headless browsers, Chromium and Firefox
# ESR: ~190 MB to download; the exact-mode tests watch Debian's memcached as its own user; the
# recording tests count a writer's fsyncs with strace):
# installed by `make test` and `make stress`, not by `make run`.
TEST_PKGS  := chromium firefox-esr memcached strace python3-websocket xfsprogs redis-server \
              redis-tools postgresql
# What only `make stress` runs: the fresh-machine check makes a Debian minbase tree.
STRESS_PKGS := debootstrap

.DELETE_ON_ERROR:
.PHONY: all deps run test stress unit integration bench bench-record clean vmlinux install man cross-check

# The arch seam, checked by the compiler: every user/ source compiled (-c, no link: the
# arm64 builds of libbpf, ncurses... are not installed) for aarch64 with Debian's cross
# gcc, against exact mode's arm64 folder (a stub: exact mode refuses there).  Arch-neutral
# headers of the libraries come from /usr/include after the cross sysroot's own.
CROSS_ARCH  := arm64
CROSS_CC    ?= aarch64-linux-gnu-gcc
CROSS_PKGS  := gcc-aarch64-linux-gnu libc6-dev-arm64-cross linux-libc-dev-arm64-cross
CROSS_BUILD := $(BUILD)-cross-$(CROSS_ARCH)
CROSS_SRCS  := $(sort $(wildcard user/*.c user/*/*.c user/exact/arch/$(CROSS_ARCH)/*.c))
CROSS_OBJS  := $(patsubst user/%.c,$(CROSS_BUILD)/user/%.o,$(CROSS_SRCS))
cross-check: $(SKEL)
	$(Q)$(MAKE) --no-print-directory deps DEB_PKGS="$(CROSS_PKGS)"
	$(Q)$(MAKE) --no-print-directory cross-objs
	@echo "cross-check: $(words $(CROSS_SRCS)) user/ sources compile for $(CROSS_ARCH)"
cross-objs: $(CROSS_OBJS)
$(CROSS_BUILD)/user/%.o: user/%.c
	$(call msg,CROSS,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CROSS_CC) $(subst -I$(EXACT_ARCH),-Iuser/exact/arch/$(CROSS_ARCH),$(ALL_CFLAGS)) \
		-idirafter /usr/include -c $< -o $@

all: mevitop

mevitop: $(BUILD)/mevitop
	$(Q)ln -sf $(BUILD)/mevitop $@

$(BUILD)/mevitop: $(USER_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/user/%.o: user/%.c | $(SKEL)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

# The web view's page is .incbin'ed into this object (-MMD cannot see it).
WEB_ASSETS := $(wildcard user/out/web/*)
$(BUILD)/user/out/web_assets.o $(CROSS_BUILD)/user/out/web_assets.o: $(WEB_ASSETS)

# Each concern is its own BPF object; bpftool's static linker joins them so one skeleton
# (and one ring buffer and target map) serves them all.
$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c $(VMLINUX)
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/mevitop.bpf.o: $(BPF_OBJS)
	$(call msg,BPFLINK,$@)
	$(Q)$(BPFTOOL) gen object $@ $^

# The skeleton embeds its object whole: bpftool's linker leaves the DWARF out (720 KiB of
# the executable's 1 MiB of .rodata was the page cache object's, mostly debug info).
$(BUILD)/fcache.bpf.o: $(BUILD)/bpf/fcache.bpf.o
	$(call msg,BPFLINK,$@)
	$(Q)$(BPFTOOL) gen object $@ $^

$(BUILD)/fcache.skel.h: $(BUILD)/fcache.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name fcache_bpf > $@

$(BUILD)/vmas.bpf.o: $(BUILD)/bpf/vmas.bpf.o
	$(call msg,BPFLINK,$@)
	$(Q)$(BPFTOOL) gen object $@ $^

$(BUILD)/vmas.skel.h: $(BUILD)/vmas.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name vmas_bpf > $@

$(BUILD)/mevitop.skel.h: $(BUILD)/mevitop.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name mevitop_bpf > $@

# One archive per folder of user/ (top: user/*.c but main.c).  A unit test links the
# archives of the folders it tests and of those they stand on, named in test_X_LINK, and the
# linker takes from them only the objects the test needs: test_itree links itree.o and
# nothing else, so no libbpf, ncurses or roaring; a call outside those folders fails to
# link.  test_X_LIBS: the libraries those objects need.  Every test names its folders
# (test_layers.py checks it).
TOP_OBJS    := $(filter-out $(BUILD)/user/main.o,$(filter $(BUILD)/user/%.o,$(patsubst user/%.c,$(BUILD)/user/%.o,$(wildcard user/*.c))))
ALL_FOLDERS := $(sort $(patsubst user/%/,%,$(dir $(wildcard user/*/*.c))))
$(BUILD)/folders/top.a: $(TOP_OBJS)
define folder_archive
$(BUILD)/folders/$(1).a: $(filter $(BUILD)/user/$(1)/%,$(USER_OBJS))
endef
$(foreach d,$(ALL_FOLDERS),$(eval $(call folder_archive,$(d))))
$(BUILD)/folders/%.a:
	$(call msg,AR,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)rm -f $@ && ar rcs $@ $^

test_array_LINK    := lib
test_hash_LINK     := lib
test_strpool_LINK  := lib
test_strpool_LIBS  := -lpthread
test_itree_LINK    := lib
test_pageset_LINK  := lib
test_utf8_LINK     := lib
test_pageset_LIBS  := -lroaring
test_model_LINK    := model lib
test_model_LIBS    := -lroaring -lm
test_model_figs_LINK := model lib
test_model_figs_LIBS := -lroaring -lm
test_share_LINK    := rec model lib
test_share_LIBS    := -lroaring -lm
test_rules_LINK    := engine model lib
test_rules_LIBS    := -lroaring -lm -lpthread
test_engine_lock_LINK := engine model lib
test_engine_lock_LIBS := -lroaring -lm -lpthread
test_procmap_LINK  := kernel lib
test_kpage_self_LINK := kernel lib
test_stacks_LINK   := stacks kernel model lib
test_stacks_LIBS   := -ldw -lelf -lroaring -lm
test_metrics_LINK  := out model lib
test_metrics_LIBS  := -lz -lroaring -lm
test_inject_LINK   := exact kernel model lib
test_inject_LIBS   := -lroaring -lm -lpthread
test_uffd_LINK     := exact kernel model lib
test_uffd_LIBS     := -lroaring -lm -lpthread
test_jobq_LINK     := exact lib
test_jobq_LIBS     := -lpthread
test_maplayout_LINK := ui model lib
test_maplayout_LIBS := -lncursesw -lroaring -lm
test_procfs_stat_LINK := kernel lib
test_maps_fuzz_LINK := kernel lib
test_fring_LINK    := kernel lib
test_taskiter_LINK := kernel lib
test_taskiter_LIBS := -lbpf -lelf -lz
test_vmaiter_LINK  := kernel lib
test_vmaiter_LIBS  := -lbpf -lelf -lz
test_proctree_LINK := ui model lib
test_proctree_LIBS := -lncursesw -lroaring -lm
test_rec_fuzz_LINK := rec out stacks engine kernel model lib
test_rec_fuzz_LIBS := -lzstd -lz -lbpf -ldw -lelf -lroaring -lm -lpthread
test_seccomp_bpf_LINK := exact lib
test_seccomp_guard_LINK := exact kernel model lib
test_seccomp_guard_LIBS := -lroaring -lm -lpthread
test_web_touch_LINK := out stacks kernel model lib
test_web_touch_LIBS := -ldw -lelf -lroaring -lm
test_fcache_LINK   := out kernel model lib
test_fcache_LIBS   := -lroaring -lm
test_files_top_LINK := engine model lib
test_files_top_LIBS := -lroaring -lm

folder_archives = $(addsuffix .a,$(addprefix $(BUILD)/folders/,$(or $($(1)_LINK),top $(ALL_FOLDERS))))
test_libs = $(if $($(1)_LINK),$($(1)_LIBS),$(LIBS))

.SECONDEXPANSION:
$(BUILD)/tests/%: tests/unit/%.c $$(call folder_archives,$$*) | $(SKEL)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< -Wl,--start-group \
		$(call folder_archives,$*) -Wl,--end-group $(call test_libs,$*) -lcmocka

# Workloads and benchmarks are plain programs: no sanitizers, they are what gets watched.
# wl32 is a 32-bit process with no libc (gcc-multilib's is not needed).
$(BUILD)/workloads/wl32: tests/workloads/wl32.S
	$(call msg,AS,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -m32 -nostdlib -static -o $@ $<

$(BUILD)/workloads/%: tests/workloads/%.c tests/workloads/workload.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -g -O1 -Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE -o $@ $< -lpthread

# --stacks' workload again with frame pointers, and the shared library it loads
# (tests/integration/test_stacks.py).
WL_EXTRA   := $(BUILD)/workloads/wl_stacks_fp $(BUILD)/workloads/libwl_touch.so
$(BUILD)/workloads/wl_stacks_fp: tests/workloads/wl_stacks.c tests/workloads/workload.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -g -O1 -fno-omit-frame-pointer -Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE \
		-o $@ $< -lpthread

$(BUILD)/workloads/lib%.so: tests/workloads/lib/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -g -O1 -fPIC -shared -Wall -Wextra -Werror -std=gnu11 -o $@ $<

$(BUILD)/bench/%: bench/%.c $(wildcard bench/*.h)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -g -O2 -Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE -o $@ $< -lpthread -lm

# A reader of every smaps_rollup that maps no shared library (bench/rollups.c says why).
$(BUILD)/bench/rollups: bench/rollups.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -O2 -Wall -Wextra -Werror -std=gnu11 -static -o $@ $<

# An empty program on the page-fault tracepoint (bench/fault_floor.c): libbpf only.
$(BUILD)/bench/fault_floor: bench/fault_floor.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -g -O2 -Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE -o $@ $< -lbpf -lelf -lz

# The task iterator against /proc per process (bench/pass_cost.c): it loads the skeleton,
# so it links the kernel folder and libbpf, unlike the plain benchmarks.
$(BUILD)/bench/pass_cost: bench/pass_cost.c $(BUILD)/folders/kernel.a $(BUILD)/folders/lib.a | $(SKEL)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< $(BUILD)/folders/kernel.a $(BUILD)/folders/lib.a \
		-lbpf -lelf -lz

# Installs what is missing from Debian's archive; quick when everything is present.
deps:
	@missing=""; for p in $(DEB_PKGS); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		if [ "$$(id -u)" != 0 ]; then echo "make deps: run as root (sudo make ...) to install:$$missing" >&2; exit 1; fi; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi

# The builds `make test` and `make run` start use every CPU (JOBS=1 for one at a time):
# ./make.sh test builds three trees, ~100 s of the suite's budget one file at a time.
JOBS ?= $(shell nproc 2>/dev/null || echo 1)

run: deps
	$(Q)$(MAKE) --no-print-directory -j$(JOBS) all
	./mevitop $(ARGS)

# The test binary set: the normal build (what users run), the sanitizer build (what the
# tests drive), unit tests, workloads and benchmarks.
test: deps
	$(Q)$(MAKE) --no-print-directory deps DEB_PKGS="$(TEST_PKGS)"
	$(Q)$(MAKE) --no-print-directory -j$(JOBS) all
	$(Q)$(MAKE) --no-print-directory -j$(JOBS) SAN=1 $(BUILD)-san/mevitop test-bins
	$(Q)$(MAKE) --no-print-directory -j$(JOBS) workloads
	$(Q)tests/run-all.sh

test-bins: $(UNIT_BINS)

workloads: $(WL_BINS) $(WL_EXTRA) $(BENCH_BINS)

bench: deps
	$(Q)$(MAKE) --no-print-directory deps DEB_PKGS="$(BENCH_PKGS)"
	$(Q)$(MAKE) --no-print-directory all workloads
	$(Q)$(PYTHON) bench/run_bench.py $(BENCH_ARGS)

# Long sweeps and soaks, too slow for `make test`; each prints its counts, with the builds
# and environment of `make test`: the races the default suite hits a few times each, hit 50
# times in a row; the pytest files of tests/stress/ (exact mode quitting under churn); its
# scripts (kill -9 of exact mode at hundreds of moments of the attach, the build users run;
# the README's two commands on a fresh Debian 12 minbase tree booted as a container).
STRESS_ENV := MEVITOP_BUILD=$(CURDIR)/$(BUILD) MEVITOP_BIN=$(CURDIR)/$(BUILD)-san/mevitop
stress: deps
	$(Q)$(MAKE) --no-print-directory deps DEB_PKGS="$(TEST_PKGS) $(STRESS_PKGS)"
	$(Q)$(MAKE) --no-print-directory -j$(JOBS) all
	$(Q)$(MAKE) --no-print-directory -j$(JOBS) SAN=1 $(BUILD)-san/mevitop test-bins
	$(Q)$(MAKE) --no-print-directory -j$(JOBS) workloads
	$(Q)MEVITOP_STRESS_ROUNDS=50 tests/run-all.sh -k stress_race
	$(Q)$(STRESS_ENV) $(PYTHON) -m pytest -q -s -p no:cacheprovider tests/stress
	$(Q)set -e; for t in $(filter-out tests/stress/test_%,$(wildcard tests/stress/*.py)); do \
		$(PYTHON) $$t; done

# Recording: file size, seek time and cost against live mode (bench/rec_bench.py).
bench-record: deps
	$(Q)$(MAKE) --no-print-directory all workloads
	$(Q)$(PYTHON) bench/rec_bench.py $(BENCH_ARGS)

# Regenerate the checked-in vmlinux.h from a BTF file (default: the running kernel).
BTF ?= /sys/kernel/btf/vmlinux
vmlinux:
	$(BPFTOOL) btf dump file $(BTF) format c > $(VMLINUX)

PREFIX ?= /usr/local
install: all
	install -D -m 0755 $(BUILD)/mevitop $(DESTDIR)$(PREFIX)/sbin/mevitop
	install -D -m 0644 doc/mevitop.8 $(DESTDIR)$(PREFIX)/share/man/man8/mevitop.8

clean:
	rm -rf build build-san build-* mevitop

-include $(wildcard $(BUILD)/user/*.d $(BUILD)/user/*/*.d $(BUILD)/user/*/arch/*/*.d $(CROSS_BUILD)/user/*.d $(CROSS_BUILD)/user/*/*.d $(CROSS_BUILD)/user/*/arch/*/*.d $(BUILD)/bpf/*.d $(BUILD)/tests/*.d)
