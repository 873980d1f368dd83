#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Kernel verbs across the wire: rxe_ktest (selftests/ktest) as a server on
# guest b and a client on guest a, our rdma_rxe on both (RXE_IMPL_A/B pick
# another), every operation with every byte checked: SEND/RECV, a SEND
# burst posted from completion handlers, RDMA WRITE, RDMA READ, fast
# registration with WRITE/READ through the new rkey and LOCAL_INV, SEND
# with invalidate, and the negative checks (IB_WC_REM_ACCESS_ERR through
# an invalidated, replaced or read-only rkey). Once over IPv4, once over
# IPv6 the other way round.
#
# guests: 2
# timeout: 360

# shellcheck source=selftests/lib/guest.sh
. "$REPO/selftests/lib/guest.sh"
# shellcheck source=selftests/lib/ktest.sh
. "$REPO/selftests/lib/ktest.sh"

check "load rdma_rxe ($RXE_IMPL)" load_rxe
check "rdma link add rxe0 type rxe netdev eth0" rxe_add rxe0 eth0
check "barrier: rxe0 is up on both" barrier rxe-up
check "ping $PEER_IP" ping -c 2 -i 0.2 -w 20 "$PEER_IP"

# IPv4: b serves, a connects.
if [ "$GUEST" = b ]; then
	check "ktest server listens on $MY_IP" ktest_start role=server addr="$MY_IP"
	check "barrier: ktest server ready" barrier ktest4
	check_match "ktest server on $MY_IP: every session verified and ended as expected" \
		"^ktest: result: PASS" ktest_finish
else
	check "barrier: ktest server ready" barrier ktest4
	check_match "ktest client to $PEER_IP: every operation passes for sizes 1 B to 1 MiB" \
		"^ktest: result: PASS" \
		ktest_run role=client addr="$PEER_IP" count=6 size=1,4096,65536,200003,1048576
fi
check "barrier: IPv4 run done" barrier ktest4-done

# IPv6: a serves, b connects.
if [ "$GUEST" = a ]; then
	check "ktest server listens on $MY_IP6" ktest_start role=server addr="$MY_IP6"
	check "barrier: ktest server ready" barrier ktest6
	check_match "ktest server on $MY_IP6: every session verified and ended as expected" \
		"^ktest: result: PASS" ktest_finish
else
	check "barrier: ktest server ready" barrier ktest6
	check_match "ktest client to $PEER_IP6: every operation passes" \
		"^ktest: result: PASS" \
		ktest_run role=client addr="$PEER_IP6" count=4 size=8193,65536
fi
check "barrier: IPv6 run done" barrier ktest6-done

check "rdma link delete rxe0" rxe_del rxe0
check "rmmod rdma_rxe" rmmod rdma_rxe
dmesg_clean

finish
