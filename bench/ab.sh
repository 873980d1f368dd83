#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A/B of two builds of rdma_rxe in one boot of the same guests, alternating:
# "the module before" against "the module after" a change.
#
#   bench/ab.sh [options] A B -- CASE...
#
#   A, B               each a path to an rdma_rxe.ko build (e.g. a copy
#                      saved in /tmp before a change), `ours` (the repo's
#                      rdma_rxe.ko, as built: no make here) or `theirs`
#                      (the guest kernel's in-tree rdma_rxe). The same
#                      build twice with other --params-a/--params-b A/Bs a
#                      module parameter.
#   CASE               a perftest command line as one word, e.g.
#                      'ib_write_bw -s 65536', 'ib_send_bw -s 64 -l 16 -Q 16',
#                      'ib_write_lat -s 64 -n 2000'; 'loss=1% ib_write_bw
#                      -s 65536' runs it under netem loss of 1% of what
#                      each guest receives, 'drop=1% ...' under the same
#                      random loss from nftables (wire_drop: no ifb, no
#                      qdisc). Added to each: -d rxe0 -x <the
#                      IPv4 GID> -F -m <RoCE MTU>, and -D D -f M for
#                      bandwidth tools. 'nvme -s MIB' is NVMe-oF over
#                      RDMA instead: b connects to nvmet-rdma on a (a
#                      memory-backed null_blk), writes MIB MiB with
#                      O_DIRECT, reads them back and compares (write and
#                      read MB/s); 'nvme -s MIB -q QD' does it with fio
#                      in 4 KiB blocks in random order, QD in flight,
#                      each block checked, and 'nvme -s MIB -q QD -b KIB'
#                      in KIB KiB blocks (a power of two, 4 to 1024); a
#                      loss= or drop= prefix applies only while the data
#                      moves, not to the connection.
#   -r, --rounds N     rounds (default 5): each loads A, runs every case
#                      once, unloads it, then the same for B; odd rounds A
#                      first, even rounds B first
#   -D, --duration S   perftest -D for bandwidth tools (default 4; -f 1
#                      from 4 s on, else -f 0, as the bench)
#   -o, --out DIR      results (default bench/results/ab-<timestamp>/)
#       --loop         one guest (2 vCPUs), server and client on its own IP
#                      (default: two guests, server on a, client on b)
#       --mtu N        the netdev MTU, 1500 (default; RoCE MTU 1024) or
#                      9000 (4096), set once for the boot
#       --params-a P   module parameters for A, e.g. 'tx_batch=1'
#       --params-b P   the same for B
#   -h, --help
#
# Prints each run as it completes, then the table (also DIR/ab.md): per case
# the median of A and of B, B/A, each side's min–max (ok/runs), in how many
# rounds B did better, and the medians of the key hw_counters that moved.
# DIR/runs.csv has every run's numbers and counters, DIR/a/ and DIR/b/
# every tool's output (runs/r<round>.<side>.c<case>.*) and the guests'
# logs. Exits 1 when the boot did not make every run (a guest failed, or
# the wire stopped); failed runs are results and do not change it.
# Environment: RXE_VM_* as for the selftests (selftests/lib/vm.sh).

set -euo pipefail

BENCH=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=selftests/lib/common.sh
. "$BENCH/../selftests/lib/common.sh"
# shellcheck source=selftests/lib/kernel.sh
. "$SELFTESTS/lib/kernel.sh"
# shellcheck source=selftests/lib/vm.sh
. "$SELFTESTS/lib/vm.sh"

usage() {
	sed -n '4,/^$/s/^# \{0,1\}//p' "$0"
	exit "${1:-2}"
}

rounds=5 duration=4 out='' n=2 mtu=1500 params_a='' params_b=''
sides=() cases=()
while [ $# -gt 0 ]; do
	case $1 in
	-r | --rounds) rounds=${2:?}; shift ;;
	-D | --duration) duration=${2:?}; shift ;;
	-o | --out) out=${2:?}; shift ;;
	--loop) n=1 ;;
	--mtu) mtu=${2:?}; shift ;;
	--params-a) params_a=${2?}; shift ;;
	--params-b) params_b=${2?}; shift ;;
	-h | --help) usage 0 ;;
	--) shift; cases=("$@"); break ;;
	-*) usage ;;
	*) sides+=("$1") ;;
	esac
	shift
