# gpumemtrace — see README.md.  `make V=1` shows the commands.
VERSION := 0.1.0
OUTPUT := .output
CLANG ?= clang
BPFTOOL ?= $(shell command -v bpftool 2>/dev/null || echo /usr/sbin/bpftool)
CC ?= gcc
HOST_ARCH := $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')
ARCH ?= $(HOST_ARCH)
VMLINUX := vmlinux/$(ARCH)/vmlinux.h
# `make ARCH=arm64` on x86-64: a cross build into .output/arm64 (the host's
# build untouched), with Debian's aarch64 gcc and the arm64 -dev packages
# that tools/arm64-sysroot.sh unpacks; the binaries go there too
B :=
ifneq ($(ARCH),$(HOST_ARCH))
ifneq ($(ARCH),arm64)
$(error ARCH=$(ARCH): only arm64 is cross-built)
endif
OUTPUT := .output/arm64
B := $(OUTPUT)/
SYSROOT := $(shell tools/arm64-sysroot.sh)
ifeq ($(SYSROOT),)
$(error tools/arm64-sysroot.sh made no sysroot)
endif
ifeq ($(origin CC),default)
CC := aarch64-linux-gnu-gcc
endif
CROSS_FLAGS := -isystem $(SYSROOT)/usr/include -isystem $(SYSROOT)/usr/include/aarch64-linux-gnu
LDFLAGS += -L$(SYSROOT)/usr/lib/aarch64-linux-gnu -Wl,-rpath-link,$(SYSROOT)/usr/lib/aarch64-linux-gnu
endif

# CCACHE=ccache (make test sets it): the compilers through ccache, whose
# cache is outside the clone, so a fresh clone's build reuses the last one's
ifneq ($(CCACHE),)
CC := $(CCACHE) $(CC)
CLANG := $(CCACHE) $(CLANG)
endif

BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/bpf/%.bpf.o,$(BPF_SRCS))
USER_SRCS := $(wildcard user/*.c user/*/*.c)
USER_HDRS := $(wildcard user/*/*.h)
USER_OBJS := $(patsubst user/%.c,$(OUTPUT)/user/%.o,$(USER_SRCS))
# modules that need neither BPF nor the skeleton: unit tests link these
CORE_OBJS := $(filter-out $(OUTPUT)/user/main.o $(OUTPUT)/user/source/attach.o \
	$(OUTPUT)/user/source/collect.o $(OUTPUT)/user/source/session.o \
	$(OUTPUT)/user/source/gpuapi.o $(OUTPUT)/user/source/targets.o \
	$(OUTPUT)/user/source/bpfmaps.o $(OUTPUT)/user/source/samples.o \
	$(OUTPUT)/user/source/stacks.o $(OUTPUT)/user/source/drain.o $(OUTPUT)/user/source/gpulib.o $(OUTPUT)/user/source/nvml.o \
	$(OUTPUT)/user/source/linkset.o $(OUTPUT)/user/source/umulti.o \
	$(OUTPUT)/user/view/top.o $(OUTPUT)/user/source/unwind.o $(OUTPUT)/user/source/cfi_check.o \
	$(OUTPUT)/user/serve/metrics.o \
	$(OUTPUT)/user/report/perfetto.o $(OUTPUT)/user/report/pprof.o \
	$(OUTPUT)/user/report/html.o,$(USER_OBJS))

CFLAGS ?= -g -O2
CFLAGS += -Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE -DGMT_VERSION='"$(VERSION)"'
INCLUDES := -I$(OUTPUT) -I$(OUTPUT)/proto -Ibpf -Iuser $(CROSS_FLAGS)
LIBS := -levent_extra -levent_pthreads -levent_core -lprotobuf-c -lbpf -ldw -lelf -ljson-c -liberty -lncursesw -ltinfo -lzstd -llzma -lbz2 -lz -lm
# one binary to copy to another host or into a VM
LDFLAGS += -static

# clang's own system includes, for BPF code that includes kernel uapi headers
CLANG_BPF_SYS_INCLUDES := $(shell $(CLANG) -v -E - </dev/null 2>&1 \
	| sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

# Node.js 20 or newer, which tools/deps.sh puts there (the machine's own, or
# one from the npm registry)
export PATH := $(CURDIR)/$(OUTPUT)/bin:$(PATH)

.DELETE_ON_ERROR:
.PHONY: all man deps e2e-deps llama-server test run clean format bench

BINS := $(B)gpumemtrace $(B)gpumemtrace-vkinfo $(B)gpumemtrace-nvml
ifeq ($(B),)
all: gpumemtrace gpumemtrace-vkinfo gpumemtrace-nvml man
else
# a cross build: the binaries and the VM's static test programs (the man
# page and completion come from running the binary: the host's build has them)
all: $(BINS) $(OUTPUT)/tests/workload-static $(OUTPUT)/tests/workload-nofp-static \
	$(OUTPUT)/tests/drmflip-static
.PHONY: gpumemtrace gpumemtrace-vkinfo gpumemtrace-nvml
gpumemtrace gpumemtrace-vkinfo gpumemtrace-nvml: %: $(B)%
endif

# gpumemtrace(8) and the bash completion, both from --help (tools/man.sh,
# tools/completion.sh), so neither can drift from the options
MAN := $(OUTPUT)/man/gpumemtrace.8 $(OUTPUT)/bash-completion/gpumemtrace
man: $(MAN)

$(OUTPUT)/man/gpumemtrace.8: gpumemtrace tools/man.sh dist/gpumemtrace.h2m
	$(call msg,MAN,$@)
	$(Q)mkdir -p $(@D) && tools/man.sh ./gpumemtrace $@

$(OUTPUT)/bash-completion/gpumemtrace: gpumemtrace tools/completion.sh
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D) && tools/completion.sh ./gpumemtrace $@

$(OUTPUT) $(OUTPUT)/bpf $(OUTPUT)/user $(OUTPUT)/tests:
	$(Q)mkdir -p $@

$(OUTPUT)/bpf/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.bpf.h) bpf/gmt_events.h bpf/gmt_syscalls.h $(VMLINUX) | $(OUTPUT)/bpf
	$(call msg,BPF,$@)
	$(Q)$(CLANG) -g -O2 -Wall -Werror -target bpf -D__TARGET_ARCH_$(ARCH) \
		-Ivmlinux/$(ARCH) -Ibpf $(CLANG_BPF_SYS_INCLUDES) -c $< -o $@

$(OUTPUT)/gpumemtrace.bpf.o: $(BPF_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(BPFTOOL) gen object $@ $^

$(OUTPUT)/gpumemtrace.skel.h: $(OUTPUT)/gpumemtrace.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name gmt_bpf > $@

$(OUTPUT)/user/%.o: user/%.c $(USER_HDRS) bpf/gmt_events.h bpf/gmt_syscalls.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) $(INCLUDES) -c $< -o $@

$(OUTPUT)/user/source/attach.o $(OUTPUT)/user/source/session.o \
	$(OUTPUT)/user/source/gpuapi.o $(OUTPUT)/user/source/bpfmaps.o: $(OUTPUT)/gpumemtrace.skel.h

# Perfetto's messages (proto/perfetto.proto) and pprof's (proto/profile.proto),
# encoded by protobuf-c
$(OUTPUT)/proto/%.pb-c.c $(OUTPUT)/proto/%.pb-c.h: proto/%.proto
	$(call msg,PROTOC,$@)
	$(Q)mkdir -p $(OUTPUT)/proto && protoc-c --proto_path=proto --c_out=$(OUTPUT)/proto $<

.PRECIOUS: $(OUTPUT)/proto/%.pb-c.c $(OUTPUT)/proto/%.pb-c.h
$(OUTPUT)/proto/%.pb-c.o: $(OUTPUT)/proto/%.pb-c.c
	$(call msg,CC,$@)
	$(Q)$(CC) -g -O2 $(CROSS_FLAGS) -c $< -o $@

$(OUTPUT)/user/report/perfetto.o: $(OUTPUT)/proto/perfetto.pb-c.h
$(OUTPUT)/user/report/pprof.o: $(OUTPUT)/proto/profile.pb-c.h
# the page of replay --html, built in by .incbin
$(OUTPUT)/user/report/html.o: user/report/html_page.html

$(B)gpumemtrace: $(USER_OBJS) $(OUTPUT)/proto/perfetto.pb-c.o $(OUTPUT)/proto/profile.pb-c.o
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LDFLAGS) $(LIBS) -o $@

# asks Vulkan drivers for their entry points; dynamic, so it can dlopen them
$(B)gpumemtrace-vkinfo: helper/vkinfo.c helper/sandbox.c helper/sandbox.h
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(CFLAGS) $(CROSS_FLAGS) $(filter %.c,$^) $(filter-out -static,$(LDFLAGS)) -ldl -lseccomp -o $@

# asks the NVIDIA driver (NVML) for device memory by process; dynamic, for dlopen
$(B)gpumemtrace-nvml: helper/nvml.c
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(CFLAGS) $(CROSS_FLAGS) $< $(filter-out -static,$(LDFLAGS)) -ldl -o $@

# test programs: dynamically linked, built from tests/*.c
TEST_BINS := $(patsubst tests/%.c,$(OUTPUT)/tests/%,$(wildcard tests/*.c))

# the unit tests: one binary, a file a topic (tests/unit/), an object each,
# so that changing one topic compiles that file alone
UNIT_SRCS := $(wildcard tests/unit/*.c) bench/series.c
UNIT_HDRS := tests/unit/unit.h bench/series.h bpf/timings_parse.bpf.h $(USER_HDRS) \
	bpf/gmt_events.h bpf/gmt_syscalls.h
$(OUTPUT)/unit/%.o: %.c $(UNIT_HDRS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) $(INCLUDES) -Ibench -c $< -o $@

$(OUTPUT)/tests/unit: $(patsubst %.c,$(OUTPUT)/unit/%.o,$(UNIT_SRCS)) $(CORE_OBJS) | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $^ -lelf -ljson-c -liberty -lz -lm -o $@

# writes the docs/scenarios.md cases and controls as trace files
$(OUTPUT)/gmt-scenario: tools/scenario.c $(CORE_OBJS) | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(INCLUDES) $^ -lelf -ljson-c -liberty -lz -lm -o $@

# the same unit tests under AddressSanitizer and UBSan, with the modules
# they test built so too
ASAN_FLAGS := -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all \
	-fno-omit-frame-pointer $(filter-out -O2,$(CFLAGS))
$(OUTPUT)/asan/%.o: %.c $(UNIT_HDRS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(ASAN_FLAGS) $(INCLUDES) -Ibench -c $< -o $@

$(OUTPUT)/asan/user/%.o: user/%.c $(USER_HDRS) bpf/gmt_events.h bpf/gmt_syscalls.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(ASAN_FLAGS) $(INCLUDES) -c $< -o $@

$(OUTPUT)/tests/unit-asan: $(patsubst %.c,$(OUTPUT)/asan/%.o,$(UNIT_SRCS) \
		$(patsubst $(OUTPUT)/user/%.o,user/%.c,$(CORE_OBJS))) | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(ASAN_FLAGS) $^ -lelf -ljson-c -liberty -lz -lm -o $@

# the fuzzer over the trace-file reader, the model and the reports
# (tests/fuzz/replay.c): clang's libFuzzer with AddressSanitizer and UBSan
FUZZ_FLAGS := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE -DGMT_VERSION='"$(VERSION)"'
$(OUTPUT)/tests/fuzz-replay: tests/fuzz/replay.c $(patsubst $(OUTPUT)/user/%.o,user/%.c,$(CORE_OBJS)) \
		user/report/perfetto.c $(OUTPUT)/proto/perfetto.pb-c.c \
		user/report/pprof.c $(OUTPUT)/proto/profile.pb-c.c \
		$(USER_HDRS) bpf/gmt_events.h | $(OUTPUT)/tests
	$(call msg,FUZZ,$@)
	$(Q)$(CLANG) $(FUZZ_FLAGS) -Wno-unused-parameter $(INCLUDES) $(filter %.c,$^) -lprotobuf-c \
		-lelf -ljson-c -liberty -lz -lm -o $@

# the fuzzer over the unwinder (tests/fuzz/unwind.c): hostile CFI, registers
# and stack slices through user/source/unwind.c and libdwfl
$(OUTPUT)/tests/fuzz-unwind: tests/fuzz/unwind.c user/source/unwind.c user/source/unwind.h \
		user/source/cfi_check.c user/source/cfi_check.h \
		user/source/symbolize.h bpf/gmt_events.h | $(OUTPUT)/tests
	$(call msg,FUZZ,$@)
	$(Q)$(CLANG) $(FUZZ_FLAGS) $(INCLUDES) $(filter %.c,$^) -ldw -lelf -lz -o $@

# the fuzzer over the HTTP framing that bpf/req.bpf.c runs in the kernel
# (tests/fuzz/http.c): the same header, compiled for user space
$(OUTPUT)/tests/fuzz-http: tests/fuzz/http.c bpf/http_parse.bpf.h | $(OUTPUT)/tests
	$(call msg,FUZZ,$@)
	$(Q)$(CLANG) $(FUZZ_FLAGS) -Ibpf $< -o $@

# the fuzzer over the timings scanner that bpf/req.bpf.c runs on response
# bodies (tests/fuzz/timings.c)
$(OUTPUT)/tests/fuzz-timings: tests/fuzz/timings.c bpf/timings_parse.bpf.h | $(OUTPUT)/tests
	$(call msg,FUZZ,$@)
	$(Q)$(CLANG) $(FUZZ_FLAGS) -Ibpf $< -ljson-c -o $@

# the VM tests' DRM program: static, for the busybox guest
$(OUTPUT)/tests/drmflip-static: tests/drmflip.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -static -fno-omit-frame-pointer -O1 $< -o $@

# the workload for the guest kernels of tests/vm
$(OUTPUT)/tests/workload-static: tests/workload.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -static -fno-omit-frame-pointer -O1 $< -lpthread -o $@

# the workload as release builds are: optimised, no frame pointers (the
# stacks of its first touches need the call frame information)
$(OUTPUT)/tests/workload-nofp: tests/workload.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -O2 -fomit-frame-pointer $< -lpthread -o $@

# the same, static, for the guest kernels: its first touches reach main by
# the call frame information alone (tests/arm64.sh)
$(OUTPUT)/tests/workload-nofp-static: tests/workload.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -static -O2 -fomit-frame-pointer $< -lpthread -o $@

$(OUTPUT)/tests/vkalloc: tests/vkalloc.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -fno-omit-frame-pointer -O1 $< -lvulkan -o $@

$(OUTPUT)/tests/gpuwork: tests/gpuwork.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -fno-omit-frame-pointer -O1 $< -ldl -o $@

# stand-ins for libcuda.so.1 and libamdhip64.so, in a folder of their own
FAKE_LIBS := $(OUTPUT)/tests/fake/libcuda.so.1 $(OUTPUT)/tests/fake/libamdhip64.so \
	$(OUTPUT)/tests/fake/vkdriver.so $(OUTPUT)/tests/fake/leak.so
$(OUTPUT)/tests/fake/libcuda.so.1: tests/fake/cuda.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) -fPIC -shared -Wl,-soname,libcuda.so.1 $< -o $@

# a planted Vulkan "driver" that records who loaded it
$(OUTPUT)/tests/fake/vkdriver.so: tests/fake/vkdriver.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) -fPIC -shared $< -ldl -o $@

# a leak of a known owner, preloaded into the real llama-server
$(OUTPUT)/tests/fake/leak.so: tests/fake/leak.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) -fPIC -shared -fno-omit-frame-pointer -O1 $< -ldl -o $@

$(OUTPUT)/tests/fake/libamdhip64.so: tests/fake/hip.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) -fPIC -shared $< -o $@

# gpuwork stripped, its symbols in a separate debug file: found by
# .gnu_debuglink (-dl) or by build id (-bid, the test puts it in place)
STRIPPED := $(OUTPUT)/tests/stripped/gpuwork-dl $(OUTPUT)/tests/stripped/gpuwork-bid
$(OUTPUT)/tests/stripped/gpuwork-%: $(OUTPUT)/tests/gpuwork
	$(call msg,STRIP,$@)
	$(Q)mkdir -p $(@D) && objcopy --only-keep-debug $< $@.debug && \
		objcopy --strip-all $< $@ && \
		if [ $* = dl ]; then cd $(@D) && objcopy --add-gnu-debuglink=gpuwork-dl.debug $(@F); fi

$(OUTPUT)/tests/%: tests/%.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -fno-omit-frame-pointer -O1 $< -lpthread -o $@

deps:
	$(Q)tools/deps.sh

# real llama.cpp for the tests: node-llama-cpp's prebuilt Vulkan build, pinned
# by tests/e2e/package-lock.json (its other platforms' binaries are left out)
e2e-deps: deps
	$(Q)cd tests/e2e && [ -d node_modules/@node-llama-cpp/linux-x64-vulkan ] || \
		npm ci --omit=optional --ignore-scripts --no-audit --no-fund --loglevel=error

# the real llama-server, built once per machine from node-llama-cpp's
# llama.cpp and cached outside the clone (tools/llama-server.sh); and the
# same cross-built for arm64, for the arm64 VM's tests (tests/arm64.sh)
llama-server: e2e-deps
	$(Q)tools/llama-server.sh >/dev/null
	$(Q)tools/llama-server.sh --arm64 >/dev/null

# the builds before the tests use every core (the tests run one at a time),
# through ccache: its cache in GMT_CACHE, paths taken relative to the clone
JOBS ?= $(shell nproc)
GMT_CACHE ?= /var/cache/gpumemtrace
test: export CCACHE_DIR := $(GMT_CACHE)/ccache
test: export CCACHE_BASEDIR := $(CURDIR)
test: export CCACHE_NOHASHDIR := 1
test: deps e2e-deps llama-server
	$(Q)$(MAKE) -j$(JOBS) --no-print-directory CCACHE=$(shell command -v ccache) all $(TEST_BINS) $(OUTPUT)/tests/unit $(OUTPUT)/tests/unit-asan \
		$(OUTPUT)/tests/workload-static $(OUTPUT)/tests/workload-nofp \
		$(OUTPUT)/tests/drmflip-static $(FAKE_LIBS) $(STRIPPED) \
		$(OUTPUT)/gmt-scenario $(OUTPUT)/tests/fuzz-replay $(OUTPUT)/tests/fuzz-unwind \
		$(OUTPUT)/tests/fuzz-http $(OUTPUT)/tests/fuzz-timings
ifeq ($(HOST_ARCH),x86)
	$(Q)$(MAKE) -j$(JOBS) --no-print-directory CCACHE=$(shell command -v ccache) ARCH=arm64 all
endif
	$(Q)tools/package.sh >/dev/null || echo "the Debian package did not build: tests/package.sh says why"
	$(Q)tests/run.sh

run: deps e2e-deps llama-server
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tools/demo.sh

format:
	$(Q)clang-format -i bpf/*.c bpf/*.h user/*.c user/*/*.c user/*/*.h tests/*.c tests/unit/*.c tests/unit/*.h tests/fake/*.c helper/*.c tools/*.c

clean:
	$(call msg,CLEAN)
	$(Q)rm -rf $(OUTPUT) gpumemtrace gpumemtrace-vkinfo gpumemtrace-nvml

# bench/gpuapi.sh's floor: empty uprobes, loaded by a small libbpf program
$(OUTPUT)/bench/floor.bpf.o: bench/floor.bpf.c $(VMLINUX)
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D) && $(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) \
		-Ivmlinux/$(ARCH) -c $< -o $@

$(OUTPUT)/bench/floor: bench/floor.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) -static $< -lbpf -lelf -lzstd -lz -o $@

# what the verdicts and a live-view frame cost as a run grows
$(OUTPUT)/bench/verdicts: bench/verdicts.c $(CORE_OBJS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) $(INCLUDES) $^ -lelf -ljson-c -liberty -lz -lm -o $@

# how often the shape verdicts are wrong, and how soon leaks are found
$(OUTPUT)/bench/shapes: bench/shapes.c bench/series.c $(OUTPUT)/user/analysis/analyze.o
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) $(INCLUDES) -Ibench $^ -lm -o $@

bench: all $(OUTPUT)/bench/shapes $(OUTPUT)/bench/floor $(OUTPUT)/bench/floor.bpf.o $(OUTPUT)/bench/verdicts $(OUTPUT)/tests/gpuwork \
	$(OUTPUT)/tests/workload $(FAKE_LIBS)
