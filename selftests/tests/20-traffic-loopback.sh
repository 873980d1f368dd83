#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Real applications over one device, server and client on the guest's own
# addresses (the driver loops the packets back): the verbs pingpongs with
# validated buffers, every perftest family, rdma_cm over IPv4 and IPv6.
#
# guests: 1
# timeout: 420

# shellcheck source=selftests/lib/guest.sh
. "$REPO/selftests/lib/guest.sh"
# shellcheck source=selftests/lib/traffic.sh
. "$REPO/selftests/lib/traffic.sh"

check "load rdma_rxe ($RXE_IMPL)" load_rxe
check "add rxe0 on eth0" rxe_add rxe0 eth0
traffic_list
info "counters: $(counters)"
check "rdma link delete rxe0" rxe_del rxe0
check "rmmod rdma_rxe" rmmod rdma_rxe
dmesg_clean

finish
