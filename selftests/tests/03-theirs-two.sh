#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel's in-tree rdma_rxe on two guests, whatever RXE_IMPL says:
# ib_write_bw and ibv_rc_pingpong across the link, b serving, a connecting.
# The reference for the two-guest tests of our driver.
#
# guests: 2
# timeout: 360
# reference: theirs

# shellcheck source=selftests/lib/guest.sh
. "$REPO/selftests/lib/guest.sh"

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
