#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# No input from the wire may crash, WARN, leak or hang the kernel, and a
# bad packet is dropped and counted, never processed. Guest a injects
# frames on eth0 with a packet socket (a packet to a node's own address
# never reaches its driver) at guest b's QPs (selftests/py/hostile.py):
# bad ICRCs, unknown opcodes, truncated packets, bad pad and payload,
# wrong header versions, unknown QPNs, wrong P_Keys and Q_Keys, QPs in
# RESET/INIT/RTR, transport mismatches, CNPs; requests and a NAK to
# connected QPs from an address not their peer's or through a netdev not
# their path's (a VLAN of b's), datagrams to broadcast
# and multicast addresses; changed fields the ICRC does
# not cover; duplicate, replayed and out-of-sequence requests and
# unsolicited responses to a live RC connection (ours keeps the
# out-of-sequence ones for a gap that never fills: they must expire
# unused); requests that must draw a NAK (bad R_Key, out of bounds, no
# access, misaligned atomic, bad opcode sequence, too long); UC nonsense;
# ATOMIC WRITE and FLUSH where the kernel has them (6.2 on): answered,
# duplicates not executed again, bad ones NAKed (else unknown opcodes);
# a seeded fuzz of near-valid packets whose every counter is predicted; a
# flood of bad ICRCs; the responses to a READ of the target's with one
# lost and the rest trickling in (ours asks again once, for that one); a
# sequence, remote access and RNR NAK for a WRITE or SEND behind a READ
# with a response missing (ours holds each until the READ is in, then
# acts on it: sends again, fails the WRITE with the NAK's status, waits);
# unsignaled WRITEs that asked for no ACK, then quiet (ours sends the last
# one alone again, asking, not the whole tail); SENDs flooding 32 QPs
# while they are destroyed one by one, taken before and dropped after;
# READ requests that queue behind responses the netdev keeps (a tbf on
# the RoCE port): at most 32768 for the device, the rest dropped.
# Each class must move its named counter by exactly its count (ours; the
# in-tree rxe has no drop counters, nor takes a FLUSH with a right ICRC),
# the live connection must carry traffic afterwards, and both kernel logs
# must be clean.
#
# On a second kernel (RXE_AGAIN) only the classes the kernel has a part
# in: opcodes, addresses, masked fields, demultiplexing, placement, the
# churn and the budget; the driver's protocol alone ran on the first.
#
# RXE_FUZZ_SEED and RXE_FUZZ_N change the fuzz (default: seed 4791, 1500
# packets).
#
# guests: 2
# timeout: 480
# kernels: all

# shellcheck source=selftests/lib/guest.sh
. "$REPO/selftests/lib/guest.sh"
# shellcheck source=selftests/lib/traffic.sh
. "$REPO/selftests/lib/traffic.sh"

hostile=$REPO/selftests/py/hostile.py
# Whether the opcodes of FLUSH and ATOMIC WRITE are known, for both sides.
RXE_KERNEL_MPE=no
kernel_has_mpe && RXE_KERNEL_MPE=yes
export RXE_KERNEL_MPE

check "load rdma_rxe ($RXE_IMPL)" load_rxe
check "add rxe0 on eth0" rxe_add rxe0 eth0
check "barrier: rxe0 is up on both" barrier rxe-up
check "ping $PEER_IP" ping -c 2 -i 0.2 -w 20 "$PEER_IP"
check "ping $PEER_IP6" ping -c 2 -i 0.2 -w 20 "$PEER_IP6"

if [ "$GUEST" = b ]; then
	# Frames tagged VLAN 100 reach b's IP layer, through a netdev no
	# QP's path is on (hostile.py's TARGET_VLAN).
	check "eth0.100: VLAN 100 on eth0, up, no address" \
		sh -c "modprobe 8021q &&
			ip link add link eth0 name eth0.100 type vlan id 100 &&
			ip link set eth0.100 addrgenmode none &&
			ip link set eth0.100 up"
	check "barrier: ready" barrier ready
	check "target: QPs in every state, answering the attacker" \
		python3 "$hostile" target "$PEER_IP" "$PEER_IP6" "$MY_IP" "$MY_IP6"
else
	mac=$(peer_mac)
	check "the peer's MAC is known ($mac)" test -n "$mac"
	check "barrier: ready" barrier ready
	check "attacker: inject, watch the answers, judge the counters" \
		python3 "$hostile" attacker "$PEER_IP" "$PEER_IP6" "$MY_IP" "$MY_IP6" \
		"$mac" "$RXE_IMPL" "${RXE_FUZZ_SEED:-4791}" "${RXE_FUZZ_N:-1500}"
fi
check "barrier: injection done" barrier injected
[ "$RXE_IMPL" != ours ] || info "counters: $(counters)"
dmesg_clean "kernel log is clean after the hostile packets (no WARNING, BUG, Oops, ...)"
check "delete rxe0" rxe_del rxe0
check "rmmod rdma_rxe (nothing leaked keeps it busy)" rmmod rdma_rxe
dmesg_clean "kernel log is clean after rmmod (no WARNING, BUG, Oops, ...)"
expect_fail "the driver reported no leaked objects at exit" \
	sh -c "dmesg | grep -E 'objects leaked|still counted|references to drain'"
finish
