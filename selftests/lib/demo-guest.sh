#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The guest side of demo.sh: load the driver, add rxe0, show it, move
# traffic (over loopback with one guest, between the guests with two).

# shellcheck source=selftests/lib/guest.sh
. "$REPO/selftests/lib/guest.sh"

CHECK_TIMEOUT=${RXE_DEMO_TIMEOUT:-60}

info "guest $GUEST ($MY_IP), kernel $(uname -r), driver: $RXE_IMPL"
show load_rxe
show rdma link add rxe0 type rxe netdev eth0
show rxe_wait_ready rxe0
show rdma link
show ibv_devinfo -v -d rxe0
info "GID table of rxe0 (index, GID, type, netdev):"
show show_gids rxe0

if ! grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state 2>/dev/null; then
	fail "rxe0 is not ACTIVE: no traffic"
	finish
fi

if [ "$NGUESTS" = 1 ]; then
	info "ib_write_bw over loopback: server and client on $MY_IP"
	bg write_bw ib_write_bw -d rxe0 -x 1 -D 3
	show wait_listen 18515
	show ib_write_bw -d rxe0 -x 1 -D 3 "$MY_IP"
	info "ib_write_bw server:"
	show bg_wait write_bw

	info "rping over loopback: server and client on $MY_IP"
	bg rping rping -s -a "$MY_IP" -v -C 5
	show wait_cm_listen 7174
	show rping -c -a "$MY_IP" -v -C 5
	info "rping server:"
	show bg_wait rping
elif [ "$GUEST" = b ]; then
	info "ib_write_bw server on $MY_IP"
	bg write_bw ib_write_bw -d rxe0 -x 1 -D 3
	show wait_listen 18515
	show barrier write-bw
	show bg_wait write_bw
	info "rping server on $MY_IP"
	bg rping rping -s -a "$MY_IP" -v -C 5
	show wait_cm_listen 7174
	show barrier rping
	show bg_wait rping
else
	show barrier write-bw
	info "ib_write_bw client to $PEER_IP"
	show ib_write_bw -d rxe0 -x 1 -D 3 "$PEER_IP"
	show barrier rping
	info "rping client to $PEER_IP"
	show rping -c -a "$PEER_IP" -v -C 5
fi

show rdma link delete rxe0
dmesg_clean
finish
