#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Multicast between UD QPs. On guest a, lib/rxe-mcast.c with the verbs
# (IPv4 group 239.1.2.3, and IPv6 ff0e::1:2:3): QPs attached to a group
# take every datagram a QP of the same device sends to it (looped back by
# the IP layer), each its own copy, when their Q_Key matches; a detached
# QP takes none; the netdev joins the IP group with the first QP attached
# and leaves it after the last; a QP still attached is not destroyed
# (ib_uverbs); past the device's limits (128 groups, 32 QPs in one)
# attaching is ENOMEM, detaching what is not attached EINVAL; a process
# that exits with a QP attached leaves the group. Then rdma_cm's mckey
# across the wire, a sending to a group that b joined: every message
# arrives, and b's capture shows each as a UD SEND with immediate to the
# multicast QPN in a frame to the group's MAC with a right ICRC, as tshark
# reads it too. Then datagrams to a group b joined in frames to b's own MAC
# (py/mcast_inject.py): b takes the one with the group's Q_Key and QPN, and
# refuses and counts one with another Q_Key and one to a unicast QPN.
# (rdma_cm refuses to join an IPv6 group on RoCEv2, so mckey runs over
# IPv4 only.) Then delete and unload with nothing left behind.
#
# guests: 2
# timeout: 300
# kernels: all

# shellcheck source=selftests/lib/guest.sh
. "$REPO/selftests/lib/guest.sh"
# shellcheck source=selftests/lib/traffic.sh
. "$REPO/selftests/lib/traffic.sh"
# shellcheck source=selftests/lib/wire.sh
. "$REPO/selftests/lib/wire.sh"

MCAST_BIN=${RXE_TOOLS:-}/rxe-mcast

check "load rdma_rxe ($RXE_IMPL)" load_rxe
check "add rxe0 on eth0" rxe_add rxe0 eth0
check_match "rxe0 has multicast groups (max_mcast_grp 128, 32 QPs each)" \
	"max_mcast_grp:[[:space:]]*128$" ibv_devinfo -d rxe0 -v
check_match "max_mcast_qp_attach 32" "max_mcast_qp_attach:[[:space:]]*32$" \
	ibv_devinfo -d rxe0 -v

if [ "$GUEST" = a ]; then
	check "lib/rxe-mcast.c was built" have_tool rxe-mcast
	check "verbs, IPv4 group: replication, Q_Key, detach, limits (see checks.log)" \
		"$MCAST_BIN" rxe0 eth0 "$MY_IP" 239.1.2.3 --limits
	check "the process exited with a QP attached: eth0 left 239.1.2.3" \
		sh -c '! ip maddr show dev eth0 | grep -qw 239.1.2.3'
	check "verbs, IPv6 group: replication, Q_Key, detach (see checks.log)" \
		"$MCAST_BIN" rxe0 eth0 "$MY_IP6" ff0e::1:2:3
fi

check "barrier: rxe0 is up on both guests" barrier up
group=239.1.2.4
cap=/tmp/mcast.pcap
[ "$GUEST" != b ] || capture_start "$cap"
SERVER=b mckey_pair "mckey: b receives the 20 messages a sends to $group" "$group"
if [ "$GUEST" = b ]; then
	check "b left $group with mckey" sh -c "! ip maddr show dev eth0 | grep -qw $group"
	capture_stop "$cap"
	# rdma_cm's Q_Key for its UDP port space (RDMA_UDP_QKEY).
	host_check "the datagrams on the wire, by roce.py and tshark (see checks.log)" \
		/usr/bin/python3 "$REPO/selftests/py/mcast_wire.py" "${cap##*/}" "$group" \
		"$PEER_IP" 20 0x01234567 "${TSHARK_OPTS[@]}"
fi

# A group's datagrams in frames to b's own MAC, as a bridge or an access
# point that turns multicast into unicast delivers them (py/mcast_inject.py
# on a): b's group QP takes the one to the multicast QPN with its Q_Key,
# and the other two are refused and counted (ours: the in-tree driver has
# no drop counters).
group=239.1.2.6
uni_counts() {
	echo "drop_qkey_err $(counter drop_qkey_err) drop_addr_err $(counter drop_addr_err)"
}
barrier uni-start || fail "the unicast-frame phase: the other guest did not come"
if [ "$GUEST" = b ]; then
	bg mckey-uni mckey -m "$group" -b "$MY_IP" -C 1
	check "b joined $group for the unicast frames" mckey_joined mckey-uni "$group"
	[ "$RXE_IMPL" != ours ] || read -r _ qkey0 _ addr0 <<<"$(uni_counts)"
	barrier uni-joined || true
	barrier uni-sent || true
	check_match "b's group QP took the datagram to $group in a frame to b's MAC" \
		"data transfers complete" bg_wait mckey-uni
	if [ "$RXE_IMPL" = ours ]; then
		want="drop_qkey_err $((qkey0 + 1)) drop_addr_err $((addr0 + 1))"
		check_match "the other Q_Key and the unicast QPN were refused and counted ($want)" \
			"^$want\$" uni_counts
	fi
else
	barrier uni-joined || true
	check "a sent three datagrams to $group in frames to b's MAC" \
		python3 "$REPO/selftests/py/mcast_inject.py" eth0 "$(peer_mac)" \
		"$MY_IP" "$group" 0x01234567
	barrier uni-sent || true
fi

rxe_teardown rxe0

finish
