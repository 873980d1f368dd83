#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the guest test suite: build the module, fetch the guest kernel (once,
# cached), then boot one or two QEMU guests per test in selftests/tests/.
#
#   selftests/run.sh [options] [PATTERN...]
#
#   PATTERN        run only the tests whose name contains it (10-device,
#                  theirs, ...) or that file
#   --no-build     do not run make (test the rdma_rxe.ko already built)
#   --list         list the tests with their guests and timeouts
#   -v, --verbose  print every check's output, not only the failed ones'
#
# Environment: RXE_IMPL=theirs runs the tests against the kernel's own
# rdma_rxe (RXE_IMPL_A / RXE_IMPL_B per guest), RXE_KO another module file,
# RXE_KABI / RXE_KSUITE another guest kernel, RXE_VM_* the guests (see
# lib/vm.sh). Logs go to selftests/results/<timestamp>/ (and results/latest).
# Prints "PASS name (Ns)" or "FAIL name (Ns): why" for each, ends with
# "N passed, N failed" and exits non-zero when anything failed. A test
# headed "# reference: theirs" (it runs the kernel's own rdma_rxe) that
# fails prints "RETRY name" with why and is run once more.

set -euo pipefail

. "$(dirname "$0")/lib/common.sh"
. "$SELFTESTS/lib/kernel.sh"
. "$SELFTESTS/lib/vm.sh"

usage() {
	sed -n '4,21s/^# \{0,1\}//p' "$0"
	exit "${1:-2}"
}

build=1 list=0 patterns=()
while [ $# -gt 0 ]; do
	case $1 in
	--no-build) build=0 ;;
	--list) list=1 ;;
	-v | --verbose) export RXE_VERBOSE=1 ;;
	-h | --help) usage 0 ;;
	-*) usage ;;
	*) patterns+=("$1") ;;
	esac
	shift
done

case ${RXE_IMPL:=ours} in
ours | theirs) export RXE_IMPL ;;
*) die "RXE_IMPL must be ours or theirs, not '$RXE_IMPL'" ;;
esac

