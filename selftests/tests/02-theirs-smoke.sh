#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel's in-tree rdma_rxe on one guest, whatever RXE_IMPL says: add
# rxe0, check the port and GID table, move real traffic over loopback with
# ib_write_bw, delete it and unload. Proves the bed can run RDMA traffic
# and is the reference the tests of our driver are judged against.
#
# guests: 1
# timeout: 300
# reference: theirs

# shellcheck source=selftests/lib/guest.sh
. "$REPO/selftests/lib/guest.sh"

check "load the in-tree rdma_rxe" load_rxe theirs
check "rdma link add rxe0 type rxe netdev eth0" rxe_add rxe0 eth0
check_match "rdma link shows rxe0 ACTIVE on eth0" "rxe0/1 state ACTIVE .*netdev eth0" rdma link show
check_match "ibv_devinfo -d rxe0: PORT_ACTIVE" "PORT_ACTIVE" ibv_devinfo -d rxe0
check "GID index 1 is $MY_IP" test "$(gid_index "$MY_IP")" = 1
check_match "GID index 1 is RoCE v2" "RoCE v2" \
	cat /sys/class/infiniband/rxe0/ports/1/gid_attrs/types/1

bg server ib_write_bw -d rxe0 -x 1 -D 2
check "ib_write_bw server listens" wait_listen 18515
check_match "ib_write_bw client to $MY_IP for 2 s" "^ *65536 +[0-9]+" \
	ib_write_bw -d rxe0 -x 1 -D 2 "$MY_IP"
check_match "ib_write_bw server finished" "^ *65536 +[0-9]+" bg_wait server

check "rdma link delete rxe0" rxe_del rxe0
check "rmmod rdma_rxe" rmmod rdma_rxe
dmesg_clean

finish
