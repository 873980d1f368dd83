#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run one script in one or two test guests, or get a shell in one.
#
#   selftests/vm.sh [--two] [--timeout N] [--out DIR] SCRIPT
#   selftests/vm.sh --shell [SCRIPT]
#
# SCRIPT runs inside each guest as the tests do (see README.md); its output
# is shown as it comes. --shell boots one guest with an interactive shell on
# the console instead (the test environment is set; Ctrl-a x kills QEMU).
# Does not build the module: run `make` first.

set -euo pipefail

. "$(dirname "$0")/lib/common.sh"
. "$SELFTESTS/lib/kernel.sh"
. "$SELFTESTS/lib/vm.sh"

usage() {
	sed -n '4,13s/^# \{0,1\}//p' "$0"
	exit "${1:-2}"
}

n=1 timeout=600 out='' script=''
while [ $# -gt 0 ]; do
	case $1 in
	--two) n=2 ;;
	--shell) export RXE_VM_SHELL=1 ;;
	--timeout) timeout=$2; shift ;;
	--out) out=$2; shift ;;
	-h|--help) usage 0 ;;
	-*) usage ;;
	*) script=$1 ;;
	esac
	shift
done
if [ "${RXE_VM_SHELL:-0}" = 1 ]; then
	n=1
	timeout=999999
	script=${script:-$SELFTESTS/lib/idle.sh}
fi
[ -n "$script" ] || usage
[ -r "$script" ] || die "$script: not found"

trap vm_cleanup EXIT
trap 'exit 130' INT TERM
kernel_prepare
out=${out:-$SELFTESTS/results/vm-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
# The helpers go where the guests see them: the host's root, not a /tmp
# (the guests have their own) or a path relative to here.
build_tools "$SELFTESTS/results/vm-tools" ||
	say "vm: not all test helpers built (logs: $SELFTESTS/results/vm-tools/)"
start=$SECONDS
rc=0
VM_FOLLOW=1 vm_run "$out" "$n" "$timeout" "$script" || rc=$?
echo
if [ "$rc" = 0 ]; then
	say "vm: ok ($((SECONDS - start))s), logs in $out"
else
	say "vm: FAILED ($((SECONDS - start))s): $VM_REASON"
	say "vm: logs in $out"
fi
exit "$rc"
