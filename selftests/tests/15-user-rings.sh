#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A process that refills its work queues while the kernel flushes them.
# The producer index of a user QP's send and receive rings is the
# process's to write; lib/rxe-ring.c keeps each ring full from a second
# thread (the producer one slot behind the kernel's consumer index) while
# the QP goes to the error state, with CQs of one entry that overflow.
# The flush must take what the ring held and stop, not follow the
# producer for as long as the process likes with bottom halves off, nor
# schedule itself again for each completion that finds its CQ full. A
# doorbell rung in a loop from other threads meanwhile asks for one
# flush each: no run of the send task, in a doorbell's write() or in a
# kworker, may keep bottom halves off for long (ftrace times them). The
# kernel log
# must stay clean (no soft lockup, no RCU stall), and the QP and CQs must
# go away.
#
# guests: 1
# timeout: 240

# shellcheck source=selftests/lib/guest.sh
. "$REPO/selftests/lib/guest.sh"

RING_BIN=${RXE_TOOLS:-}/rxe-ring

TRACE=/sys/kernel/tracing
LONG_US=100000

# Record every run of a QP's task (rxe_task_do_run(): one stretch with
# bottom halves off, in a doorbell's write() or a kworker) that lasts
# LONG_US or more: function_graph records only those past tracing_thresh.
# shellcheck disable=SC2317 # called through check
long_runs_start() {
	mountpoint -q "$TRACE" || mount -t tracefs nodev "$TRACE" || return
	echo 0 >"$TRACE/tracing_on" &&
		echo nop >"$TRACE/current_tracer" &&
		echo rxe_task_do_run >"$TRACE/set_ftrace_filter" &&
		echo "$LONG_US" >"$TRACE/tracing_thresh" &&
		echo function_graph >"$TRACE/current_tracer" &&
		echo >"$TRACE/trace" &&
		echo 1 >"$TRACE/tracing_on"
}

# shellcheck disable=SC2317 # called through check
long_runs_none() {
	local runs

	echo 0 >"$TRACE/tracing_on"
	runs=$(grep -v '^#' "$TRACE/trace" | grep rxe_task_do_run)
	echo nop >"$TRACE/current_tracer"
	echo 0 >"$TRACE/tracing_thresh"
	echo >"$TRACE/set_ftrace_filter"
	[ -z "$runs" ] && return 0
	echo "runs of a task with bottom halves off for $((LONG_US / 1000)) ms or more:"
	echo "$runs" | head -n 20
	return 1
}

check "load rdma_rxe ($RXE_IMPL)" load_rxe
check "add rxe0 on eth0" rxe_add rxe0 eth0
check "lib/rxe-ring.c was built" have_tool rxe-ring
check "ftrace: time each run of a task (function_graph, tracing_thresh)" \
	long_runs_start
info "this guest has $(nproc) CPUs: the thread refills while the kernel flushes"
check "rxe-ring: flushes bounded while the rings are refilled (see checks.log)" \
	"$RING_BIN" --dev rxe0
check "no run of a task kept bottom halves off for $((LONG_US / 1000)) ms" \
	long_runs_none
rxe_teardown rxe0

finish