done
[ "${#sides[@]}" = 2 ] || { warn "ab.sh: name two builds, A and B"; usage; }
[ "${#cases[@]}" != 0 ] || { warn "ab.sh: name at least one CASE after --"; usage; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || die "--rounds wants a positive number"
[[ $duration =~ ^[1-9][0-9]*$ ]] || die "--duration wants whole seconds"
[ "$mtu" = 1500 ] || [ "$mtu" = 9000 ] || die "--mtu is 1500 or 9000"
margin=$((duration >= 4 ? 1 : 0))
topo=two
[ "$n" = 2 ] || topo=loop

# resolve WHAT: print the build's path, or theirs.
resolve() {
	case $1 in
	theirs) echo theirs ;;
	ours) echo "$REPO/rdma_rxe.ko" ;;
	*)
		[ -f "$1" ] || die "no such module: $1 (a path to an rdma_rxe.ko, ours or theirs)"
		realpath "$1"
		;;
	esac
}

ko_a=$(resolve "${sides[0]}")
ko_b=$(resolve "${sides[1]}")
for ko in "$ko_a" "$ko_b"; do
	[ "$ko" = theirs ] || [ -f "$ko" ] || die "$ko does not exist (make builds it)"
done
label() {
	case $1 in
	theirs) echo theirs ;;
	"$REPO/rdma_rxe.ko") echo ours ;;
	*) basename "$1" ;;
	esac
}
label_a=$(label "$ko_a")
label_b=$(label "$ko_b")
[ "$label_a" != "$label_b" ] || { label_a=A; label_b=B; }
for p in $params_a $params_b; do
	[[ $p =~ ^[A-Za-z0-9_]+(=[^[:space:]]*)?$ ]] || die "module parameter '$p': want name=value"
done
[ "$ko_a" != theirs ] || [ -z "$params_a" ] || die "--params-a: the in-tree rdma_rxe has no module parameters here"
[ "$ko_b" != theirs ] || [ -z "$params_b" ] || die "--params-b: the in-tree rdma_rxe has no module parameters here"
if [ "$ko_a" = "$ko_b" ] && [ "$params_a" = "$params_b" ]; then
	warn "ab.sh: A and B are the same build with the same parameters (an A/A: the noise)"
fi

# parse_case CASE: check one CASE and print it for the guests:
# KIND LOSS PORT TOOL ARGS...
parse_case() {
	local -a w
	local loss=0 kind port=18515 i a mib='' qd='' kib=''

	read -r -a w <<<"$1"
	if [[ ${w[0]:-} == loss=* || ${w[0]:-} == drop=* ]]; then
		loss=${w[0]#*=}
		loss=${loss%\%}
		[[ $loss =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "case '$1': ${w[0]%%=*}=P% wants a number P"
		[ "$n" = 2 ] || die "case '$1': a lossy wire needs two guests (over its own IP rxe never reaches eth0)"
		# drop=: nftables' random drop at ingress (wire_drop), not netem.
		[[ ${w[0]} == loss=* ]] || loss=d$loss
		w=("${w[@]:1}")
	fi
	case ${w[0]:-} in
	nvme)
		# NVMe-oF: the size, and for fio a queue depth and a block size;
		# the rest is fixed (lib/guest-ab.sh). The guests take them by
		# position: printed as nvme -s MIB [-q QD [-b KIB]].
		[ "$n" = 2 ] || die "case '$1': nvme needs two guests (target on a, host on b)"
		for ((i = 1; i < ${#w[@]}; i += 2)); do
			a=${w[i + 1]:-}
			case ${w[i]} in
			-s) [ -z "$mib" ] && [[ $a =~ ^[1-9][0-9]*$ ]] && mib=$a ;;
			-q) [ -z "$qd" ] && [[ $a =~ ^[1-9][0-9]*$ ]] && qd=$a ;;
			-b) [ -z "$kib" ] && [ -n "$a" ] && kib=$a ;;
			*) false ;;
			esac || { mib=; break; }
		done
		[ -n "$mib" ] ||
			die "case '$1': want 'nvme -s MIB [-q QD [-b KIB]]' (MiB written and read back; QD: 4 KiB random I/O with fio; KIB: its block size)"
		# dd copies in 1 MiB blocks: a block size is fio's only.
		[ -n "$qd" ] || [ -z "$kib" ] ||
			die "case '$1': -b KIB is fio's block size and needs -q QD (without -q, dd copies in 1 MiB blocks)"
		# A power of two up to 1 MiB: MIB MiB is a whole number of blocks,
		# as fio's --size must be.
		[ -z "$kib" ] || [[ $kib =~ ^(4|8|16|32|64|128|256|512|1024)$ ]] ||
			die "case '$1': -b wants a block size in KiB, a power of two from 4 to 1024, not '$kib'"
		command -v nvme >/dev/null || die "case '$1': nvme-cli is not installed (selftests/setup.sh)"
		[ -z "$qd" ] || command -v fio >/dev/null ||
			die "case '$1': fio is not installed (selftests/setup.sh)"
		echo "nvme $loss 4420 nvme -s $mib${qd:+ -q $qd}${kib:+ -b $kib}"
		return
		;;
	ib_*_bw) kind=bw ;;
	ib_*_lat) kind=lat ;;
	*) die "case '$1': not a perftest tool (ib_*_bw, ib_*_lat) nor nvme" ;;
	esac
	command -v "${w[0]}" >/dev/null || die "case '$1': ${w[0]} is not installed (selftests/setup.sh)"
	for ((i = 1; i < ${#w[@]}; i++)); do
		a=${w[i]}
		case $a in
		-d | --ib-dev* | -x | --gid-index* | -m | --mtu* | -D | --duration* | -f | --margin*)
			die "case '$1': ab.sh sets $a itself (-d, -x, -m, -D and -f; see -D, --mtu)" ;;
		-a | --all) die "case '$1': one message size per case (no -a)" ;;
		-n | --iters*) [ "$kind" = lat ] || die "case '$1': bandwidth runs last -D seconds (no -n)" ;;
		-p) port=${w[i + 1]:-} ;;
		--port=*) port=${a#--port=} ;;
		esac
	done
	[[ $port =~ ^[0-9]+$ ]] || die "case '$1': -p wants a port number"
	echo "$kind $loss $port ${w[*]}"
}

