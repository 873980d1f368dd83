#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Kernel verbs between our rdma_rxe and the kernel's in-tree one: rxe_ktest
# (selftests/ktest) runs every operation and negative check, every byte
# checked, with ours on guest a and the in-tree module on guest b, in both
# client/server directions; then the drivers are swapped (unloaded and
# loaded again) and it runs again both ways. The tail operation as well:
# our requester asks the in-tree responder for the ACK of a quiet tail by
# sending its last packet again. Whatever RXE_IMPL says.
#
# guests: 2
# timeout: 400
# reference: theirs
# kernels: all

# shellcheck source=selftests/lib/guest.sh
. "$REPO/selftests/lib/guest.sh"
# shellcheck source=selftests/lib/ktest.sh
. "$REPO/selftests/lib/ktest.sh"

KTEST_ARGS=(count=4 "size=1,65536,200003" ops=all,tail)

# run_pair PHASE SERVER_GUEST: one ktest run, SERVER_GUEST serving.
run_pair() {
	local phase=$1 srv=$2

	if [ "$GUEST" = "$srv" ]; then
		check "$phase: ktest server ($impl) listens on $MY_IP" \
			ktest_start role=server addr="$MY_IP"
		check "barrier: $phase server on $srv ready" barrier "$phase-$srv"
		check_match "$phase: ktest server ($impl) on $MY_IP: every session verified" \
			"^ktest: result: PASS" ktest_finish
	else
		check "barrier: $phase server on $srv ready" barrier "$phase-$srv"
		check_match "$phase: ktest client ($impl) to $PEER_IP: every operation passes" \
			"^ktest: result: PASS" \
			ktest_run role=client addr="$PEER_IP" "${KTEST_ARGS[@]}"
	fi
	check "barrier: $phase run with $srv serving done" barrier "$phase-$srv-done"
}

# phase PHASE IMPL_A IMPL_B
phase() {
	local phase=$1

	if [ "$GUEST" = a ]; then impl=$2; else impl=$3; fi
	check "$phase: load rdma_rxe ($impl)" load_rxe "$impl"
	check_match "$phase: the $impl rdma_rxe is the one loaded" \
		"$(if [ "$impl" = ours ]; then echo out-of-tree; else echo in-tree; fi)" \
		modinfo_loaded
	check "$phase: rdma link add rxe0 type rxe netdev eth0" rxe_add rxe0 eth0
	check "barrier: $phase rxe0 up on both" barrier "$phase-up"
	run_pair "$phase" b
	run_pair "$phase" a
	check "$phase: delete rxe0 and unload rdma_rxe ($impl)" unload_rxe
	check "barrier: $phase unloaded on both" barrier "$phase-down"
}

phase ours-a ours theirs
phase swapped theirs ours
dmesg_clean

finish
