#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# RoCE over a VLAN, the common setup on real networks (a priority for the
# RoCE traffic needs a tag). The driver binds to eth0, as on a real host,
# and ib_core gives it the addresses of the VLAN eth0.100 above as GIDs of
# their own; traffic on those GIDs leaves through the VLAN, tagged, and
# comes back through it. RC traffic of every kind over IPv4 and IPv6,
# UC and UD, validated buffers both ways (rping -V, also to the guest's
# own VLAN address, which the driver loops back); guest b captures
# what crosses eth0: every RoCE frame must carry VLAN 100, every ICRC and
# IPv6 UDP checksum must be right (roce.py), and no packet may fail its
# ICRC at the receiver. With ours, requests and READ responses go through
# the VLAN in batches, which the VLAN device hands whole to eth0's
# software segmentation.
#
#   rxe-a: rxe0/eth0, eth0.100 10.13.0.1 --- VLAN 100 --- 10.13.0.2 eth0.100, rxe0/eth0 :rxe-b
#
# guests: 2
# timeout: 480

# shellcheck source=selftests/lib/guest.sh
. "$REPO/selftests/lib/guest.sh"
# shellcheck source=selftests/lib/traffic.sh
. "$REPO/selftests/lib/traffic.sh"
# shellcheck source=selftests/lib/wire.sh
. "$REPO/selftests/lib/wire.sh"

V4_MY=10.13.0.${MY_IP##*.}
V4_PEER=10.13.0.${PEER_IP##*.}
V6_MY=fd13::${MY_IP##*.}
V6_PEER=fd13::${PEER_IP##*.}
cap=/tmp/vlan.pcap

check "load rdma_rxe ($RXE_IMPL)" load_rxe
check "load 8021q" modprobe 8021q
check "eth0.100: VLAN 100 on eth0" \
	ip link add link eth0 name eth0.100 type vlan id 100
check "eth0.100: addresses $V4_MY and $V6_MY" \
	sh -c "ip addr add $V4_MY/24 dev eth0.100 &&
	       ip addr add $V6_MY/64 dev eth0.100 nodad"
check "eth0.100: up" ip link set eth0.100 up

# From here on the tools meet over the VLAN's addresses.
stacked_rxe_up eth0.100

# The filter takes RoCEv2 frames with a tag and without, so that an
# untagged one would be seen; the traffic below makes some 7 000 frames,
# which the capture must hold whole to see both IP versions.
if [ "$GUEST" = b ]; then
	CAPTURE_FILTER="udp port 4791 or (vlan and udp port 4791)" \
		CAPTURE_MAX=20000 capture_start "$cap"
fi
check "barrier: capture running" barrier capture

batched0=$(counter batched_pkts 2>/dev/null)
pair "ib_write_bw RC, IPv4, 64 KiB" "$BW_ROW" \
	rxe-perftest ib_write_bw -d rxe0 -x "$g4" -n 30 -F
pair "ib_read_bw RC, IPv6, 64 KiB" "$BW_ROW" \
	rxe-perftest ib_read_bw -d rxe0 -x "$g6" -n 30 -F
pair "ib_send_bw RC, IPv6, 3002 B" "$BW_ROW" \
	rxe-perftest ib_send_bw -d rxe0 -x "$g6" -s 3002 -n 200 -F
pair "ib_write_bw UC, IPv4, 5000 B" "$BW_ROW" \
	rxe-perftest ib_write_bw -c UC -d rxe0 -x "$g4" -s 5000 -n 200 -F
pair "ib_send_bw UD, IPv6, 1024 B" "$BW_ROW" \
	rxe-perftest ib_send_bw -c UD -d rxe0 -x "$g6" -s 1024 -n 200 -F
# rping's server READs the client's buffer and WRITEs it back; -V checks
# every round's data.
rping_pair "rping -v -V, 4000 B, IPv4" 4 -V -S 4000
check "barrier: traffic done" barrier traffic
# rdma_cm to this guest's own VLAN address: looped back inside the
# driver, the packets must still say they came through the VLAN.
bg rping-self rping -s -a "$V4_MY" -C 5 -V -S 4000 -v
wait_cm_listen 7174 >/dev/null || true
check "rping -V to its own address on eth0.100 (looped back)" \
	rping -c -a "$V4_MY" -C 5 -V -S 4000 -v
check "rping server on its own address on eth0.100" bg_wait rping-self

if [ "$GUEST" = b ]; then
	capture_stop "$cap"
	host_check "every captured RoCEv2 frame is tagged VLAN 100, with a right ICRC and IPv6 UDP checksum" \
		/usr/bin/python3 "$REPO/selftests/py/vlan_check.py" "${cap##*/}" 100 1000
fi

info "counters: $(counters)"
if [ "$RXE_IMPL" = ours ]; then
	batched=$(($(counter batched_pkts) - ${batched0:-0}))
	check "packets went through the VLAN in batches ($batched)" \
		test "$batched" -gt 0
	# The kernel's rdma_rxe has no such counter.
	check "no packet failed its ICRC" test "$(counter drop_icrc_err)" = 0
fi
c6=$(awk '$1 == "Udp6InCsumErrors" { print $2 }' /proc/net/snmp6)
check "no UDP/IPv6 checksum error here (Udp6InCsumErrors $c6)" \
	test "$c6" = 0
check "barrier: checks done" barrier "done"
check "rdma link delete rxe0" rxe_del rxe0
check "rmmod rdma_rxe" rmmod rdma_rxe
dmesg_clean

finish
