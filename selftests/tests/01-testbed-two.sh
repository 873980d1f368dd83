#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The test bed with two guests on one Ethernet link: addresses, ping both
# ways over IPv4 and IPv6, barriers both ways, and a short iperf3 run.
#
# guests: 2
# timeout: 240

# shellcheck source=selftests/lib/guest.sh
. "$REPO/selftests/lib/guest.sh"

check "two guests" test "$NGUESTS" = 2
check_match "eth0 has $MY_IP/24" "inet $MY_IP/24 " ip -o -4 addr show dev eth0
check_match "eth0 has $MY_IP6/64" "inet6 $MY_IP6/64 " ip -o -6 addr show dev eth0

check "barrier: both guests are up" barrier up
# The first packets may go before the peer's interface is up: retry.
check "ping $PEER_IP" ping -c 3 -i 0.2 -w 20 "$PEER_IP"
check "ping $PEER_IP6" ping -c 3 -i 0.2 -w 20 "$PEER_IP6"
check_match "the peer's MAC is in the neighbour table" "lladdr 52:54:00:11:00:0" ip neigh show "$PEER_IP"

# A barrier used again is a new one; check both guests wait for each other:
# the one that arrives first must wait for the other's marker.
check "barrier again (same name, next generation)" barrier up
check "barrier one" barrier one
check "barrier two" barrier two

if [ "$GUEST" = b ]; then
	bg iperf3 iperf3 --server --one-off --bind "$MY_IP"
	check "iperf3 server listens" wait_listen 5201
	check "barrier: iperf3 server ready" barrier iperf3
	check "iperf3 server finished" bg_wait iperf3
else
	check "barrier: iperf3 server ready" barrier iperf3
	check_match "iperf3 client, 3 s to $PEER_IP" "receiver" \
		iperf3 --client "$PEER_IP" --time 3
fi
check "barrier: finished" barrier finished
dmesg_clean

finish
