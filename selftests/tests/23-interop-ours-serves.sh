#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Wire interoperability with the kernel's own rdma_rxe: the traffic list
# (lib/traffic.sh)
# with guest a (the server) running ours, guest b (the client) the
# kernel's in-tree rdma_rxe. Each pair moves
# data both ways (WRITE and SEND from the client, READ responses and
# atomics from the server), so 22 and 23 together make each driver
# requester and responder against the other. What 22 shows for both
# ways is left to it (TRAFFIC_SWAPPED, lib/traffic.sh): the tools whose
# two sides do the same work (the ping-pongs, write and send latency),
# the size sweep, and the ATOMIC WRITEs, which 22 posts both ways.
#
# Not on the second kernel: its in-tree driver meets ours there in 22,
# as the responder of the list and in the loss phase, and as requester
# and responder of the ATOMIC WRITEs that are new in it.
#
# guests: 2
# timeout: 480
# reference: theirs

export RXE_IMPL_B=theirs
# What 22 does alike (lib/traffic.sh, lib/interop.sh).
TRAFFIC_SWAPPED=1
# shellcheck source=selftests/lib/interop.sh
. "$REPO/selftests/lib/interop.sh"
