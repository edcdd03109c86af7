# libgso top-level Makefile.
#
#   make              library (.a, .so), xdp backend library, tools, bench
#   make check        install missing Debian packages (as root), build, run all tests
#   make test-unit    build and run the unit tests only (no root, seconds)
#   make install      PREFIX=/usr/local DESTDIR=
#   make fuzz         long fuzzing campaign (FUZZ_SECONDS per target)
#   make soak         hours of churn on a port, checked for balance (as root; SOAK_MINUTES)
#   make bench        micro-benchmarks
#   make clean
#
# Quiet unless V=1.  Sources are discovered by folder, so adding a file
# needs no Makefile edit:
#   libgso/*.c            -> libgso.{a,so}           (pure computation)
#   xdp/<concern>/*.c     -> libgso-xdp.{a,so}       (kernel-facing side, a folder
#                            per concern: dev, xsk, vnet, steer, kernel, evloop,
#                            engine, tcp, port; CONTRIBUTING.md has the layers)
#   xdp/e1000/*.c         -> libgso-e1000.a          (e1000 device model for bench
#                            and tests; static only, not installed)
#   xdp/<concern>/*.bpf.c -> build/bpf/*.bpf.o       (clang -target bpf; installed
#                            in LIBDIR/bpf, where libgso-xdp finds them)
#   bench/bpf/*.bpf.c     -> build/bpf/*.bpf.o       (the bench test-bed's programs;
#                            not installed)
#   tools/*.c             -> one program each, plus tools/common/*.c
#   bench/*.c             -> build/bench/<name>, the micro-benchmarks
#   bench/testbed/*.c     -> build/bench/<name>, the test-bed programs (sender,
#                            receiver, kernel_sender, impair); same folder
#   bench/common/*.c      -> libbenchc.a: shared by both kinds of bench program
#   bench/testbed/common/*.c -> libtestbedc.a: shared by the test-bed programs
#   tests/nsbed/*.c       -> libnsbed.a: the namespace test-bed of tests and
#                            micro-benchmarks
#                            (bench programs link these archives, so each
#                            takes only the objects it uses)
#   tests/unit/*.c        -> build/tests/unit        (one Criterion binary, no root)
#   tests/integration/*.c -> build/tests/integration (one Criterion binary, root)
#   tests/common/*.c      -> helpers linked into every test binary (with libnsbed.a)
#   tests/progs/*.c       -> build/tests/<name>, test-bed programs (tapcap,
#                            streamcheck, synflood, httpprobe) linked with
#                            tools/common/*.c
#   tests/progs/conftool*.c -> build/tests/conftool (conformance harness the
#                            integration tests run; not installed)
#   tests/fuzz/fuzz_*.c   -> build/fuzz/fuzz_*       (libFuzzer, clang; with libgso and
#                            the xdp/ sources its " * Links:" line names)
#   tests/tsan/*.c        -> build/tsan/tests/unit-tsan, with the threaded tests
#                            (TSAN_TESTS) and the libraries, all built with TSan
#   tests/soak/*.c        -> build/tests/soak        (one program: the soak, with
#                            libtestbedc.a, libbenchc.a and libnsbed.a)

VERSION_MAJOR := 0
VERSION_MINOR := 1
VERSION_PATCH := 0
VERSION := $(VERSION_MAJOR).$(VERSION_MINOR).$(VERSION_PATCH)

PREFIX  ?= /usr/local
LIBDIR  ?= $(PREFIX)/lib
INCDIR  ?= $(PREFIX)/include
BINDIR  ?= $(PREFIX)/bin
DESTDIR ?=

CC       ?= gcc
CLANG    ?= clang
CLANGXX  ?= clang++
PKG_CONFIG ?= pkg-config
B        ?= build

CFLAGS   ?= -O2 -g
override CFLAGS += -std=gnu11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -fno-strict-aliasing -D_GNU_SOURCE
override CPPFLAGS += -Ilibgso/include -Ixdp/include -Ilibgso -Ixdp
LIB_CFLAGS := -fPIC -fvisibility=hidden

# Libraries are looked up lazily so that `make check` can install
# pkg-config and friends before anything needs them.
pc = $(shell $(PKG_CONFIG) --libs $(1) 2>/dev/null || echo $(2))
XDP_LIBS   = $(call pc,libxdp libbpf,-lxdp -lbpf) -lelf -lz
URING_LIBS = $(call pc,liburing,-luring)
PCAP_LIBS  = $(call pc,libpcap,-lpcap)
CRIT_LIBS  = $(call pc,criterion,-lcriterion)
SYS_LIBS   = -lm -lpthread

ifeq ($(V),1)
Q :=
msg = @true
else
Q := @
msg = @printf '  %-8s %s\n' $(1) $(2)
MAKEFLAGS += --no-print-directory
endif

