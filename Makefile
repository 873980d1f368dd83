# SPDX-License-Identifier: GPL-2.0
#
# Developer front end. Kbuild does the real work; see Kbuild.
#
#   make                 build rdma_rxe.ko here
#   make KDIR=<tree>     build against another kernel tree
#   make debug           build with -DDEBUG: in-module self-tests run at load
#   make ktest           build selftests/ktest/rxe_ktest.ko, the kernel-verbs test
#   make check           W=1, sparse, checkpatch --strict, kernel-doc, symbol prefix
#                        (against every installed linux-headers-*-amd64)
#   make setup           install everything the build, the tests and make check
#                        need (apt)
#   make test            run the guest test suite (selftests/run.sh)
#   make demo            the main job: build, boot a guest, add rxe0, move traffic
#   make bench           benchmark ours against the kernel's rdma_rxe in guests
#                        (bench/run.sh; BENCH_ARGS=--quick for the short one)
#   make install         install into /lib/modules/<kver>/updates and keep the
#                        in-tree rdma_rxe from loading

KDIR ?= $(shell $(CURDIR)/scripts/find-kdir.sh)
KVER ?= $(shell $(MAKE) -s -C $(KDIR) kernelrelease 2>/dev/null)
RXE_VERSION ?= $(shell git -C $(CURDIR) describe --always --dirty 2>/dev/null || echo unknown)
LINUX_SRC ?= $(firstword $(wildcard /work/ref/linux-source-6.1) $(wildcard /usr/src/linux-source-6.1))

KBUILD = $(MAKE) -C $(KDIR) M=$(CURDIR) RXE_VERSION=$(RXE_VERSION)
KTEST_DIR = $(CURDIR)/selftests/ktest
KTEST_KBUILD = $(MAKE) -C $(KDIR) M=$(KTEST_DIR)
KTEST_SRCS = selftests/ktest/rxe_ktest.c

SRCS = $(filter-out %.mod.c,$(wildcard *.c)) $(wildcard include/*.h)

# This file's targets one at a time, even under -j (several clean and
# build the same folders); the '+' recipes hand -j on to kbuild.
.NOTPARALLEL:

.PHONY: all debug ktest ktest-check check sparse w1 style kdoc symbols setup test demo bench install clean

all:
	+$(KBUILD) modules

debug:
	+$(KBUILD) RXE_DEBUG=y modules

ktest:
	+$(KTEST_KBUILD) modules

# The test module meets the driver's gates too: W=1 -Werror, sparse, checkpatch.
ktest-check:
	+$(KTEST_KBUILD) clean >/dev/null
	+$(KTEST_KBUILD) W=1 KCFLAGS=-Werror modules
	+$(KTEST_KBUILD) clean >/dev/null
	+$(KTEST_KBUILD) C=2 CHECKFLAGS="-Wno-decl" modules 2>&1 | tee .sparse-ktest.log
	@! grep -E "warning|error" .sparse-ktest.log
	@scripts/checkpatch.sh $(LINUX_SRC) $(KTEST_SRCS)

w1:
	+$(KBUILD) clean >/dev/null
	+$(KBUILD) W=1 KCFLAGS=-Werror modules

sparse:
	+$(KBUILD) clean >/dev/null
	+$(KBUILD) C=2 CHECKFLAGS="-Wno-decl" modules 2>&1 | tee .sparse.log
	@! grep -E "warning|error" .sparse.log

style:
	@scripts/checkpatch.sh $(LINUX_SRC) $(SRCS)

kdoc:
	@$(KDIR)/scripts/kernel-doc -v -none $(SRCS) 2>&1 | grep -v ' info: ' | tee .kdoc.log
	@! grep -E "warning|error" .kdoc.log

symbols: all
	@bad=$$(nm rdma_rxe.ko | awk '$$2 == "T" && $$3 !~ /^(__pfx_)?(__SCT__tp_func_|__traceiter_|__probestub_)?rxe_/ && $$3 !~ /^(__pfx_)?(init|cleanup)_module$$/'); \
	if [ -n "$$bad" ]; then echo "global symbols without the rxe_ prefix:"; echo "$$bad"; exit 1; fi

# The gates that depend on the kernel run against every installed Debian
# headers tree, this KDIR last so that its build is the one left here;
# KDIR= on the command line narrows them to that tree.
CHECK_KDIRS = $(if $(filter command line,$(origin KDIR)),$(KDIR),\
	$(filter-out $(KDIR),$(wildcard /usr/src/linux-headers-*-amd64)) $(KDIR))

check: style
	@for k in $(CHECK_KDIRS); do \
		echo "check: gates against $$k"; \
		$(MAKE) --no-print-directory KDIR=$$k w1 sparse kdoc symbols ktest-check || exit 1; \
	done
	@echo "check: all gates passed ($(words $(CHECK_KDIRS)) kernel trees)"

setup:
	selftests/setup.sh --check

test:
	selftests/run.sh

demo:
	selftests/demo.sh

bench:
	bench/run.sh $(BENCH_ARGS)

install: all
	install -D -m 0644 rdma_rxe.ko /lib/modules/$(KVER)/updates/rdma_rxe.ko
	install -D -m 0644 scripts/rdma_rxe-depmod.conf /etc/depmod.d/rdma_rxe.conf
	depmod -a $(KVER)

clean:
	+$(KBUILD) clean
	+$(KTEST_KBUILD) clean
	rm -f .sparse.log .kdoc.log .sparse-ktest.log
