#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Payloads lent from the sender's own pages instead of copied
# (rxe_mr_lend_sgl()). That needs a netdev that takes page fragments,
# which the guests' virtio-net over QEMU's UDP socket does not (no
# checksum offload, so no scatter/gather): here the driver binds to a
# VXLAN device over it, a software netdev that takes them (the stack
# copies them into one buffer only for eth0 underneath). Buffers are
# validated both ways, each RC operation family runs (from userspace, and
# from a kernel consumer, whose DMA MR is copied as before), the receiver
# checks every ICRC, and the counters must show that payloads were lent,
# READ responses too, and no packet failed its ICRC.
#
#   rxe-a: rxe0/vx0 10.12.0.1 --- VXLAN 42 over eth0 --- rxe0/vx0 10.12.0.2 :rxe-b
#
# guests: 2
# timeout: 480

# shellcheck source=selftests/lib/guest.sh
. "$REPO/selftests/lib/guest.sh"
# shellcheck source=selftests/lib/traffic.sh
. "$REPO/selftests/lib/traffic.sh"
# shellcheck source=selftests/lib/ktest.sh
. "$REPO/selftests/lib/ktest.sh"

VX_MY=10.12.0.${MY_IP##*.}
VX_PEER=10.12.0.${PEER_IP##*.}

check "load rdma_rxe ($RXE_IMPL)" load_rxe
check "load vxlan" modprobe vxlan
check "vx0: VXLAN 42 to $PEER_IP over eth0" \
	ip link add vx0 type vxlan id 42 remote "$PEER_IP" dstport 4789 dev eth0
check "vx0: address $VX_MY" ip addr add "$VX_MY/24" dev vx0
check "vx0: up" ip link set vx0 up

# From here on the tools meet over the VXLAN addresses.
MY_IP=$VX_MY
PEER_IP=$VX_PEER
check "add rxe0 on vx0" rxe_add rxe0 vx0
check "barrier: rxe0 is up on both guests" barrier up
check "ping $PEER_IP over vx0" ping -c 2 -i 0.2 -w 20 "$PEER_IP"

gidx=$(gid_index "$MY_IP")
# The kernel's rdma_rxe (RXE_IMPL=theirs) copies and has no such counter.
lent0=$(counter lent_pkts)
pair "ibv_rc_pingpong -c, 4 KiB" "$PP_ROW" \
	ibv_rc_pingpong -d rxe0 -g "$gidx" -c -n 200 -s 4096 -m 1024
pair "ibv_ud_pingpong -c, 1 KiB" "$PP_ROW" \
	ibv_ud_pingpong -d rxe0 -g "$gidx" -c -n 200 -s 1024
pair "ib_write_bw 64 KiB" "$BW_ROW" \
	rxe-perftest ib_write_bw -d rxe0 -x "$gidx" -n 300 -F
lent_read=$(counter lent_pkts)
pair "ib_read_bw 64 KiB" "$BW_ROW" \
	rxe-perftest ib_read_bw -d rxe0 -x "$gidx" -n 300 -F
lent_read=$(( $(counter lent_pkts) - ${lent_read:-0} ))
pair "ib_send_bw 2 B to 8 MiB" "^ *8388608 +[0-9]+" \
	rxe-perftest ib_send_bw -d rxe0 -x "$gidx" -a -n 5 -F
# rping's server READs the client's buffer and WRITEs it back; -V checks
# every round's data.
rping_pair "rping -v -V, 4000 B" 4 -V -S 4000
# A kernel consumer on the same device: its sends from the DMA MR (kernel
# virtual addresses, maybe slab memory) must fall back to the copy.
ktest_pair b ktest 4 "every operation passes" count=4 size=4096,65536,200003
info "counters: $(counters)"
if [ "$RXE_IMPL" = ours ]; then
	lent=$(( $(counter lent_pkts) - lent0 ))
	check "payloads were lent ($lent packets)" test "$lent" -gt 0
	# Guest a serves ib_read_bw: its responder sent the READ responses.
	if [ "$GUEST" = a ]; then
		check "READ responses were lent ($lent_read packets)" \
			test "$lent_read" -gt 0
	fi
	# vx0 passes a GSO fraglist on whole, into its own segmentation of
	# the outer packets, which mangles it: no batches to it.
	check "no packet sent in a batch (vx0 has NETIF_F_GSO_FRAGLIST)" \
		test "$(counter batched_pkts)" = 0
fi
check "no packet failed its ICRC" test "$(counter drop_icrc_err)" = 0
check "barrier: traffic done" barrier "done"
check "rdma link delete rxe0" rxe_del rxe0
check "rmmod rdma_rxe" rmmod rdma_rxe
dmesg_clean

finish
