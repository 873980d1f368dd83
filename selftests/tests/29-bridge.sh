#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# RoCE over a bridge, the usual setup of a host that runs VMs: eth0 is a
# port of br0 and the address lives on br0. The driver binds to eth0,
# and ib_core gives it br0's addresses as GIDs attached to br0 (a netdev
# above eth0). Traffic on those GIDs leaves through br0, and the replies
# come in through br0 too: the driver must take them as eth0's. (The
# in-tree rdma_rxe drops them, uncounted, and every connection times out.)
# Guest b has the peer addresses on its plain eth0. RC over IPv4 and IPv6,
# UD over IPv6, rdma_cm (rping -V) both ways through the bridge, and an
# rdma_cm multicast group (mckey) that guest a receives through it.
#
#   rxe-a: rxe0/eth0, br0 10.14.0.1 [eth0] --- one link --- 10.14.0.2 eth0, rxe0/eth0 :rxe-b
#
# guests: 2
# timeout: 480

# shellcheck source=selftests/lib/guest.sh
. "$REPO/selftests/lib/guest.sh"
# shellcheck source=selftests/lib/traffic.sh
. "$REPO/selftests/lib/traffic.sh"

# A connection that cannot work fails in a minute, not two.
CHECK_TIMEOUT=60

V4_MY=10.14.0.${MY_IP##*.}
V4_PEER=10.14.0.${PEER_IP##*.}
V6_MY=fd14::${MY_IP##*.}
V6_PEER=fd14::${PEER_IP##*.}

# shellcheck disable=SC2317 # called through check
make_bridge() {
	ip link add br0 type bridge stp_state 0 &&
		ip link set eth0 master br0 &&
		ip link set br0 up &&
		ip addr add "$V4_MY/24" dev br0 &&
		ip addr add "$V6_MY/64" dev br0 nodad
}

check "load rdma_rxe ($RXE_IMPL)" load_rxe
if [ "$GUEST" = a ]; then
	check "br0: a bridge with port eth0, addresses $V4_MY and $V6_MY" make_bridge
	dev=br0
else
	check "eth0: addresses $V4_MY and $V6_MY" \
		sh -c "ip addr add $V4_MY/24 dev eth0 && ip addr add $V6_MY/64 dev eth0 nodad"
	dev=eth0
fi

# From here on the tools meet over the new addresses.
stacked_rxe_up "$dev"

pair "ib_write_bw RC, IPv4, 64 KiB" "$BW_ROW" \
	rxe-perftest ib_write_bw -d rxe0 -x "$g4" -n 30 -F
pair "ib_read_bw RC, IPv6, 64 KiB" "$BW_ROW" \
	rxe-perftest ib_read_bw -d rxe0 -x "$g6" -n 30 -F
pair "ib_send_bw UD, IPv6, 1024 B" "$UD_ROW" \
	rxe-perftest ib_send_bw -c UD -d rxe0 -x "$g6" -s 1024 -n 200 -F
# rdma_cm resolves the bridge's address to rxe0; rping's server READs the
# client's buffer and WRITEs it back, -V checks every round's data.
rping_pair "rping -v -V, 4000 B, IPv4" 4 -V -S 4000
rping_pair "rping -v -V, 4000 B, IPv6" 6 -V -S 4000
# rdma_cm joins the group on the route's netdev, br0, so the datagrams
# reach the host; they come in through br0 like the rest.
mckey_pair "mckey: 20 datagrams to multicast group 239.1.2.9, received through br0" 239.1.2.9
check "barrier: traffic done" barrier traffic

info "counters: $(counters)"
if [ "$RXE_IMPL" = ours ]; then
	rcvd=$(counter rcvd_pkts)
	check "rxe0 took in what came through $dev ($rcvd packets)" \
		test "${rcvd:-0}" -gt 100
fi
check "barrier: checks done" barrier "done"
check "rdma link delete rxe0" rxe_del rxe0
check "rmmod rdma_rxe" rmmod rdma_rxe
dmesg_clean

finish
