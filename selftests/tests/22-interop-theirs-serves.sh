#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Wire interoperability with the kernel's own rdma_rxe: the whole traffic
# list (lib/traffic.sh; on 6.12 one case of each path) with guest a (the
# server) running the kernel's in-tree rdma_rxe, guest b (the client)
# ours. Each pair moves data both ways (WRITE and SEND from the client,
# READ responses and atomics from the server), so 22 and 23 together
# make each driver requester and responder against the other (on the
# second kernel, where 23 does not run, 32's kernel verbs swap the
# drivers). On a kernel with RDMA ATOMIC
# WRITE (6.2 on) each guest also posts ATOMIC WRITEs to the other, and
# the requester checks the completions and the responder's memory byte
# for byte (py/mpe_peer.py).
#
# guests: 2
# timeout: 480
# reference: theirs
# kernels: all

export RXE_IMPL_A=theirs
# shellcheck source=selftests/lib/interop.sh
. "$REPO/selftests/lib/interop.sh"
