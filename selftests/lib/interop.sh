# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The body of the interop tests (22-interop-theirs-serves,
# 23-interop-ours-serves): each guest loads the driver RXE_IMPL_A or
# RXE_IMPL_B names for it, says which one it runs, and the two run the
# whole list of 21-traffic-two against each other. Sourced by a test that
# has set RXE_IMPL_A or RXE_IMPL_B.

# shellcheck source=selftests/lib/guest.sh
. "$REPO/selftests/lib/guest.sh"
# shellcheck source=selftests/lib/traffic.sh
. "$REPO/selftests/lib/traffic.sh"

if [ "$RXE_IMPL" = theirs ]; then
	check "load the in-tree rdma_rxe" load_rxe_intree
else
	check "load rdma_rxe (ours)" load_rxe ours
fi
check_match "this guest runs $RXE_IMPL" "$([ "$RXE_IMPL" = ours ] && echo out-of-tree || echo in-tree)" modinfo_loaded
check "add rxe0 on eth0" rxe_add rxe0 eth0
check "barrier: rxe0 is up on both guests" barrier up
check "ping $PEER_IP" ping -c 2 -i 0.2 -w 20 "$PEER_IP"
traffic_list
[ "$RXE_IMPL" = theirs ] || info "counters: $(counters)"
check "barrier: traffic done" barrier "done"
check "rdma link delete rxe0" rxe_del rxe0
check "rmmod rdma_rxe" rmmod rdma_rxe
dmesg_clean

finish
