#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The test bed with two guests on one Ethernet link: addresses, ping both
# ways over IPv4 and IPv6, barriers both ways, and a short iperf3 run.
# Then the kernel's in-tree rdma_rxe on both, whatever RXE_IMPL says:
# ib_write_bw and ibv_rc_pingpong across the link, b serving, a
# connecting. The reference for the two-guest tests of our driver.
# As a "reference: theirs" test it runs once more when it fails, the
# bed's own checks with it: they load nothing of ours.
#
# guests: 2
# timeout: 420
# reference: theirs

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

# The in-tree driver on both: the reference.
check "load the in-tree rdma_rxe" load_rxe theirs
check "rdma link add rxe0 type rxe netdev eth0" rxe_add rxe0 eth0
check "GID index 1 is $MY_IP" test "$(gid_index "$MY_IP")" = 1
check "barrier: rxe0 is up on both" barrier rxe-up
check "ping $PEER_IP" ping -c 2 -i 0.2 -w 20 "$PEER_IP"

if [ "$GUEST" = b ]; then
	bg write_bw ib_write_bw -d rxe0 -x 1 -D 2
	check "ib_write_bw server listens" wait_listen 18515
	check "barrier: ib_write_bw server ready" barrier write-bw
	check_match "ib_write_bw server finished" "^ *65536 +[0-9]+" bg_wait write_bw
else
	check "barrier: ib_write_bw server ready" barrier write-bw
	check_match "ib_write_bw client to $PEER_IP for 2 s" "^ *65536 +[0-9]+" \
		ib_write_bw -d rxe0 -x 1 -D 2 "$PEER_IP"
fi
check "barrier: ib_write_bw done" barrier write-bw-done

if [ "$GUEST" = b ]; then
	bg pingpong ibv_rc_pingpong -d rxe0 -g 1 -n 500
	check "ibv_rc_pingpong server listens" wait_listen 18515
	check "barrier: ibv_rc_pingpong server ready" barrier pingpong
	check_match "ibv_rc_pingpong server finished" "500 iters in" bg_wait pingpong
else
	check "barrier: ibv_rc_pingpong server ready" barrier pingpong
	check_match "ibv_rc_pingpong client to $PEER_IP" "500 iters in" \
		ibv_rc_pingpong -d rxe0 -g 1 -n 500 "$PEER_IP"
fi
check "barrier: ibv_rc_pingpong done" barrier pingpong-done

check "rdma link delete rxe0" rxe_del rxe0
check "rmmod rdma_rxe" rmmod rdma_rxe
dmesg_clean

finish
