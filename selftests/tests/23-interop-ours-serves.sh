#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Wire interoperability with the kernel's own rdma_rxe: the whole list of
# 21-traffic-two with guest a (the server) runs ours, guest b
# (the client) the kernel's in-tree rdma_rxe. Each pair moves
# data both ways (WRITE and SEND from the client, READ responses and
# atomics from the server), so 22 and 23 together make each driver
# requester and responder against the other.
#
# guests: 2
# timeout: 480

export RXE_IMPL_B=theirs
# shellcheck source=selftests/lib/guest.sh
. "$REPO/selftests/lib/guest.sh"
# shellcheck source=selftests/lib/traffic.sh
. "$REPO/selftests/lib/traffic.sh"

if [ "$RXE_IMPL" = theirs ]; then
	check "load the in-tree rdma_rxe" load_rxe_intree
else
	check "load rdma_rxe (ours)" load_rxe ours
fi
check_match "this guest runs $RXE_IMPL" "$([ "$RXE_IMPL" = ours ] && echo out-of-tree || echo in-tree)" modinfo_loaded
check "add rxe0 on eth0" rxe_add rxe0 eth0
check "barrier: rxe0 is up on both guests" barrier up
check "ping $PEER_IP" ping -c 2 -i 0.2 -w 20 "$PEER_IP"
traffic_list
[ "$RXE_IMPL" = theirs ] || info "counters: $(counters)"
check "barrier: traffic done" barrier done
check "rdma link delete rxe0" rxe_del rxe0
check "rmmod rdma_rxe" rmmod rdma_rxe
dmesg_clean

finish
