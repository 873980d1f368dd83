#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# RDMA FLUSH from userspace, end to end (requester, responder, completer)
# on two loopback RC QPs: on a kernel that has it (6.2 and later), FLUSH
# to global visibility of a range, of a whole MR, of nothing, behind an
# RDMA WRITE and 64 deep with max_rd_atomic 4, with WC_FLUSH completions
# in order; each error status (no FLUSH access on the MR or the QP, a
# range past the MR, a bad rkey: remote access error; persistence, an
# undefined placement type or level, max_rd_atomic 0: refused locally);
# no MR registered for persistence. On a kernel without it, FLUSH fails
# locally and no MR can be registered for it. Then delete and unload with
# nothing left behind.
#
# Debian 12's rdma-core 44 cannot post a FLUSH (its rxe provider has no
# wr_flush), so lib/rxe-flush.c writes the send WQE into the SQ ring by
# hand, as rdma-core 45 and later do: the host builds it (build_tools,
# lib/common.sh) against the uapi rdma_user_rxe.h of a 6.2+ kernel's
# headers (setup.sh installs 6.12's) and libibverbs-dev's headers.
#
# guests: 1
# timeout: 240
# kernels: all

# shellcheck source=selftests/lib/guest.sh
. "$REPO/selftests/lib/guest.sh"

FLUSH_BIN=${RXE_TOOLS:-}/rxe-flush

expect=no
if kernel_has_mpe; then
	expect=yes
fi
info "kernel $(uname -r): FLUSH expected: $expect"

check "load rdma_rxe ($RXE_IMPL)" load_rxe
check "add rxe0 on eth0" rxe_add rxe0 eth0
check "lib/rxe-flush.c (FLUSH WQEs written into the SQ ring) was built" have_tool rxe-flush
check "rxe-flush: FLUSH from userspace, expected $expect (see checks.log)" \
	"$FLUSH_BIN" --expect "$expect"
rxe_teardown rxe0

finish