guest_cases=
for c in "${cases[@]}"; do
	guest_cases+="$(parse_case "$c")"$'\n'
done

out=${out:-$BENCH/results/ab-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
out=$(cd "$out" && pwd)

# The guests see the host's file system at the same paths, except /tmp,
# /run and /dev (theirs): the builds are copied where they see them, which
# also keeps what was measured from a rebuild during the run.
stage=$out/modules
case $out/ in
/tmp/* | /run/* | /dev/*)
	mkdir -p "$BENCH/results"
	stage=$(mktemp -d "$BENCH/results/.ab-modules.XXXXXX")
	;;
esac
# shellcheck disable=SC2317 # the EXIT trap calls it
cleanup() {
	vm_cleanup
	[ "$stage" = "$out/modules" ] || rm -rf "$stage"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

kernel_prepare >"$out/kernel.log" 2>&1 || { tail_indented "$out/kernel.log"; die "cannot prepare the guest kernel"; }
mkdir -p "$stage"
guest_ko() {
	local side=$1 ko=$2

	[ "$ko" != theirs ] || { echo theirs; return; }
	cp "$ko" "$stage/$side.ko"
	echo "$stage/$side.ko"
}
gko_a=$(guest_ko A "$ko_a")
gko_b=$(guest_ko B "$ko_b")
for ko in "$ko_a" "$ko_b"; do
	[ "$ko" != theirs ] || continue
	v=$(modinfo -F vermagic "$ko" 2>/dev/null || true)
	[[ $v == "$KVER "* ]] || warn "ab.sh: $ko is built for '${v%% *}', the guests run $KVER"
	if [ "$ko" = "$REPO/rdma_rxe.ko" ] &&
		[ -n "$(find "$REPO" "$REPO/include" -maxdepth 1 -name '*.[ch]' -newer "$ko" -print -quit)" ]; then
		warn "ab.sh: $ko is older than some of its sources (make?)"
	fi
done

# What was measured, for the report.
intree=$(find "$KERNEL_MODULES/$KVER/kernel/drivers/infiniband/sw/rxe" -name 'rdma_rxe.ko*' 2>/dev/null | head -n 1)
side_info() {
	local s=$1 ko=$2 label=$3 params=$4 f=$2

	[ "$ko" != theirs ] || f=$intree
	echo "${s}_ko=$ko"
	echo "${s}_label=$label"
	echo "${s}_params=$params"
	echo "${s}_sha256=$( [ -z "$f" ] || sha256sum "$f" | cut -c1-16)"
	echo "${s}_srcversion=$( [ -z "$f" ] || modinfo -F srcversion "$f" 2>/dev/null || true)"
}
{
	echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "host=$(hostname)"
	echo "host_ncpu=$(nproc)"
	echo "host_loadavg_start=$(cut -d' ' -f1-3 /proc/loadavg)"
	echo "qemu=$(qemu-system-x86_64 --version | head -n 1)"
	echo "accel=${RXE_VM_ACCEL:-tcg}"
	echo "vm_smp=$(vm_smp "$n" | sed 's/,maxcpus=\(.*\)/ (maxcpus \1)/')"
	echo "kernel=$KVER"
	echo "git=$(git -C "$REPO" describe --always --dirty 2>/dev/null || echo unknown)"
	echo "perftest=$(dpkg-query -W -f '${Version}' perftest 2>/dev/null || true)"
	echo "topo=$topo"
	echo "mtu=$mtu"
	echo "rounds=$rounds"
	echo "duration=$duration"
	echo "margin=$margin"
	side_info A "$ko_a" "$label_a" "$params_a"
	side_info B "$ko_b" "$label_b" "$params_b"
} >"$out/ab.info"
printf '%s\n' "${cases[@]}" >"$out/cases.txt"

# The boot's time limit: every run timing out (the guests' own limits:
# D + 60 s for bandwidth, 3 x 180 s for latency, 2 x 240 s for an nvme
# case's two dd plus its connect and teardown) plus loads and the boot.
# Only a hung guest ever reaches it.
timeout=300
while read -r kind _; do
	case $kind in
	bw) timeout=$((timeout + 2 * rounds * (duration + 90))) ;;
	lat) timeout=$((timeout + 2 * rounds * (3 * 180 + 20))) ;;
	nvme) timeout=$((timeout + 2 * rounds * (2 * 240 + 120))) ;;
	esac
done <<<"$guest_cases"
timeout=$((timeout + 2 * rounds * 60))

export RXE_BENCH_TOPO=$topo
export RXE_BENCH_DURATION=$duration RXE_BENCH_MARGIN=$margin
export RXE_AB_ROUNDS=$rounds RXE_AB_MTU=$mtu RXE_AB_CASES=${guest_cases%$'\n'}
export RXE_AB_KO_A=$gko_a RXE_AB_KO_B=$gko_b
export RXE_AB_PARAMS_A=$params_a RXE_AB_PARAMS_B=$params_b
export RXE_AB_LABEL_A=$label_a RXE_AB_LABEL_B=$label_b

say "ab: A = $label_a ($ko_a${params_a:+ $params_a}), B = $label_b ($ko_b${params_b:+ $params_b})"
say "ab: $rounds round(s) x ${#cases[@]} case(s), $([ "$n" = 1 ] && echo "one guest" || echo "two guests"), MTU $mtu, perftest -D $duration -f $margin; guest kernel $KVER"
say "ab: results in ${out#"$REPO"/}/; booting (about 45 s)"
t0=$SECONDS
rc=0
for attempt in 1 2; do
	rc=0
	VM_FOLLOW=1 vm_run "$out" "$n" "$timeout" "$BENCH/lib/guest-ab.sh" || rc=$?
	# A guest that died before its first run (under TCG on a busy host
	# the kernel's timer check sometimes panics) is booted once more.
	if [ "$rc" = 0 ] || [ "$attempt" = 2 ]; then break; fi
	[ -z "$(find "$out" -path '*/runs/*.info' -print -quit)" ] || break
	say "ab: the boot failed before any run ($VM_REASON); booting again"
	rm -rf "$out/failed-boot"
	mkdir -p "$out/failed-boot"
	mv "$out/a" "$out/failed-boot/"
	[ ! -d "$out/b" ] || mv "$out/b" "$out/failed-boot/"
	echo "$VM_REASON" >"$out/failed-boot/reason"
done
{
	echo "host_loadavg_end=$(cut -d' ' -f1-3 /proc/loadavg)"
	echo "elapsed=$((SECONDS - t0))"
	echo "boots=$attempt"
	echo "rc=$rc"
	echo "reason=${VM_REASON:-}"
	echo "wire_lost=$(cat "$out"/?/wire-lost 2>/dev/null | head -n 1)"
} >>"$out/ab.info"
say ""
[ "$rc" = 0 ] || warn "ab: the guests reported a failure: $VM_REASON"
python3 "$BENCH/lib/ab_report.py" "$out" || rc=1
made=$(find "$out"/[ab]/runs -name 'r*.info' 2>/dev/null | wc -l)
planned=$((rounds * 2 * ${#cases[@]}))
say ""
say "ab: $made of $planned runs made; ${out#"$REPO"/}/ab.md, runs.csv; every tool's output in a/runs/$([ "$n" = 1 ] || echo " and b/runs/")"
[ "$made" = "$planned" ] || rc=1
exit "$rc"
