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
#   --one-kernel   boot only the guest kernel, not the other kernels too
#   --list         list the tests with their guests, timeouts and kernels
#   -v, --verbose  print every check's output, not only the failed ones'
#
# Every test runs on the guest kernel (Debian 12's default). Then the tests
# headed "# kernels: all" run again on each other kernel the module supports,
# the kernels of RXE_ALSO_KSUITES (default bookworm-backports, 6.12; see
# setup.sh), as "name@release", with a module built against its headers in
# a scratch copy; there, RXE_AGAIN=1 in the guests' environment tells a
# test that it ran on the first kernel already. Environment:
# RXE_IMPL=theirs runs the tests against the
# kernel's own rdma_rxe (RXE_IMPL_A / RXE_IMPL_B per guest), RXE_KO another
# module file, RXE_KABI / RXE_KSUITE another guest kernel, RXE_VM_* the
# guests (see lib/vm.sh). Logs go to selftests/results/<timestamp>/ (and
# results/latest). Prints "PASS name (Ns)" or "FAIL name (Ns): why" for
# each, ends with "N passed, N failed" and exits non-zero when anything
# failed. A test headed "# reference: theirs" (it runs the kernel's own
# rdma_rxe) that fails, or any test whose guest fails to boot, prints
# "RETRY name" with why and is run once more.

set -euo pipefail

. "$(dirname "$0")/lib/common.sh"
. "$SELFTESTS/lib/kernel.sh"
. "$SELFTESTS/lib/vm.sh"

usage() {
	sed -n '4,28s/^# \{0,1\}//p' "$0"
	exit "${1:-2}"
}

build=1 list=0 one_kernel=${RXE_ONE_KERNEL:-0} patterns=()
while [ $# -gt 0 ]; do
	case $1 in
	--no-build) build=0 ;;
	--one-kernel) one_kernel=1 ;;
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
		printf '%-32s guests: %s  timeout: %4ss  kernels: %s\n' "$(basename "$t" .sh)" \
			"$(vm_header "$t" guests)" "$(vm_header "$t" timeout)" \
			"$(vm_header "$t" kernels | grep -x all || echo first)"
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

# build_other RELEASE: the build-RELEASE step, W=1 against that kernel's
# headers in a scratch copy, its modules kept in results/modules-RELEASE.
build_other() {
	local krel=$1 kdir=/usr/src/linux-headers-$1 start=$SECONDS

	if build_elsewhere "$kdir" "$results/build-$krel.log" \
		"$results/modules-$krel"; then
		pass "build-$krel" "$((SECONDS - start))"
		return 0
	fi
	failure "build-$krel" "$((SECONDS - start))" \
		"W=1 build against $kdir failed (log: $rel/build-$krel.log)"
	tail_indented "$results/build-$krel.log" 40
	return 1
}

# The C helpers the guests run, always: a check says when one is missing.
start=$SECONDS
if build_tools "$results/tools"; then
	say "test helpers built ($((SECONDS - start))s)"
else
	say "test helpers: not all built, the checks that want them fail (logs: $rel/tools/)"
fi

if [ "$build" = 1 ]; then
	start=$SECONDS
	if build_module "$results/build.log"; then
		pass build "$((SECONDS - start))"
	else
		failure build "$((SECONDS - start))" "make failed (log: $rel/build.log)"
		tail_indented "$results/build.log" 40
	fi
	# The other kernels the module supports must build too. Their modules
	# are kept for the tests that boot those kernels (other_kernel, below).
	for kdir in $(other_kdirs); do
		build_other "${kdir#/usr/src/linux-headers-}" || true
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

# run_tests SUFFIX TEST...: boot each test's guests on kernel $KVER and
# report it as its name followed by SUFFIX.
run_tests() {
	local suffix=$1 t name nguests timeout out start
	shift

	for t in "$@"; do
		name=$(basename "$t" .sh)$suffix
		nguests=$(vm_header "$t" guests)
		timeout=$(vm_header "$t" timeout)
		out=$results/$name
		mkdir -p "$out"
		start=$SECONDS
		if vm_run "$out" "${nguests:-1}" "${timeout:-300}" "$t"; then
			pass "$name" "$((SECONDS - start))"
			continue
		fi
		# Two failures are not the test's, and get a second run:
		# - a guest that never began the test: its kernel panicked
		#   while booting (under TCG one now and then does, in CI
		#   once as an int3 oops in sched_clock_cpu() while a static
		#   key was patched), before any module was loaded;
		# - a test that runs the kernel's own rdma_rxe ("# reference:
		#   theirs"): the 6.1 driver now and then hangs or fails a
		#   transfer under TCG on its own (seen in CI in the test
		#   of it alone, where nothing of ours was loaded).
		# The first failure is still printed in full and its logs
		# kept in <test>.first/; a test of ours alone that ran is
		# never run twice.
		if [ -n "$VM_BOOT_FAILED" ] || [ "$(vm_header "$t" reference)" = theirs ]; then
			[ -z "$VM_BOOT_FAILED" ] ||
				VM_REASON="guest $VM_BOOT_FAILED never began the test (a failed boot): $VM_REASON"
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
}

# other_kernel SUITE ABI TEST...: run the tests on kernel ABI from apt
# suite SUITE with a module built for it (by the build step above, or now
# with --no-build), as "name@ABI".
other_kernel() {
	local suite=$1 abi=$2 mods=$results/modules-$2 start
	shift 2

	start=$SECONDS
	if ! RXE_KSUITE=$suite RXE_KABI=$abi kernel_prepare >"$results/kernel-$abi.log" 2>&1; then
		failure "kernel-$abi" "$((SECONDS - start))" \
			"cannot prepare guest kernel $abi (log: $rel/kernel-$abi.log)"
		tail_indented "$results/kernel-$abi.log"
		return 0
	fi
	say "guest kernel $KVER ($((SECONDS - start))s)"
	if [ ! -e "$mods/rdma_rxe.ko" ]; then
		# The build step failed for it, and said so.
		[ ! -e "$results/build-$abi.log" ] || return 0
		build_other "$abi" || return 0
	fi
	# RXE_AGAIN tells a test it already ran on the first kernel.
	RXE_AGAIN=1 RXE_KO=$mods/rdma_rxe.ko RXE_KTEST_KO=$mods/rxe_ktest.ko \
		run_tests "@$abi" "$@"
}

run_tests "" "${tests[@]}"

# The tests headed "# kernels: all", on the other kernels setup.sh installs
# the headers of.
also=()
for t in "${tests[@]}"; do
	[ "$(vm_header "$t" kernels)" = all ] && also+=("$t")
done
if [ "$one_kernel" != 1 ] && [ "${#also[@]}" != 0 ]; then
	first=$KVER
	for suite in ${RXE_ALSO_KSUITES-bookworm-backports}; do
		abi=$(RXE_KSUITE=$suite kernel_default_abi)
		if [ -z "$abi" ] || [ "$abi" = "$first" ]; then
			continue
		fi
		if [ ! -d "/usr/src/linux-headers-$abi" ]; then
			say "not booted: $suite's kernel $abi (no headers: selftests/setup.sh installs them)"
			continue
		fi
		other_kernel "$suite" "$abi" "${also[@]}"
	done
fi

finish_run
