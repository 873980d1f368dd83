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
# IPv6 the other way round. Then unsignaled WRITEs posted one call each
# and a quiet pause: with our driver on the client, the ones sent while
# the first one's ACK was on its way ask for none, and the driver gets
# them acknowledged by sending their last packet again, asking
# (ack_solicited). That it sends that packet alone, not the tail, test 42
# shows on the wire, where the peer's timing is the test's own.
# Then the server goes away in the middle of a run: the client must fail,
# not hang, and both modules must unload.
#
# Not on the second kernel: 30 runs the same kernel verbs and rdma_cm
# there on one guest, and 32 across the wire against its in-tree driver.
#
# guests: 2
# timeout: 360

# shellcheck source=selftests/lib/guest.sh
. "$REPO/selftests/lib/guest.sh"
# shellcheck source=selftests/lib/ktest.sh
. "$REPO/selftests/lib/ktest.sh"
# shellcheck source=selftests/lib/traffic.sh
. "$REPO/selftests/lib/traffic.sh"

check "load rdma_rxe ($RXE_IMPL)" load_rxe
check "rdma link add rxe0 type rxe netdev eth0" rxe_add rxe0 eth0
check "barrier: rxe0 is up on both" barrier rxe-up
check "ping $PEER_IP" ping -c 2 -i 0.2 -w 20 "$PEER_IP"

# IPv4: b serves, a connects.
ktest_pair b ktest4 4 "every operation passes for sizes 1 B to 1 MiB" \
	count=6 size=1,4096,65536,200003,1048576

# IPv6: a serves, b connects.
ktest_pair a ktest6 6 "every operation passes" count=4 size=8193,65536

# The unasked tail: b serves, a posts 8 unsignaled WRITEs of 256 B per
# iteration, then pauses 300 ms (longer than the retry timer's 10 ms at
# least) before the SEND that has b check every byte.
counted=
if [ "$GUEST" = a ] && [ "$RXE_IMPL" = ours ]; then
	counted=1
	sol0=$(counter ack_solicited)
fi
ktest_pair b ktail 4 "unsignaled WRITEs, one call each, then quiet: every byte arrives" \
	ops=tail count=4 size=2048 tail_ms=300
if [ -n "$counted" ]; then
	sol=$(( $(counter ack_solicited) - sol0 ))
	# Once per tail at most, unless this guest stalls in the middle of
	# posting one, after the first WRITE's ACK: the timer then asks for
	# the part posted so far, and again at the end. Test 42 counts one
	# solicit exactly, on a wire whose timing is its own.
	check "4 quiet tails: the last packet went again to ask in 1 to 4 of them, or twice in some (ack_solicited +$sol, 1 to 8)" \
		test "$sol" -ge 1 -a "$sol" -le 8
fi

# The server disappears in the middle of a run: its rmmod must work at
# once, and the client must fail loudly within its step timeout, not
# hang, and unload.
if [ "$GUEST" = b ]; then
	check "ktest server listens on $MY_IP for a run it will abandon" \
		ktest_start role=server addr="$MY_IP"
	check "barrier: ktest server ready" barrier abort
	check "the client connects and starts its run" \
		ktest_wait_report "session main: connection from"
	sleep 1
	check "rmmod rxe_ktest on the server in the middle of the run" \
		rmmod rxe_ktest
else
	check "barrier: ktest server ready" barrier abort
	check "ktest client starts a long run" \
		ktest_start role=client addr="$PEER_IP" count=100000 size=65536 ops=send timeout_ms=8000
	check "the client fails loudly when the server goes away mid-run, and unloads" \
		ktest_finish_fails "^ktest: FAIL .*(disconnected|no completion|status|no message)"
fi
check "barrier: abandoned run done" barrier abort-done

check "rdma link delete rxe0" rxe_del rxe0
check "rmmod rdma_rxe" rmmod rdma_rxe
dmesg_clean

finish
