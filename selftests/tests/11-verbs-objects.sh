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
# whose peer never answers leave the window to those that move data (on
# the first kernel only).
# The memory of a process's CQs, QPs and SRQs charged to its memory
# cgroup, and ENOMEM, not the OOM killer, over the cgroup's limit. A
# process that holds all the AHs it may have (7/8 of the device's) leaves
# ib_cm the rest: rping still connects. A process that exits holding 2000
# QPs and 2000 memory windows waits for no RCU grace period per object.
# Then delete and unload with nothing left behind.
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

TRACE=/sys/kernel/tracing
TEARDOWN_N=2000

# Record each wait for an RCU grace period (ftrace's function tracer on
# synchronize_rcu and its expedited twin), from when py/teardown.py turns
# tracing on, with its objects made, to its exit.
# shellcheck disable=SC2317 # called through check
grace_trace_setup() {
	mountpoint -q "$TRACE" || mount -t tracefs nodev "$TRACE" || return
	echo 0 >"$TRACE/tracing_on" &&
		echo nop >"$TRACE/current_tracer" &&
		echo synchronize_rcu synchronize_rcu_expedited >"$TRACE/set_ftrace_filter" &&
		echo function >"$TRACE/current_tracer" &&
		echo >"$TRACE/trace"
}

# teardown_exit: run py/teardown.py; set TEARDOWN_S, how long its exit
# took, and TEARDOWN_GPS, the grace periods waited meanwhile.
# shellcheck disable=SC2317 # called through check
teardown_exit() {
	local out t0 t1

	out=$(/usr/bin/python3 "$REPO/selftests/py/teardown.py" exit rxe0 \
		"$TEARDOWN_N" "$TRACE/tracing_on") || return
	t1=${EPOCHREALTIME/./}
	echo 0 >"$TRACE/tracing_on"
	echo "$out"
	t0=$(sed -n 's/^exiting at \([0-9]*\)\.\([0-9]*\)$/\1\2/p' <<<"$out")
	[ -n "$t0" ] || return
	# t0 is in ms, t1 in us.
	TEARDOWN_S=$(((t1 / 1000 - t0) / 1000)).$(((t1 / 1000 - t0) % 1000 / 100))
	TEARDOWN_GPS=$(grep -v '^#' "$TRACE/trace" | grep -c 'synchronize_rcu') || true
	echo nop >"$TRACE/current_tracer"
	echo >"$TRACE/set_ftrace_filter"
	echo "exit took ${TEARDOWN_S}s; grace periods waited: $TEARDOWN_GPS"
}

check "load rdma_rxe ($RXE_IMPL)" load_rxe
check "add rxe0 on eth0" rxe_add rxe0 eth0
check "pyverbs: objects, resize, events and bad calls (see checks.log)" \
	/usr/bin/python3 "$REPO/selftests/py/objects.py" rxe0 50
check "pyverbs: memory windows: bind, access, rkey checks, invalidation (see checks.log)" \
	/usr/bin/python3 "$REPO/selftests/py/windows.py" rxe0
check "pyverbs: QP events: COMM_EST once in RTR, SQ_DRAINED, LAST_WQE_REACHED on an SRQ, QP_FATAL on a full CQ (see checks.log)" \
	/usr/bin/python3 "$REPO/selftests/py/events.py" rxe0
# How QPs share the window is the driver's alone, the same on every
# kernel: not again on a second one (RXE_AGAIN).
if [ "${RXE_AGAIN:-0}" != 1 ]; then
	check "pyverbs: QPs stalled on RNR NAKs or an absent peer do not shrink a healthy QP's window (see checks.log)" \
		/usr/bin/python3 "$REPO/selftests/py/share.py" rxe0
fi
check "memory cgroup $MEMCG" memcg_setup
check "pyverbs: rings charged to the creator's memory cgroup, ENOMEM over its limit (see checks.log)" \
	memcg_run
check "pyverbs: a process holding all the AHs it may have leaves rdma_cm the kernel's share (see checks.log)" \
	/usr/bin/python3 "$REPO/selftests/py/reserve.py" rxe0 "$MY_IP"
check "ftrace: record waits for an RCU grace period" grace_trace_setup
check "pyverbs: a process exits holding $TEARDOWN_N QPs and $TEARDOWN_N MWs" \
	teardown_exit
info "its exit took ${TEARDOWN_S:-?} s and waited for ${TEARDOWN_GPS:-?} grace periods"
# Each object waiting for one would be 4000, over a minute here.
check "the exit waited for 2 RCU grace periods at most, not one per object" \
	test "${TEARDOWN_GPS:-99999}" -le 2
check "the exit took under 10 s" \
	awk -v s="${TEARDOWN_S:-999}" 'BEGIN { exit !(s < 10) }'
rxe_teardown rxe0

finish
