#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Real applications over one device, server and client on the guest's own
# addresses (the driver loops the packets back): the verbs pingpongs with
# validated buffers, every perftest family, rdma_cm over IPv4 and IPv6;
# and the driver's tracepoints.
#
# guests: 1
# timeout: 420

# shellcheck source=selftests/lib/guest.sh
. "$REPO/selftests/lib/guest.sh"
# shellcheck source=selftests/lib/traffic.sh
. "$REPO/selftests/lib/traffic.sh"

check "load rdma_rxe ($RXE_IMPL)" load_rxe
check "add rxe0 on eth0" rxe_add rxe0 eth0
traffic_list
info "counters: $(counters)"

# The tracepoints record the packets under the device's name.
if [ "$RXE_IMPL" = ours ]; then
	tr=/sys/kernel/tracing
	[ -d "$tr/events" ] || mount -t tracefs nodev "$tr"
	check "enable the rxe tracepoints" sh -c "echo 1 >$tr/events/rxe/enable"
	pair "ibv_rc_pingpong -n 10, traced" "$PP_ROW" ibv_rc_pingpong -d rxe0 -g 1 -n 10
	echo 0 >"$tr/events/rxe/enable"
	check_match "the trace has packets sent by rxe0" "rxe_pkt_tx_bth: rxe0 opcode=0x" cat "$tr/trace"
	check_match "the trace has packets received by rxe0" "rxe_pkt_rx_bth: rxe0 opcode=0x" cat "$tr/trace"
fi
check "rdma link delete rxe0" rxe_del rxe0
check "rmmod rdma_rxe" rmmod rdma_rxe
dmesg_clean

finish
