#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Real applications between two guests on one Ethernet link, our driver on
# both, one case of each path (22 and 23 run the rest with ours in each
# role against the in-tree driver): the RC ping-pong with its buffers
# validated, RC WRITE, READ and atomics, UC, UD, SEND over the IPv6 GID,
# rdma_cm over IPv4 and IPv6, multicast.
# Guest a serves, guest b connects.
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
# One case of each path: 22 and 23 run the rest with ours in each role
# against theirs, which judges our packets better than ours does
# (TRAFFIC_BRIEF, lib/traffic.sh).
TRAFFIC_BRIEF=1
traffic_list
info "counters: $(counters)"
if [ "$RXE_IMPL" = ours ]; then
	# Bulk requests and READ responses go through the stack in batches
	# (rxe_net_send()), which virtio-net's software segmentation takes
	# apart; the traffic above checked what arrived.
	check "packets were sent in batches (batched_pkts > 0)" \
		test "$(counter batched_pkts)" -gt 0

	# Threaded NAPI polls eth0 in a kernel thread at normal priority,
	# which shares its CPU fairly with user space, as ksoftirqd does under
	# load: the QPs' tasks must leave it for the driver's high-priority
	# workqueue (rxe_task_run()), and still carry verified traffic.
	napi=/sys/class/net/eth0/threaded
	check "threaded NAPI on eth0" sh -c "echo 1 > $napi"
	# A ping-pong is too light to wake ksoftirqd: each of the 200
	# messages this guest receives finds its QP's task idle in the NAPI
	# thread, and nearly every one must count.
	deferred0=$(counter task_deferred)
	pair "ibv_rc_pingpong -c, threaded NAPI" "$PP_ROW" ibv_rc_pingpong -d rxe0 -g 1 -c -n 200
	deferred=$(( $(counter task_deferred) - deferred0 ))
	info "task_deferred grew by $deferred in the ping-pong"
	check "QP tasks left the NAPI thread for the workqueue (task_deferred +$deferred, at least 150)" \
		test "$deferred" -ge 150
	pair "ib_read_bw 64 KiB, threaded NAPI" "$BW_ROW" rxe-perftest ib_read_bw -d rxe0 -x 1 -n 300 -F
	check "NAPI back in the softirq" sh -c "echo 0 > $napi"
fi
check "barrier: traffic done" barrier "done"
check "rdma link delete rxe0" rxe_del rxe0
check "rmmod rdma_rxe" rmmod rdma_rxe
dmesg_clean

finish
