#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# READs rewound while the answers to their first send still arrive. Small
# READs with 128 outstanding keep the requester's window full; a loop that
# reads every QP's state on the requester makes its retry timer fire now
# and then while responses are only late. The requester then sends again
# from the oldest unanswered READ while the first answers keep coming, and
# must neither number a READ with the PSNs of one that an answer just
# finished nor let an answer acknowledge READs it has yet to send again.
# Either mistake ran the QP out of retries with nothing lost (in 4 of 5
# runs of this load before both were fixed).
#
# Then long READs from rxe_ktest (200003 B: four READ requests each) with
# fast registration, under the same QP-state loop. A timer that fired
# while answers were already queued rewound the requester, and those
# answers then took comp.psn past its cursor: the window compared that
# negative distance as unsigned, took itself for full, and the READ hung
# for good with nothing outstanding to run the timer. That hit about one
# round in six of this load. Since the completer takes the queued answers
# before it acts on the timer, this load no longer brings the state
# about: with the window check made unsigned again, 50 rounds passed. The
# rounds stay as a load on long READs rewound under fast registration.
#
#   rxe-a: rxe0/eth0 (responder) <--- one link ---> rxe0/eth0 (requester) :rxe-b
#
# guests: 2
# timeout: 420

# shellcheck source=selftests/lib/guest.sh
. "$REPO/selftests/lib/guest.sh"
# shellcheck source=selftests/lib/traffic.sh
. "$REPO/selftests/lib/traffic.sh"
# shellcheck source=selftests/lib/ktest.sh
. "$REPO/selftests/lib/ktest.sh"

# state_loop: read every QP's state, over and over, until killed.
state_loop() {
	while :; do
		rdma res show qp -dd >/dev/null 2>&1 || true
		sleep 0.05
	done
}

# with_state_loop CMD...: run CMD with state_loop running on the
# requester (b) meanwhile.
with_state_loop() {
	local loop=

	if [ "$GUEST" = b ]; then
		state_loop &
		loop=$!
	fi
	"$@"
	if [ -n "$loop" ]; then
		kill "$loop" 2>/dev/null || true
		wait "$loop" 2>/dev/null || true
	fi
}

check "load rdma_rxe ($RXE_IMPL)" load_rxe
check "add rxe0 on eth0" rxe_add rxe0 eth0
check "barrier: rxe0 is up on both guests" barrier up
check "ping $PEER_IP" ping -c 2 -i 0.2 -w 20 "$PEER_IP"

if [ "$RXE_IMPL" = ours ]; then
	rewinds0=$(retries)
	gaps0=$(counter completer_retry_err)
	dups0=$(counter duplicate_request)
fi
for run in 1 2 3 4; do
	with_state_loop pair "run $run: ib_read_bw 64 B, 128 outstanding, QP state read meanwhile" \
		"$BW_ROW" rxe-perftest ib_read_bw -d rxe0 -x 1 -F -m 1024 -s 64 -D 4
done
if [ "$RXE_IMPL" = ours ]; then
	dups1=$(counter duplicate_request)
fi
for run in 1 2 3 4 5; do
	with_state_loop ktest_pair a "kread$run" 4 \
		"round $run: every long READ completes, every byte checked" \
		ops=read,frmr count=12 size=65536,200003
done
if [ "$RXE_IMPL" = ours ]; then
	check "no QP ran out of retries" test "$(counter retry_exceeded_err)" = 0
	# How often the timer rewound the requester: the runs are worth
	# something only when it did (in 24 of 30 runs here).
	info "retry timer fired $(( $(retries) - rewinds0 )) times"
	# The other retries: after responses lost in the host's buffers (a
	# gap, and a READ asks again for everything after it) or a NAK.
	info "gaps and NAKs sent again $(( $(counter completer_retry_err) - gaps0 )) times"
	# On the responder (a): requests it had answered, asked again.
	info "duplicate requests answered: $(( dups1 - dups0 )) small READs," \
		"$(( $(counter duplicate_request) - dups1 )) long READs"
fi

check "barrier: traffic done" barrier "done"
check "rdma link delete rxe0" rxe_del rxe0
check "rmmod rdma_rxe" rmmod rdma_rxe
dmesg_clean

finish
