#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Real applications between two guests on one Ethernet link, our driver on
# both: the verbs pingpongs with validated buffers, every perftest family,
# rdma_cm over IPv4 and IPv6. Guest a serves, guest b connects.
#
#   rxe-a: rxe0/eth0 10.11.0.1 <--- one link ---> rxe-b: rxe0/eth0 10.11.0.2
#
# guests: 2
# timeout: 480

# shellcheck source=selftests/lib/guest.sh
. "$REPO/selftests/lib/guest.sh"
# shellcheck source=selftests/lib/traffic.sh
. "$REPO/selftests/lib/traffic.sh"

check "load rdma_rxe ($RXE_IMPL)" load_rxe
check "add rxe0 on eth0" rxe_add rxe0 eth0
check "barrier: rxe0 is up on both guests" barrier up
check "ping $PEER_IP" ping -c 2 -i 0.2 -w 20 "$PEER_IP"
traffic_list
info "counters: $(counters)"
if [ "$RXE_IMPL" = ours ]; then
	# Bulk requests and READ responses go through the stack in batches
	# (rxe_net_send()), which virtio-net's software segmentation takes
	# apart; the traffic above checked what arrived.
	check "packets were sent in batches (batched_pkts > 0)" \
		test "$(counter batched_pkts)" -gt 0
fi
check "barrier: traffic done" barrier "done"
check "rdma link delete rxe0" rxe_del rxe0
check "rmmod rdma_rxe" rmmod rdma_rxe
dmesg_clean

finish
