#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The main job, end to end: build rdma_rxe.ko, boot a guest, load it, add
# rxe0 on eth0, show the device, its port and GID table, and move real
# RDMA traffic (ib_write_bw and rping) over loopback.
#
#   selftests/demo.sh [--two] [--no-build]
#
#   --two       two guests: the traffic goes between them over the link
#   --no-build  use the rdma_rxe.ko already built
#
# RXE_IMPL=theirs shows the kernel's own rdma_rxe instead, for comparison.
# Everything the guests print is shown here; the logs stay in
# selftests/results/demo-<timestamp>/.

set -euo pipefail

. "$(dirname "$0")/lib/common.sh"
. "$SELFTESTS/lib/kernel.sh"
. "$SELFTESTS/lib/vm.sh"

n=1 build=1
while [ $# -gt 0 ]; do
	case $1 in
	--two) n=2 ;;
	--no-build) build=0 ;;
	-h | --help) sed -n '4,16s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) die "unknown argument '$1' (try --help)" ;;
	esac
	shift
done
export RXE_IMPL=${RXE_IMPL:-ours}

trap vm_cleanup EXIT
trap 'exit 130' INT TERM
out=$SELFTESTS/results/demo-$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"

ensure_setup
say "demo: preparing the guest kernel"
kernel_prepare || die "cannot prepare the guest kernel"
say "demo: guest kernel $KVER"
if [ "$build" = 1 ]; then
	say "demo: make -C $REPO KDIR=/usr/src/linux-headers-$KVER"
	if ! build_module "$out/build.log"; then
		tail_indented "$out/build.log" 40
		die "the build failed (log: $out/build.log)"
	fi
	say "demo: built $REPO/rdma_rxe.ko"
fi
say "demo: booting $n guest(s) under ${RXE_VM_ACCEL:-tcg} with RXE_IMPL=$RXE_IMPL"
start=$SECONDS
rc=0
VM_FOLLOW=1 vm_run "$out" "$n" 600 "$SELFTESTS/lib/demo-guest.sh" || rc=$?
say ""
if [ "$rc" = 0 ]; then
	say "demo: ok ($((SECONDS - start))s); logs in ${out#"$REPO"/}/"
else
	say "demo: FAILED ($((SECONDS - start))s): $VM_REASON"
	say "demo: logs in ${out#"$REPO"/}/ (console.log has the kernel's log)"
fi
exit "$rc"
