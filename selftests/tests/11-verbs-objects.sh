#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The control-path verbs from userspace, through rdma-core's unchanged rxe
# provider (pyverbs): 50 rounds of every object created and destroyed
# without leaks, resize/modify/query, completion events, and the errno of
# each bad call. Memory windows, type 1 and type 2, on two loopback QPs:
# bind, access, the rkey checks and invalidation. Asynchronous QP events:
# communication established in RTR, SQ drained, last WQE reached on an
# SRQ, and a CQ overrun: CQ_ERR for the CQ, QP_FATAL for its QP. QPs
# whose peer never answers leave the window to those that move data.
# The memory of a process's CQs, QPs and SRQs charged to its memory
# cgroup, and ENOMEM, not the OOM killer, over the cgroup's limit. Then
# delete and unload with nothing left behind.
#
# guests: 1
# timeout: 240
# kernels: all

# shellcheck source=selftests/lib/guest.sh
. "$REPO/selftests/lib/guest.sh"

MEMCG=/sys/fs/cgroup/rxe-memcg

# shellcheck disable=SC2317 # called through check
memcg_setup() {
	mountpoint -q /sys/fs/cgroup || mount -t cgroup2 none /sys/fs/cgroup
	echo +memory >/sys/fs/cgroup/cgroup.subtree_control
	mkdir -p "$MEMCG"
}

# shellcheck disable=SC2317 # called through check
memcg_run() {
	# shellcheck disable=SC2016 # $$ is the inner shell's
	sh -c 'echo $$ >"$1/cgroup.procs" && exec /usr/bin/python3 "$2" rxe0 "$1"' \
		sh "$MEMCG" "$REPO/selftests/py/memcg.py"
}

check "load rdma_rxe ($RXE_IMPL)" load_rxe
check "add rxe0 on eth0" rxe_add rxe0 eth0
check "pyverbs: objects, resize, events and bad calls (see checks.log)" \
	/usr/bin/python3 "$REPO/selftests/py/objects.py" rxe0 50
check "pyverbs: memory windows: bind, access, rkey checks, invalidation (see checks.log)" \
	/usr/bin/python3 "$REPO/selftests/py/windows.py" rxe0
check "pyverbs: QP events: COMM_EST once in RTR, SQ_DRAINED, LAST_WQE_REACHED on an SRQ, QP_FATAL on a full CQ (see checks.log)" \
	/usr/bin/python3 "$REPO/selftests/py/events.py" rxe0
check "pyverbs: QPs stalled on RNR NAKs or an absent peer do not shrink a healthy QP's window (see checks.log)" \
	/usr/bin/python3 "$REPO/selftests/py/share.py" rxe0
check "memory cgroup $MEMCG" memcg_setup
check "pyverbs: rings charged to the creator's memory cgroup, ENOMEM over its limit (see checks.log)" \
	memcg_run
rxe_teardown rxe0

finish
