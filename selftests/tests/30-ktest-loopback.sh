#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Kernel verbs on one guest: rxe_ktest (selftests/ktest) connects two
# kernel RC QPs through rdma_cm over the guest's own address and runs
# SEND/RECV, a SEND burst posted from completion handlers, RDMA WRITE,
# RDMA READ, fast registration with WRITE/READ through the new rkey and
# LOCAL_INV, SEND with invalidate, and the negative checks (access through
# an invalidated, replaced or read-only rkey fails with
# IB_WC_REM_ACCESS_ERR), checking every byte. Then the same over IPv6
# with CQs polled from a workqueue, with CQs polled by the thread itself,
# once with a damaged payload, which must fail, and once with rxe0
# deleted in the middle of the run, which must fail but not hang. On
# kernels with ATOMIC WRITE (6.2 on), kernel ATOMIC WRITEs too.
#
# guests: 1
# timeout: 300
# kernels: all

# shellcheck source=selftests/lib/guest.sh
. "$REPO/selftests/lib/guest.sh"
# shellcheck source=selftests/lib/ktest.sh
. "$REPO/selftests/lib/ktest.sh"

check "load rdma_rxe ($RXE_IMPL)" load_rxe
check "rdma link add rxe0 type rxe netdev eth0" rxe_add rxe0 eth0

check_match "ktest loopback over $MY_IP (CQs in softirq): every operation passes for sizes 1 B to 2 MiB (512-page fast registrations)" \
	"^ktest: result: PASS" \
	ktest_run role=loop addr="$MY_IP" count=6 size=1,4096,65536,200003,2097152
check_match "ktest loopback over $MY_IP6 (CQs in a workqueue): every operation passes" \
	"^ktest: result: PASS" \
	ktest_run role=loop addr="$MY_IP6" count=5 size=8193,65536 poll=workqueue
check_match "ktest loopback with CQs polled by the thread (ib_poll_cq): every operation passes" \
	"^ktest: result: PASS" \
	ktest_run role=loop addr="$MY_IP" count=5 size=12345 poll=direct
check "ktest fails, naming the byte, when a payload is damaged (iteration 3), and unloads after" \
	ktest_detects role=loop addr="$MY_IP" count=5 size=65536 corrupt=3
if kernel_has_mpe; then
	check_match "ktest ATOMIC WRITE: 16 x 8 bytes by lkey and inline, each checked by the server; misaligned, short and FLUSH refused at post" \
		"^ktest: result: PASS" \
		ktest_run role=loop addr="$MY_IP" count=16 ops=awrite
else
	info "no ATOMIC WRITE in the kernel's verbs before 6.2: not run"
fi


# The device goes away under a running consumer: the delete must return,
# and ktest must fail loudly and unload.
check "ktest starts a long loopback run" \
	ktest_start role=loop addr="$MY_IP" count=100000 size=65536 ops=send timeout_ms=8000
check "the run has started" ktest_wait_report "session main: connection from"
check "rdma link delete rxe0 in the middle of the run returns" \
	timeout 60 rdma link delete rxe0
check "ktest fails loudly when its device goes away, and unloads" \
	ktest_finish_fails "^ktest: FAIL .*(disconnected|device went away|device is going away)"
check "rmmod rdma_rxe" rmmod rdma_rxe
dmesg_clean

finish