LIB_SRCS  := $(sort $(wildcard libgso/*.c))
XDP_SRCS  := $(sort $(filter-out xdp/e1000/% %.bpf.c,$(wildcard xdp/*/*.c)))
E1000_SRCS:= $(sort $(wildcard xdp/e1000/*.c))
LIB_BPF_SRCS  := $(sort $(wildcard xdp/*/*.bpf.c))
BENCH_BPF_SRCS:= $(sort $(wildcard bench/bpf/*.bpf.c))
# gsoquicd (HTTP/3) needs ngtcp2, nghttp3 and GnuTLS: without their -dev
# packages it is left out of the tools (`make` says so once).
QUIC_PKGS := libngtcp2 libngtcp2_crypto_gnutls libnghttp3 gnutls
HAVE_QUIC := $(shell $(PKG_CONFIG) --exists $(QUIC_PKGS) 2>/dev/null && echo yes)
TOOL_SRCS := $(filter-out $(if $(HAVE_QUIC),,tools/gsoquicd.c),$(sort $(wildcard tools/*.c)))
TOOLC_SRCS:= $(sort $(wildcard tools/common/*.c))
QUIC_SRCS := $(if $(HAVE_QUIC),$(sort $(wildcard tools/quic/*.c)))
BENCH_SRCS:= $(sort $(wildcard bench/*.c))
BENCHC_SRCS:= $(sort $(wildcard bench/common/*.c))
TESTBED_SRCS:= $(sort $(wildcard bench/testbed/*.c))
TESTBEDC_SRCS:= $(sort $(wildcard bench/testbed/common/*.c))
NSBED_SRCS:= $(sort $(wildcard tests/nsbed/*.c))
UNIT_SRCS := $(sort $(wildcard tests/unit/*.c))
INTEG_SRCS:= $(sort $(wildcard tests/integration/*.c))
TESTC_SRCS:= $(sort $(wildcard tests/common/*.c))
FUZZ_SRCS := $(sort $(wildcard tests/fuzz/fuzz_*.c))
SOAK_SRCS := $(sort $(wildcard tests/soak/*.c))
CONFTOOL_SRCS := $(sort $(wildcard tests/progs/conftool*.c))
TPROG_SRCS:= $(filter-out $(CONFTOOL_SRCS),$(sort $(wildcard tests/progs/*.c)))
PUB_HDRS  := $(sort $(wildcard libgso/include/gso/*.h xdp/include/gso/*.h))

LIB_OBJS  := $(LIB_SRCS:%.c=$(B)/obj/%.o)
XDP_OBJS  := $(XDP_SRCS:%.c=$(B)/obj/%.o)
E1000_OBJS:= $(E1000_SRCS:%.c=$(B)/obj/%.o)
TOOLC_OBJS:= $(TOOLC_SRCS:%.c=$(B)/obj/%.o)
QUIC_OBJS := $(QUIC_SRCS:%.c=$(B)/obj/%.o)
BENCHC_OBJS:= $(BENCHC_SRCS:%.c=$(B)/obj/%.o)
TESTBEDC_OBJS:= $(TESTBEDC_SRCS:%.c=$(B)/obj/%.o)
NSBED_OBJS:= $(NSBED_SRCS:%.c=$(B)/obj/%.o)
TESTC_OBJS:= $(TESTC_SRCS:%.c=$(B)/obj/%.o)
UNIT_OBJS := $(UNIT_SRCS:%.c=$(B)/obj/%.o)
INTEG_OBJS:= $(INTEG_SRCS:%.c=$(B)/obj/%.o)
TOOLS     := $(patsubst tools/%.c,$(B)/tools/%,$(TOOL_SRCS))
BENCHES   := $(patsubst bench/%.c,$(B)/bench/%,$(BENCH_SRCS))
TESTBEDS  := $(patsubst bench/testbed/%.c,$(B)/bench/%,$(TESTBED_SRCS))
$(if $(filter $(BENCHES),$(TESTBEDS)),$(error same program name in bench/ and bench/testbed/: $(filter $(BENCHES),$(TESTBEDS))))
# Archives of shared code: a program takes only the objects it references.
BENCHC_A  := $(B)/obj/bench/common/libbenchc.a
TESTBEDC_A:= $(B)/obj/bench/testbed/common/libtestbedc.a
NSBED_A   := $(B)/obj/tests/nsbed/libnsbed.a
# Every BPF object lands in build/bpf/ under its own name (the loaders look there).
LIB_BPF_OBJS  := $(patsubst %.bpf.c,$(B)/bpf/%.bpf.o,$(notdir $(LIB_BPF_SRCS)))
BENCH_BPF_OBJS:= $(patsubst %.bpf.c,$(B)/bpf/%.bpf.o,$(notdir $(BENCH_BPF_SRCS)))
BPF_OBJS  := $(LIB_BPF_OBJS) $(BENCH_BPF_OBJS)
$(if $(filter-out $(words $(sort $(BPF_OBJS))),$(words $(BPF_OBJS))),$(error two BPF programs of the same name: $(notdir $(LIB_BPF_SRCS) $(BENCH_BPF_SRCS))))
FUZZERS   := $(patsubst tests/fuzz/%.c,$(B)/fuzz/%,$(FUZZ_SRCS))
TPROGS    := $(patsubst tests/progs/%.c,$(B)/tests/%,$(TPROG_SRCS))
CONFTOOL_OBJS := $(CONFTOOL_SRCS:%.c=$(B)/obj/%.o)
# The harness regenerates the conformance cases without Criterion.
CONFTOOL_DEPS := $(B)/obj/tests/common/conf_cases.o $(B)/obj/tests/common/test_rand.o
CONFTOOL  := $(if $(CONFTOOL_SRCS),$(B)/tests/conftool)
SOAK_OBJS := $(SOAK_SRCS:%.c=$(B)/obj/%.o)
SOAK      := $(if $(SOAK_SRCS),$(B)/tests/soak)

LIBGSO_A  := $(B)/libgso.a
LIBGSO_SO := $(B)/libgso.so.$(VERSION)
LIBXDP_A  := $(B)/libgso-xdp.a
LIBXDP_SO := $(B)/libgso-xdp.so.$(VERSION)
LIBE1000_A := $(if $(E1000_SRCS),$(B)/libgso-e1000.a)

# The e1000 model's header (<gso/e1000.h>) is not installed and not seen
# by libgso-xdp's own sources: only its library, bench, tools and tests.
E1000_INC := -Ixdp/e1000/include

LIBS_A    := $(LIBGSO_A) $(if $(XDP_SRCS),$(LIBXDP_A))
# What programs and tests link: the installed libraries and the e1000 model.
PROG_A    := $(LIBE1000_A) $(LIBS_A)
PROG_LIBS  = $(LIBE1000_A) $(if $(XDP_SRCS),$(LIBXDP_A)) $(LIBGSO_A) $(XDP_LIBS) $(URING_LIBS) $(PCAP_LIBS) $(SYS_LIBS)
# Tests find tools, BPF objects and fixtures through this define.
TEST_DEFS := -DGSO_BUILD_DIR='"$(abspath $(B))"' -DGSO_SRC_DIR='"$(abspath .)"'

.PHONY: all lib tools bench-progs test-progs tests check check-run check-install check-headers check-abi deps install uninstall \
	clean fuzz fuzz-bin bench clang-build demo check-layers soak
.DEFAULT_GOAL := all
# Keep the programs' intermediate objects (their own and their common/
# ones, prerequisites of pattern rules only), so that a second `make` has
# nothing to do.  Named, not a bare `.SECONDARY:`: that makes every target
# secondary, and a missing secondary prerequisite does not make its target
# out of date, so the DPDK stamp below (a new name when DPDK appears or
# goes) would not rebuild anything (tests/unit/test_make_dpdk.c).
.SECONDARY: $(TOOL_SRCS:%.c=$(B)/obj/%.o) $(BENCH_SRCS:%.c=$(B)/obj/%.o) $(TOOLC_OBJS) $(QUIC_OBJS) $(BENCHC_OBJS) \
	$(TESTBED_SRCS:%.c=$(B)/obj/%.o) $(TESTBEDC_OBJS) $(NSBED_OBJS) \
	$(TPROG_SRCS:%.c=$(B)/obj/%.o) $(CONFTOOL_OBJS)

all: lib tools bench-progs test-progs $(BPF_OBJS)
lib: $(LIBGSO_A) $(LIBGSO_SO) $(if $(XDP_SRCS),$(LIBXDP_A) $(LIBXDP_SO)) $(LIBE1000_A)
tools: $(TOOLS)
	$(if $(HAVE_QUIC),,@echo "  SKIP     gsoquicd: needs libngtcp2-dev libngtcp2-crypto-gnutls-dev libnghttp3-dev libgnutls28-dev")
bench-progs: $(BENCHES) $(TESTBEDS)
test-progs: $(TPROGS) $(CONFTOOL) $(SOAK)

# ---- objects -------------------------------------------------------------
$(B)/obj/libgso/%.o: libgso/%.c
	$(call msg,CC,$<)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(LIB_CFLAGS) -MMD -MP -c $< -o $@

$(B)/obj/xdp/e1000/%.o: xdp/e1000/%.c
	$(call msg,CC,$<)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(E1000_INC) $(CFLAGS) $(LIB_CFLAGS) -MMD -MP -c $< -o $@

$(B)/obj/xdp/%.o: xdp/%.c
	$(call msg,CC,$<)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(LIB_CFLAGS) -MMD -MP -c $< -o $@

# The test-bed programs are tools built for the tests: tool headers, no Criterion.
$(B)/obj/tests/progs/%.o: tests/progs/%.c
	$(call msg,CC,$<)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(E1000_INC) $(CFLAGS) -Itools/common -Itests/common -Itests/nsbed -MMD -MP -c $< -o $@

# The soak drives the bench test-bed (its stream, header and verdict; the receiver) on the nsbed namespaces.
$(B)/obj/tests/soak/%.o: tests/soak/%.c
	$(call msg,CC,$<)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -Itests/nsbed -Ibench/common -Ibench/testbed/common -MMD -MP -c $< -o $@

$(B)/obj/tests/%.o: tests/%.c
	$(call msg,CC,$<)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(E1000_INC) -Itests/common -Itests/nsbed $(CFLAGS) $(TEST_DEFS) -MMD -MP -c $< -o $@

$(B)/obj/%.o: %.c
	$(call msg,CC,$<)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(E1000_INC) $(CFLAGS) -I$(dir $<)common -MMD -MP -c $< -o $@

# ---- libraries -----------------------------------------------------------
$(LIBGSO_A): $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(LIBGSO_SO): $(LIB_OBJS) libgso/libgso.map
	$(call msg,LD,$@)
	$(Q)$(CC) -shared $(LDFLAGS) -Wl,-soname,libgso.so.$(VERSION_MAJOR) \
		-Wl,--version-script=libgso/libgso.map -o $@ $(LIB_OBJS) -lm
	$(Q)ln -sf libgso.so.$(VERSION) $(B)/libgso.so.$(VERSION_MAJOR)
	$(Q)ln -sf libgso.so.$(VERSION_MAJOR) $(B)/libgso.so

$(LIBXDP_A): $(XDP_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

# Static only, never installed: bench programs and tests link it before libgso-xdp.a.
$(LIBE1000_A): $(E1000_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

# RUNPATH $ORIGIN: libgso-xdp finds libgso.so.0 beside itself, where it is
# always built and installed.  A program that calls only libgso-xdp (linked
# --as-needed it records no libgso) and has a RUNPATH of its own to a
# private prefix could not load it otherwise: a program's RUNPATH does not
# apply to its libraries' dependencies (tests/link/xdp_only.c).
$(LIBXDP_SO): $(XDP_OBJS) xdp/libgso-xdp.map $(LIBGSO_SO)
	$(call msg,LD,$@)
	$(Q)$(CC) -shared $(LDFLAGS) -Wl,-soname,libgso-xdp.so.$(VERSION_MAJOR) -Wl,-rpath,'$$ORIGIN' \
		-Wl,--version-script=xdp/libgso-xdp.map -o $@ $(XDP_OBJS) \
		-L$(B) -lgso $(XDP_LIBS) $(URING_LIBS) $(SYS_LIBS)
	$(Q)ln -sf libgso-xdp.so.$(VERSION) $(B)/libgso-xdp.so.$(VERSION_MAJOR)
	$(Q)ln -sf libgso-xdp.so.$(VERSION_MAJOR) $(B)/libgso-xdp.so

# pkg-config files are written at install time, for the PREFIX in force.
pc_gen = sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	-e 's|@INCDIR@|$(INCDIR)|' -e 's|@VERSION@|$(VERSION)|' $(1) > $(2)

# ---- programs ------------------------------------------------------------
$(B)/tools/%: $(B)/obj/tools/%.o $(TOOLC_OBJS) $(PROG_A)
	$(call msg,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(TOOLC_OBJS) $(PROG_LIBS)

# gsoquicd: its own parts in tools/quic/, with the QUIC libraries' flags
# (their include dirs as -isystem, so that their headers' warnings do not
# trip -Werror).
QUIC_CFLAGS = $(patsubst -I%,-isystem %,$(shell $(PKG_CONFIG) --cflags $(QUIC_PKGS) 2>/dev/null))
QUIC_LIBS   = $(shell $(PKG_CONFIG) --libs $(QUIC_PKGS) 2>/dev/null)
$(QUIC_OBJS) $(B)/obj/tools/gsoquicd.o: $(B)/obj/%.o: %.c
	$(call msg,CC,$<)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -Itools/quic -Itools/common $(QUIC_CFLAGS) -MMD -MP -c $< -o $@

$(B)/tools/gsoquicd: $(B)/obj/tools/gsoquicd.o $(QUIC_OBJS) $(TOOLC_OBJS) $(PROG_A)
	$(call msg,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(QUIC_OBJS) $(TOOLC_OBJS) $(PROG_LIBS) $(QUIC_LIBS)

# Shared bench code as archives (see the header): each program links only
# the objects it uses.
$(BENCHC_A): $(BENCHC_OBJS)
$(TESTBEDC_A): $(TESTBEDC_OBJS)
$(NSBED_A): $(NSBED_OBJS)
$(BENCHC_A) $(TESTBEDC_A) $(NSBED_A):
	$(call msg,AR,$@)
	@mkdir -p $(@D)
	$(Q)rm -f $@ && ar rcs $@ $^

# Micro-benchmarks and test-bed programs both go to build/bench/.
$(BENCHES): $(B)/bench/%: $(B)/obj/bench/%.o $(BENCHC_A) $(NSBED_A) $(PROG_A)
	$(call msg,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(BENCH_SIM_LINK) $(BENCHC_A) $(NSBED_A) $(PROG_LIBS) $(BENCH_EXTRA_LIBS)

# bench_aggregation runs the unit tests' virtual-time flow simulator (no Criterion in these files).
BENCH_SIM_OBJS := $(addprefix $(B)/obj/tests/unit/,flowsim.o flowsim_dev.o simheap.o)
$(B)/bench/bench_aggregation: $(BENCH_SIM_OBJS)
$(B)/bench/bench_aggregation: BENCH_SIM_LINK = $(BENCH_SIM_OBJS)
$(B)/obj/bench/bench_aggregation.o: CPPFLAGS += -Itests/unit

$(TESTBEDS): $(B)/bench/%: $(B)/obj/bench/testbed/%.o $(TESTBEDC_A) $(BENCHC_A) $(PROG_A)
	$(call msg,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(TESTBEDC_A) $(BENCHC_A) $(PROG_LIBS)

$(B)/tests/%: $(B)/obj/tests/progs/%.o $(TOOLC_OBJS) $(PROG_A)
	$(call msg,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(TOOLC_OBJS) $(PROG_LIBS)

$(SOAK): $(SOAK_OBJS) $(TESTBEDC_A) $(BENCHC_A) $(NSBED_A) $(PROG_A)
	$(call msg,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $(SOAK_OBJS) $(TESTBEDC_A) $(BENCHC_A) $(NSBED_A) $(PROG_LIBS)

# bench programs may compare against DPDK when its -dev package is present.
# DPDK's include dirs become -isystem so that its headers' warnings do not
# trip -Werror in our own bench code.
DPDK_CFLAGS = $(patsubst -I%,-isystem %,$(shell $(PKG_CONFIG) --cflags libdpdk 2>/dev/null))
DPDK_LIBS   = $(shell $(PKG_CONFIG) --libs libdpdk 2>/dev/null)
# Bench objects are rebuilt when DPDK appears or goes (the stamp's name changes).
DPDK_STAMP = $(B)/.dpdk-$(if $(DPDK_LIBS),yes,no)
$(B)/.dpdk-yes $(B)/.dpdk-no:
	@mkdir -p $(@D) && rm -f $(B)/.dpdk-* && touch $@
$(B)/obj/bench/%.o: bench/%.c $(DPDK_STAMP)
	$(call msg,CC,$<)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(E1000_INC) $(CFLAGS) -Ibench/common -Itests/nsbed \
		$(if $(DPDK_LIBS),-DHAVE_DPDK $(DPDK_CFLAGS)) -MMD -MP -c $< -o $@
BENCH_EXTRA_LIBS = $(DPDK_LIBS)
# The test-bed programs and their common code (no DPDK).
$(B)/obj/bench/testbed/%.o: bench/testbed/%.c
	$(call msg,CC,$<)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(E1000_INC) $(CFLAGS) -Ibench/testbed/common -Ibench/common -MMD -MP -c $< -o $@

# ---- BPF -----------------------------------------------------------------
# Found in whichever folder holds them; a program's own headers sit beside it.
vpath %.bpf.c $(sort $(dir $(LIB_BPF_SRCS) $(BENCH_BPF_SRCS)))
$(B)/bpf/%.bpf.o: %.bpf.c
	$(call msg,BPF,$<)
	@mkdir -p $(@D)
	$(Q)$(CLANG) -O2 -g -Wall -Werror -target bpf -I/usr/include/$(shell $(CC) -print-multiarch) \
		-c $< -o $@

# ---- tests ---------------------------------------------------------------
.PHONY: test-unit
tests: $(B)/tests/unit $(B)/tests/integration $(B)/tests/unit-asan $(B)/tsan/tests/unit-tsan

$(CONFTOOL): $(CONFTOOL_OBJS) $(CONFTOOL_DEPS) $(TOOLC_OBJS) $(PROG_A)
	$(call msg,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $(CONFTOOL_OBJS) $(CONFTOOL_DEPS) $(TOOLC_OBJS) $(PROG_LIBS)

# Unit tests link only the libraries and the test helpers, so that they
# build and run in seconds without root.  A few run programs (gsoseg and
# gsogen, streamcheck): those are prerequisites of running them (test-unit),
# not of linking them.
$(B)/tests/unit: $(UNIT_OBJS) $(TESTC_OBJS) $(NSBED_A) $(PROG_A)
	$(call msg,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $(UNIT_OBJS) $(TESTC_OBJS) $(NSBED_A) $(PROG_LIBS) $(CRIT_LIBS)

test-unit: $(B)/tests/unit $(TOOLS) $(TPROGS)
	$(Q)$(B)/tests/unit --short-filename

# Integration tests run the tools, the bench programs, the BPF objects and the test programs.
INTEG_RUNS := $(TOOLS) $(BENCHES) $(TESTBEDS) $(TPROGS) $(CONFTOOL) $(SOAK) $(BPF_OBJS)
$(B)/tests/integration: $(INTEG_OBJS) $(TESTC_OBJS) $(NSBED_A) $(PROG_A) $(INTEG_RUNS)
	$(call msg,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $(INTEG_OBJS) $(TESTC_OBJS) $(NSBED_A) $(PROG_LIBS) $(CRIT_LIBS)

# Both in one binary, built only when asked for: one --filter across every
# test (`make check` runs the two above).
$(B)/tests/all: $(UNIT_OBJS) $(INTEG_OBJS) $(TESTC_OBJS) $(NSBED_A) $(PROG_A) $(INTEG_RUNS)
	$(call msg,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $(UNIT_OBJS) $(INTEG_OBJS) $(TESTC_OBJS) $(NSBED_A) $(PROG_LIBS) $(CRIT_LIBS)

# The unit tests again, library and tests built with ASan and UBSan.
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
$(B)/tests/unit-asan: $(TPROGS) $(UNIT_SRCS) $(TESTC_SRCS) $(NSBED_SRCS) $(LIB_SRCS) $(XDP_SRCS) $(E1000_SRCS) $(wildcard libgso/*.h libgso/include/gso/*.h xdp/*/*.h xdp/include/gso/*.h xdp/e1000/include/gso/*.h tests/common/*.h tests/nsbed/*.h)
	$(call msg,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(E1000_INC) -Itests/common -Itests/nsbed $(CFLAGS) -O1 $(SAN_FLAGS) $(TEST_DEFS) -o $@ \
		$(UNIT_SRCS) $(TESTC_SRCS) $(NSBED_SRCS) $(LIB_SRCS) $(XDP_SRCS) $(E1000_SRCS) \
		$(XDP_LIBS) $(URING_LIBS) $(PCAP_LIBS) $(SYS_LIBS) $(CRIT_LIBS)

# The code that runs on several threads, built with ThreadSanitizer in a
# build of its own ($(B)/tsan: objects in obj/, the binary in tests/): the
# libraries, the unit tests of the port, the engine and the UMEM
# allocator, and the port driven from two threads
# (tests/integration/test_port_threads.c, root).  One binary, run by
# tests/run.sh; Criterion's own runner does not work under TSan, so
# tests/tsan/cr_inproc.c runs the tests instead (its opening comment says
# why).  Not the event loop's tests: under TSan its epoll_wait returns
# EINTR with no signal sent, which those tests count as a failure.  The
# SPSC ring's two-thread test exchanges fewer items (GSO_TEST_RING_XCHG):
# TSan runs it some 50 times slower.  $(B)/tsan/bpf points at the BPF
# objects, where the steering loader looks (../bpf from the binary).
TSAN_TESTS := tests/unit/test_port.c tests/unit/test_engine.c tests/unit/test_umem_alloc.c \
	tests/integration/test_port_threads.c
TSAN_SRCS := $(TSAN_TESTS) $(wildcard tests/tsan/*.c) $(TESTC_SRCS) $(NSBED_SRCS) $(LIB_SRCS) $(XDP_SRCS)
TSAN_OBJS := $(TSAN_SRCS:%.c=$(B)/tsan/obj/%.o)
# -Wno-tsan: gcc warns that TSan does not model atomic_thread_fence; our one
# fence (xring_needs_wakeup) orders our ring store against the kernel's
# flag, a party TSan does not see anyway.
TSAN_FLAGS := -fsanitize=thread -fno-omit-frame-pointer -Wno-tsan
$(B)/tsan/obj/%.o: %.c
	$(call msg,CC-TSAN,$<)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) -Itests/common -Itests/nsbed $(CFLAGS) -O1 $(TSAN_FLAGS) $(TEST_DEFS) -DGSO_TEST_RING_XCHG=20000u \
		-MMD -MP -c $< -o $@

$(B)/tsan/tests/unit-tsan: $(TSAN_OBJS) $(LIB_BPF_OBJS)
	$(call msg,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) $(TSAN_FLAGS) -o $@ $(TSAN_OBJS) $(XDP_LIBS) $(URING_LIBS) $(PCAP_LIBS) $(SYS_LIBS)
	$(Q)ln -sfn ../bpf $(B)/tsan/bpf

FUZZ_FLAGS := -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
# A fuzz target links libgso's sources, and the xdp/ sources that a line
# " * Links: xdp/a/b.c ..." of its opening comment names: the few that hold
# the parser it drives, so that no fuzzer needs libxdp, libbpf or liburing.
fuzz_links = $(shell sed -n 's/^ \* Links: //p' $(1))
$(foreach f,$(FUZZ_SRCS),$(eval $(patsubst tests/fuzz/%.c,$(B)/fuzz/%,$(f)): $(call fuzz_links,$(f))))
$(B)/fuzz/%: tests/fuzz/%.c $(LIB_SRCS) $(wildcard libgso/*.h libgso/include/gso/*.h xdp/*/*.h xdp/include/gso/*.h tests/fuzz/*.h tests/common/ref_csum.h)
	$(call msg,FUZZ,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(CPPFLAGS) -std=gnu11 -D_GNU_SOURCE -O1 -g -Wall -Wextra -Werror $(FUZZ_FLAGS) -o $@ $< \
		$(LIB_SRCS) $(call fuzz_links,$<) -lm

fuzz-bin: $(FUZZERS)

# New inputs go to the build's corpus; the checked-in one (tests/fuzz/corpus) seeds it.
FUZZ_SECONDS ?= 300
fuzz: fuzz-bin
	@for f in $(FUZZERS); do \
		echo "== $$f for $(FUZZ_SECONDS) s"; mkdir -p $(B)/corpus/$$(basename $$f); \
		$$f -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 $(B)/corpus/$$(basename $$f) \
			$$(ls -d tests/fuzz/corpus/$$(basename $$f) 2>/dev/null) || exit 1; \
	done

# The soak: SOAK_MINUTES of churn on a multi-queue port in namespaces of
# its own, stopping at the first imbalance (tests/soak/soak.c says what it
# does; build/tests/soak --help).  Not part of `make check`, which runs a
# half-minute smoke of it (tests/integration/test_soak.c).  SOAK_ARGS adds
# options (e.g. --no-mtu, --seed N, --json).
SOAK_MINUTES ?= 120
soak: $(SOAK) $(B)/bench/receiver $(LIB_BPF_OBJS)
	$(Q)$(SOAK) --minutes $(SOAK_MINUTES) $(SOAK_ARGS)

# Build everything once more with clang, warnings as errors, to keep both
# compilers clean.
clang-build:
	$(call msg,CLANG,all)
	$(Q)$(MAKE) B=$(B)/clang CC=$(CLANG) lib tools bench-progs test-progs $(B)/clang/tests/unit $(B)/clang/tests/integration

deps:
	$(Q)sh tools/install-deps.sh

check: deps
	$(Q)$(MAKE) check-run

check-run: all tests fuzz-bin clang-build check-install check-headers check-abi check-layers
	$(Q)B=$(B) sh tests/run.sh

# Each public header compiles alone as C11 and as C++ (gcc and clang), and
# GSO_OPTS works in both (tests/check-headers.sh says what runs).
check-headers: $(LIBGSO_A)
	$(call msg,CHECK,headers)
	$(Q)B=$(B) CC=$(CC) CLANG=$(CLANG) CXX=$(CXX) CLANGXX=$(CLANGXX) sh tests/check-headers.sh

# xdp/'s folders are layers and every include points down (the order is in
# tests/check-layers.sh and CONTRIBUTING.md); no source at xdp/'s top level.
check-layers:
	$(call msg,LAYERS,xdp)
	$(Q)sh tests/check-layers.sh

# The version maps name exactly the GSO_API functions, and every global
# symbol of the archives is prefixed (gso_ public, gsoi_ internal):
# tests/abi/check-map.sh; constructors take their arguments in C2's order
# (CONTRIBUTING.md): tests/abi/check-args.sh.  A prerequisite of check-run.
check-abi: lib
	$(call msg,ABI,$(B))
	$(Q)sh tests/abi/check-map.sh $(B)
	$(Q)sh tests/abi/check-args.sh

# Install into a scratch DESTDIR and build the README's API example and a
# libgso-xdp program against what was installed, through pkg-config, with
# the shared and with the static libraries; run them.  A program of
# libgso-xdp alone, with its RUNPATH to the scratch prefix, must run
# without LD_LIBRARY_PATH (tests/link/xdp_only.c).  The examples/ programs
# are built here too, against the installed shared libgso-xdp, as a user
# would build them (tests/integration/test_examples.c runs them, as root).
# The e1000 model (its header, its library) must not be among what was installed.
LINK_ROOT = $(abspath $(B))/destdir
LINK_PC   = PKG_CONFIG_PATH=$(LINK_ROOT)/usr/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$(LINK_ROOT) $(PKG_CONFIG)
EXAMPLES  := udp_pacer udp_sink
check-install: lib
	$(call msg,INSTALL,$(LINK_ROOT))
	$(Q)rm -rf $(LINK_ROOT) && $(MAKE) -s install DESTDIR=$(LINK_ROOT) PREFIX=/usr >/dev/null
	$(Q)if ls $(LINK_ROOT)/usr/include/gso/e1000.h $(LINK_ROOT)/usr/lib/libgso-e1000* >/dev/null 2>&1; then \
		echo "check-install: the e1000 model (e1000.h, libgso-e1000) must not be installed" >&2; exit 1; fi
	$(Q)$(CC) $(CFLAGS) $$($(LINK_PC) --cflags libgso) -o $(B)/api_example-so tests/link/api_example.c \
		$$($(LINK_PC) --libs libgso) -Wl,-rpath,$(LINK_ROOT)/usr/lib
	$(Q)$(CC) $(CFLAGS) $$($(LINK_PC) --cflags libgso) -o $(B)/api_example-a tests/link/api_example.c \
		$(LINK_ROOT)/usr/lib/libgso.a $$($(LINK_PC) --libs-only-other --static libgso) -lm
	$(Q)$(CC) $(CFLAGS) $$($(LINK_PC) --cflags libgso-xdp) -o $(B)/xdp_link-so tests/link/xdp_link.c \
		$$($(LINK_PC) --libs libgso-xdp) -Wl,-rpath,$(LINK_ROOT)/usr/lib
	$(Q)$(CC) $(CFLAGS) $$($(LINK_PC) --cflags libgso-xdp) -o $(B)/xdp_link-a tests/link/xdp_link.c \
		$(LINK_ROOT)/usr/lib/libgso-xdp.a $(LINK_ROOT)/usr/lib/libgso.a \
		$$($(LINK_PC) --static --libs libgso-xdp | sed 's/-lgso-xdp//; s/-lgso / /')
	$(Q)export LD_LIBRARY_PATH=$(LINK_ROOT)/usr/lib; \
		$(B)/api_example-so && $(B)/api_example-a && $(B)/xdp_link-so && $(B)/xdp_link-a
	$(Q)$(CC) $(CFLAGS) $$($(LINK_PC) --cflags libgso-xdp) -o $(B)/xdp_only-so tests/link/xdp_only.c \
		-Wl,--as-needed $$($(LINK_PC) --libs libgso-xdp) -Wl,-rpath,$(LINK_ROOT)/usr/lib
	$(Q)env -u LD_LIBRARY_PATH $(B)/xdp_only-so
	$(call msg,EXAMPLES,$(B)/examples)
	$(Q)mkdir -p $(B)/examples && for x in $(EXAMPLES); do \
		$(CC) $(CFLAGS) $$($(LINK_PC) --cflags libgso-xdp) -o $(B)/examples/$$x examples/$$x.c \
			$$($(LINK_PC) --libs libgso-xdp) -Wl,-rpath,$(LINK_ROOT)/usr/lib || exit 1; \
	done

# The main job for a newcomer: the namespace test-bed, the libgso TCP sender
# in every mode and the kernel TCP baselines against the stock Linux
# receiver, a side-by-side table and a plot (bench/testbed/demo.sh says more).
# DEMO_SECONDS, DEMO_MODES, DEMO_CC, DEMO_GRO and DEMO_IMPAIR (relay settings) are honoured.
demo: deps
	$(Q)$(MAKE) all
	$(Q)sh bench/testbed/demo.sh $(B)

# Benchmarks compare with DPDK where its -dev package is installed; the
# per-frame cost breakdown counts syscalls (strace) and instructions (valgrind).
bench:
	$(Q)GSO_EXTRA_PKGS="libdpdk-dev strace valgrind" sh tools/install-deps.sh
	$(Q)$(MAKE) all
	$(Q)sh bench/run.sh $(B)

# ---- install -------------------------------------------------------------
# The library's BPF objects go to LIBDIR/bpf, where libgso-xdp looks for
# them (next to itself); the bench test-bed's stay in the build tree.
install: lib tools $(LIB_BPF_OBJS)
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCDIR)/gso $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(BINDIR)
	$(if $(LIB_BPF_OBJS),install -d $(DESTDIR)$(LIBDIR)/bpf && install -m 644 $(LIB_BPF_OBJS) $(DESTDIR)$(LIBDIR)/bpf/)
	install -m 644 $(PUB_HDRS) $(DESTDIR)$(INCDIR)/gso/
	install -m 644 $(LIBS_A) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(LIBGSO_SO) $(DESTDIR)$(LIBDIR)/
	ln -sf libgso.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libgso.so.$(VERSION_MAJOR)
	ln -sf libgso.so.$(VERSION_MAJOR) $(DESTDIR)$(LIBDIR)/libgso.so
	$(if $(XDP_SRCS),install -m 755 $(LIBXDP_SO) $(DESTDIR)$(LIBDIR)/ && \
		ln -sf libgso-xdp.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libgso-xdp.so.$(VERSION_MAJOR) && \
		ln -sf libgso-xdp.so.$(VERSION_MAJOR) $(DESTDIR)$(LIBDIR)/libgso-xdp.so)
	$(call pc_gen,libgso/libgso.pc.in,$(DESTDIR)$(LIBDIR)/pkgconfig/libgso.pc)
	$(if $(XDP_SRCS),$(call pc_gen,xdp/libgso-xdp.pc.in,$(DESTDIR)$(LIBDIR)/pkgconfig/libgso-xdp.pc))
	$(if $(TOOLS),install -m 755 $(TOOLS) $(DESTDIR)$(BINDIR)/)

uninstall:
	rm -rf $(DESTDIR)$(INCDIR)/gso $(DESTDIR)$(LIBDIR)/pkgconfig/libgso.pc \
		$(DESTDIR)$(LIBDIR)/pkgconfig/libgso-xdp.pc
	rm -f $(DESTDIR)$(LIBDIR)/libgso.* $(DESTDIR)$(LIBDIR)/libgso-xdp.*
	rm -f $(addprefix $(DESTDIR)$(LIBDIR)/bpf/,$(notdir $(LIB_BPF_OBJS)))
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(notdir $(TOOLS)))

clean:
	rm -rf $(B)

-include $(shell find $(B)/obj $(B)/tsan/obj -name '*.d' 2>/dev/null)
