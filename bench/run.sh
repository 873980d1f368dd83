#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The benchmark suite: our rdma_rxe.ko against the kernel's own rdma_rxe, on
# the same guest kernel, the same guests and the same wire, alternating.
#
#   bench/run.sh [options]
#
#   -q, --quick        the goal cases only, perftest -D 2 (10 to 17 min on
#                      2 cores, quiet to busy; the full run 45 to 70 min)
#   -r, --rounds N     rounds (default 3); each round boots each topology
#                      once and runs both drivers in it, the order
#                      alternating per round (ours first in odd rounds)
#   -f, --filter RE    only the cases whose TOPO/ID matches the extended
#                      regex RE (e.g. '^two/', 'write_bw/64K', 'lat|iperf3')
#   -o, --out DIR      results folder (default bench/results/<timestamp>/)
#   -D, --duration S   perftest -D seconds (default 4, quick 2)
#       --no-build     use the rdma_rxe.ko already built
#   -l, --list         print the cases and the planned boots, run nothing
#   -h, --help
#
# Writes results.md (the table: medians, ours/theirs, goals, spread, CPU
# cost, failures), results.png (the ratios), runs.csv (every run's
# numbers) and, per boot, r<N>-<topo>/ with every tool's raw output.
# bench/report.sh DIR makes the table and the plot again from DIR.
# Environment: RXE_VM_* as for the selftests (lib/vm.sh), RXE_KO another
# build of ours.

set -euo pipefail

BENCH=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=selftests/lib/common.sh
. "$BENCH/../selftests/lib/common.sh"
# shellcheck source=selftests/lib/kernel.sh
. "$SELFTESTS/lib/kernel.sh"
# shellcheck source=selftests/lib/vm.sh
. "$SELFTESTS/lib/vm.sh"
# shellcheck source=bench/lib/cases.sh
. "$BENCH/lib/cases.sh"

usage() {
	sed -n '4,28s/^# \{0,1\}//p' "$0"
	exit "${1:-2}"
}

quick=0 rounds=3 filter='' out='' duration='' build=1 list=0
while [ $# -gt 0 ]; do
	case $1 in
	-q | --quick) quick=1 ;;
	-r | --rounds) rounds=${2:?}; shift ;;
	-f | --filter) filter=${2?}; shift ;;
	-o | --out) out=${2:?}; shift ;;
	-D | --duration) duration=${2:?}; shift ;;
	--no-build) build=0 ;;
	-l | --list) list=1 ;;
	-h | --help) usage 0 ;;
	*) usage ;;
	esac
	shift
done
[[ $rounds =~ ^[1-9][0-9]*$ ]] || die "--rounds wants a positive number"

# perftest -D D -f M measures over D - 2M seconds. Quick: no margin.
if [ "$quick" = 1 ]; then
	duration=${duration:-2}
	lat_iters=1000
else
	duration=${duration:-4}
	lat_iters=5000
fi
[[ $duration =~ ^[1-9][0-9]*$ ]] || die "--duration wants whole seconds"
margin=$((duration >= 4 ? 1 : 0))

export RXE_BENCH_QUICK=$quick RXE_BENCH_FILTER=$filter
export RXE_BENCH_DURATION=$duration RXE_BENCH_MARGIN=$margin
export RXE_BENCH_LAT_ITERS=$lat_iters

# A boot's time limit: every case timing out (the guest's own limits)
# plus boots and module loads. Only a hung guest ever reaches it.
boot_timeout() {
	local topo=$1 n=0 kind t=300

	while read -r _ kind _; do
		case $kind in
		iperf) t=$((t + duration + 80)) ;;
		lat) t=$((t + 2 * (3 * 180 + 20))) ;;
		# Two dd of at most 240 s each, the connection and the teardown.
		nvme) t=$((t + 2 * (2 * 240 + 120))) ;;
		*) t=$((t + 2 * (duration + 90))) ;;
		esac
		n=$((n + 1))
	done < <(bench_cases "$topo")
	echo "$t"
}

topos=()
for topo in loop two; do
	[ -z "$(bench_cases "$topo")" ] || topos+=("$topo")
done
[ "${#topos[@]}" != 0 ] || die "no case matches the filter '$filter'"