tests=()
for t in "$SELFTESTS"/tests/*.sh; do
	name=$(basename "$t" .sh)
	if [ "${#patterns[@]}" = 0 ]; then
		tests+=("$t")
		continue
	fi
	for p in "${patterns[@]}"; do
		if [[ $name == *"${p%.sh}"* ]] || [ "$(realpath "$p" 2>/dev/null)" = "$t" ]; then
			tests+=("$t")
			break
		fi
	done
done
[ "${#tests[@]}" != 0 ] || die "no test matches: ${patterns[*]}"

if [ "$list" = 1 ]; then
	for t in "${tests[@]}"; do
		printf '%-32s guests: %s  timeout: %ss\n' "$(basename "$t" .sh)" \
			"$(vm_header "$t" guests)" "$(vm_header "$t" timeout)"
	done
	exit 0
fi

passed=0
failed=0
failures=()
results=$SELFTESTS/results/$(date +%Y%m%d-%H%M%S)
mkdir -p "$results"
ln -sfn "$(basename "$results")" "$SELFTESTS/results/latest"
rel=${results#"$REPO"/}

trap vm_cleanup EXIT
trap 'exit 130' INT TERM

# Print a line to the terminal and to results/summary.txt.
report() {
	say "$*" | tee -a "$results/summary.txt"
}

pass() {
	passed=$((passed + 1))
	report "PASS $1 ($2s${3:-})"
}

failure() {
	failed=$((failed + 1))
	failures+=("$1")
	report "FAIL $1 ($2s): $3"
}

finish_run() {
	[ "$failed" = 0 ] || report "failed: ${failures[*]}"
	report "logs: $rel/"
	report "$passed passed, $failed failed"
	[ "$failed" = 0 ] || exit 1
	exit 0
}

ensure_setup
say "rxe selftests: RXE_IMPL=$RXE_IMPL, logs in $rel/"

start=$SECONDS
if ! kernel_prepare >"$results/kernel.log" 2>&1; then
	failure kernel "$((SECONDS - start))" "cannot prepare the guest kernel"
	tail_indented "$results/kernel.log"
	finish_run
fi
say "guest kernel $KVER ($((SECONDS - start))s)"
guest_debs_prepare >>"$results/kernel.log" 2>&1 ||
	say "no guest packages ($GUEST_DEBS): tests that need them fail (log: $rel/kernel.log)"

if [ "$build" = 1 ]; then
	start=$SECONDS
	if build_module "$results/build.log"; then
		pass build "$((SECONDS - start))"
	else
		failure build "$((SECONDS - start))" "make failed (log: $rel/build.log)"
		tail_indented "$results/build.log" 40
	fi
	# The other kernels the module supports are not booted, but must build.
	for kdir in $(other_kdirs); do
		start=$SECONDS
		krel=${kdir#/usr/src/linux-headers-}
		if build_elsewhere "$kdir" "$results/build-$krel.log"; then
			pass "build-$krel" "$((SECONDS - start))"
		else
			failure "build-$krel" "$((SECONDS - start))" \
				"W=1 build against $kdir failed (log: $rel/build-$krel.log)"
			tail_indented "$results/build-$krel.log" 40
		fi
	done
fi

# Say why the run in $1 failed: for each guest that failed, its failed
# checks (the last lines of each one's output: perftest and friends print
# a page of banner first and the error last), how the test ended, and for
# a timeout the blocked tasks and the QPs' state.
explain() {
	local out=$1 g
	for g in a b; do
		[ -d "$out/$g" ] || continue
		[ "$(cat "$out/$g/status" 2>/dev/null)" != 0 ] || continue
		if [ -s "$out/$g/test.log" ]; then
			say "    guest $g, failed checks (last lines of each):"
			awk -v n=12 '
				function flush(i, from) {
					if (!p) return
					from = k > n ? k - n + 1 : 1
					if (from > 1) print "    [" from - 1 " lines before]"
					for (i = from; i <= k; i++) print buf[i]
					p = 0
				}
				/^not ok - / { flush(); print; p = 1; k = 0; next }
				/^(ok - |# )/ { flush(); next }
				p { buf[++k] = $0 }
				END { flush() }' "$out/$g/test.log" |
				head -n 60 | sed 's/^/    | /'
			say "    guest $g, end of test.log:"
			tail_indented "$out/$g/test.log" 6
			if grep -q 'timed out' "$out/$g/reason" 2>/dev/null; then
				say "    guest $g, end of dmesg.log (blocked tasks):"
				tail_indented "$out/$g/dmesg.log" 40
				if [ -s "$out/$g/rdma.log" ]; then
					say "    guest $g, rdma.log (QPs and counters):"
					tail_indented "$out/$g/rdma.log" 40
				fi
			fi
		else
			say "    guest $g console.log, last lines:"
			tail_indented "$out/$g/console.log" 25
		fi
	done
}

for t in "${tests[@]}"; do
	name=$(basename "$t" .sh)
	nguests=$(vm_header "$t" guests)
	timeout=$(vm_header "$t" timeout)
	out=$results/$name
	mkdir -p "$out"
	start=$SECONDS
	if vm_run "$out" "${nguests:-1}" "${timeout:-300}" "$t"; then
		pass "$name" "$((SECONDS - start))"
		continue
	fi
	# A test that runs the kernel's own rdma_rxe ("# reference: theirs")
	# gets a second run: the 6.1 driver now and then hangs or fails a
	# transfer under TCG on its own (seen in CI in 02-theirs-smoke, where
	# nothing of ours is loaded). The first failure is still printed in
	# full and its logs kept in <test>.first/; a test of ours alone is
	# never run twice.
	if [ "$(vm_header "$t" reference)" = theirs ]; then
		report "RETRY $name ($((SECONDS - start))s): $VM_REASON"
		say "    logs: $rel/$name.first/"
		explain "$out"
		mv "$out" "$out.first"
		mkdir -p "$out"
		start=$SECONDS
		if vm_run "$out" "${nguests:-1}" "${timeout:-300}" "$t"; then
			pass "$name" "$((SECONDS - start))" ", second run"
			continue
		fi
	fi
	failure "$name" "$((SECONDS - start))" "$VM_REASON"
	say "    logs: $rel/$name/"
	explain "$out"
done

finish_run
