#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A process that refills its work queues while the kernel flushes them.
# The producer index of a user QP's send and receive rings is the
# process's to write; lib/rxe-ring.c keeps each ring full from a second
# thread (the producer one slot behind the kernel's consumer index) while
# the QP goes to the error state, with CQs of one entry that overflow.
# The flush must take what the ring held and stop, not follow the
# producer for as long as the process likes with bottom halves off, nor
# schedule itself again for each completion that finds its CQ full. The
# kernel log must stay clean (no soft lockup, no RCU stall), and the QP
# and CQs must go away.
#
# guests: 1
# timeout: 240

# shellcheck source=selftests/lib/guest.sh
. "$REPO/selftests/lib/guest.sh"

RING_BIN=/tmp/rxe-ring

# shellcheck disable=SC2317 # called through check
ring_build() {
	gcc -Wall -Wextra -Werror -O2 -pthread -o "$RING_BIN" \
		"$REPO/selftests/lib/rxe-ring.c" -l:libibverbs.so.1
}

check "load rdma_rxe ($RXE_IMPL)" load_rxe
check "add rxe0 on eth0" rxe_add rxe0 eth0
check "build lib/rxe-ring.c" ring_build
info "this guest has $(nproc) CPUs: the thread refills while the kernel flushes"
check "rxe-ring: flushes bounded while the rings are refilled (see checks.log)" \
	"$RING_BIN" --dev rxe0
rxe_teardown rxe0

finish