if [ "$list" = 1 ]; then
	for topo in "${topos[@]}"; do
		say "$topo: $(bench_cases "$topo" | wc -l) cases (each for ours and theirs; iperf3 once)"
		bench_cases "$topo" | awk -v t="$topo" '{ printf "  %s/%s\n", t, $1 }'
	done
	say "$rounds round(s) x ${#topos[@]} boot(s); perftest -D $duration -f $margin, latency -n $lat_iters"
	exit 0
fi

out=${out:-$BENCH/results/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
out=$(cd "$out" && pwd)
case $out in
"$BENCH"/results/*) ln -sfn "$(basename "$out")" "$BENCH/results/latest" ;;
esac

trap vm_cleanup EXIT
trap 'exit 130' INT TERM

t_start=$SECONDS
say "bench: results in ${out#"$REPO"/}/"
kernel_prepare >"$out/kernel.log" 2>&1 || { tail_indented "$out/kernel.log"; die "cannot prepare the guest kernel"; }
if [ "$build" = 1 ]; then
	say "bench: building rdma_rxe.ko against $KVER"
	build_module "$out/build.log" || { tail_indented "$out/build.log" 40; die "the build failed"; }
fi
ko=${RXE_KO:-$REPO/rdma_rxe.ko}
[ -e "$ko" ] || die "$ko does not exist (build it, or drop --no-build)"

# What was measured, for the report.
{
	echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "host=$(hostname)"
	echo "host_cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
	echo "host_ncpu=$(nproc)"
	echo "host_loadavg_start=$(cut -d' ' -f1-3 /proc/loadavg)"
	echo "qemu=$(qemu-system-x86_64 --version | head -n 1)"
	echo "accel=${RXE_VM_ACCEL:-tcg}"
	# vm_smp's "1,maxcpus=2" is reported as "1 (maxcpus 2)".
	echo "vm_smp_loop=$(vm_smp 1 | sed 's/,maxcpus=\(.*\)/ (maxcpus \1)/')"
	echo "vm_smp_two=$(vm_smp 2 | sed 's/,maxcpus=\(.*\)/ (maxcpus \1)/')"
	echo "vm_mem=${RXE_VM_MEM:-2G}"
	echo "kernel=$KVER"
	echo "git=$(git -C "$REPO" describe --always --dirty 2>/dev/null || echo unknown)"
	echo "git_branch=$(git -C "$REPO" rev-parse --abbrev-ref HEAD 2>/dev/null || echo unknown)"
	echo "ko=$ko"
	echo "ko_version=$(modinfo -F version "$ko" 2>/dev/null || true)"
	echo "ko_sha256=$(sha256sum "$ko" | cut -c1-16)"
	intree=$(find "$KERNEL_MODULES/$KVER/kernel/drivers/infiniband/sw/rxe" -name 'rdma_rxe.ko*' 2>/dev/null | head -n 1)
	echo "theirs_ko=${intree#"$KERNEL_MODULES"/}"
	echo "theirs_sha256=$( [ -z "$intree" ] || sha256sum "$intree" | cut -c1-16)"
	echo "perftest=$(dpkg-query -W -f '${Version}' perftest 2>/dev/null || true)"
	echo "iperf3=$(dpkg-query -W -f '${Version}' iperf3 2>/dev/null || true)"
	echo "mode=$([ "$quick" = 1 ] && echo quick || echo full)"
	echo "rounds=$rounds"
	echo "duration=$duration"
	echo "margin=$margin"
	echo "lat_iters=$lat_iters"
	echo "filter=$filter"
} >"$out/setup.info"
export RXE_KO=$ko

# keep_boot_logs DIR N: move the logs of boot N of DIR aside (boot<N>-*),
# so that the next boot of the same round writes its own.
keep_boot_logs() {
	local f

	for f in "$1"/?/*; do
		[ -f "$f" ] || continue
		mv "$f" "$(dirname "$f")/boot$2-$(basename "$f")"
	done
}

# done_runs DIR CLIENT: "IMPL ID" of every run a boot of DIR made (failed
# ones included: a failure is a result; a run over a stalled wire is not,
# and guest-bench.sh moved it out of runs/).
done_runs() {
	local f

	for f in "$1/$2"/runs/*.info; do
		[ -e "$f" ] || continue
		awk -F= '$1 == "impl" { i = $2 } $1 == "id" { d = $2 } END { if (i != "" && d != "") print i, d }' "$f"
	done
}

# plan_runs DIR: how many runs DIR's plan has (iperf3 once, others per driver).
plan_runs() {
	awk '{ n += $2 == "iperf" ? 1 : 2 } END { print n + 0 }' "$1/plan.txt"
}

nboot=$((rounds * ${#topos[@]}))
say "bench: guest kernel $KVER, $rounds round(s) x ${topos[*]}, perftest -D $duration"
i=0
for round in $(seq 1 "$rounds"); do
	if [ $((round % 2)) = 1 ]; then order="ours theirs"; else order="theirs ours"; fi
	for topo in "${topos[@]}"; do
		i=$((i + 1))
		dir=$out/r$round-$topo
		mkdir -p "$dir"
		n=1
		[ "$topo" = loop ] || n=2
		bench_cases "$topo" >"$dir/plan.txt"
		timeout=$(boot_timeout "$topo")
		printf 'bench: [%d/%d] round %d, %s, %s: ' "$i" "$nboot" "$round" \
			"$([ "$topo" = loop ] && echo "one guest" || echo "two guests")" "${order/ /, then }"
		t0=$SECONDS
		export RXE_BENCH_TOPO=$topo RXE_BENCH_ORDER=$order
		export RXE_BENCH_DONE=
		for attempt in 1 2; do
			rc=0
			vm_run "$dir" "$n" "$timeout" "$BENCH/lib/guest-bench.sh" || rc=$?
			# A guest that died before the first case (under TCG on a
			# busy host the kernel's timer check sometimes panics) is
			# booted once more; the failed boot is kept beside.
			if [ "$rc" = 0 ] || [ "$attempt" = 2 ]; then break; fi
			[ -z "$(find "$dir" -path '*/runs/*.info' -print -quit)" ] || break
			printf '(boot failed: %s; booting again) ' "$VM_REASON"
			rm -rf "$dir.failed-boot"
			mv "$dir" "$dir.failed-boot"
			echo "$VM_REASON" >"$dir.failed-boot/reason"
			mkdir -p "$dir"
			cp "$dir.failed-boot/plan.txt" "$dir/plan.txt"
		done
		# A boot whose wire stalled (guest-bench.sh) is followed by
		# another for the runs it did not make, up to twice.
		stalls=()
		while stall=$(cat "$dir"/?/wire-lost 2>/dev/null | head -n 1) && [ -n "$stall" ] &&
			[ "${#stalls[@]}" -lt 2 ]; do
			stalls+=("$stall")
			keep_boot_logs "$dir" "${#stalls[@]}"
			done_runs "$dir" "$([ "$n" = 1 ] && echo a || echo b)" >"$dir/done.list"
			printf '(wire stalled at %s; booting again for %d runs) ' "$stall" \
				"$(($(plan_runs "$dir") - $(wc -l <"$dir/done.list")))"
			export RXE_BENCH_DONE=$dir/done.list
			rc=0
			vm_run "$dir" "$n" "$timeout" "$BENCH/lib/guest-bench.sh" || rc=$?
		done
		export RXE_BENCH_DONE=
		{
			echo "round=$round"
			echo "topo=$topo"
			echo "order=$order"
			echo "boots=$((attempt + ${#stalls[@]}))"
			echo "wire_stalls=${#stalls[@]}"
			[ "${#stalls[@]}" = 0 ] || printf 'wire_stall%d=%s\n' 1 "${stalls[0]}"
			[ "${#stalls[@]}" -lt 2 ] || printf 'wire_stall%d=%s\n' 2 "${stalls[1]}"
			echo "rc=$rc"
			echo "reason=${VM_REASON:-}"
			echo "elapsed=$((SECONDS - t0))"
		} >"$dir/boot.info"
		nrun=$(find "$dir" -path '*/runs/*.info' | wc -l)
		nfail=$( (grep -L '^rc=0$' "$dir"/?/runs/*.info 2>/dev/null || true) | wc -l)
		say "$nrun runs, $nfail failed ($((SECONDS - t0))s)${VM_REASON:+; $VM_REASON}"
	done
done
echo "host_loadavg_end=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/setup.info"
echo "elapsed=$((SECONDS - t_start))" >>"$out/setup.info"

say "bench: done in $((SECONDS - t_start))s; the report:"
say ""
"$BENCH/report.sh" "$out"
