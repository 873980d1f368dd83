#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# IBA's Memory Placement Extensions from userspace, through rdma-core's
# unchanged rxe provider (pyverbs): on a kernel that has them (6.2 and
# later), the device's ATOMIC_WRITE and FLUSH_GLOBAL capabilities, RDMA
# ATOMIC WRITE stored byte for byte and ordered behind an RDMA WRITE, its
# error completions with the target untouched, and the FLUSH access flags
# of MRs and QPs; on a kernel without them, no capability, a refused
# ATOMIC WRITE that writes nothing, and no FLUSH access. Then delete and
# unload with nothing left behind.
#
# guests: 1
# timeout: 240
# kernels: all

# shellcheck source=selftests/lib/guest.sh
. "$REPO/selftests/lib/guest.sh"

# The kernel's verbs have the extensions from 6.2 on.
expect=no
if kernel_has_mpe; then
	expect=yes
fi
info "kernel $(uname -r): Memory Placement Extensions expected: $expect"

check "load rdma_rxe ($RXE_IMPL)" load_rxe
check "add rxe0 on eth0" rxe_add rxe0 eth0
check "pyverbs: ATOMIC WRITE and FLUSH access, extensions $expect (see checks.log)" \
	/usr/bin/python3 "$REPO/selftests/py/mpe.py" rxe0 --expect "$expect"
rxe_teardown rxe0

finish
