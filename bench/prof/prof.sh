#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Where the guests' instructions go: one perftest case between the test
# bed's guests, with a QEMU TCG plugin (tbprof.c) counting every guest
# instruction by the function it runs in, over a window of steady
# traffic. Prints each guest's functions, modules and user space, with
# instructions per packet.
#
#   bench/prof/prof.sh [options] [-- CASE]
#
#   --impl I        ours (default), theirs (the guest kernel's rdma_rxe) or
#                   a path to another build of ours
#   --loop          one guest (2 vCPUs), traffic over its own IP
#   --mtu N         the netdev MTU (default 1500; 9000 gives RoCE MTU 4096)
#   -D S            perftest -D (default 12)
#   --settle S      from the first packets to the window (default 3)
#   --window S      the window (default 5)
#   -n N            functions to list per guest (default 40)
#   -o DIR          results (default bench/results/prof-<timestamp>/)
#   --no-build      use the rdma_rxe.ko already built
#   -h, --help
#
# CASE is a perftest command line, default 'ib_write_bw -s 65536'; the
# script adds -d, -x, -F, -m and (for bandwidth tools) -D. 'nvme RW QD' is
# NVMe-oF over RDMA instead (two guests): a exports a null_blk through
# nvmet-rdma, b connects and runs fio for -D seconds, RW randread or
# randwrite in 4 KiB blocks with QD in flight (its terse line in
# b/client.log: the I/Os of the run). The plugin is
# built on first use against qemu-plugin.h from Debian's qemu source
# package (apt-get source, which needs a deb-src line); RXE_QEMU_INCLUDE
# names a folder that already holds qemu-plugin.h.
#
# Under TCG a guest's time follows the instructions it executes closely
# (a memory access or a helper such as a string copy costs more than an
# add, so it is a close measure, not an exact one), and the count does not
# depend on the host's load: per packet, a function two runs execute
# alike agrees to about 1%, where timings spread by tens (bench/README.md
# says where it does not). bench/prof/report.py makes the report again
# from DIR.

set -euo pipefail

PROF=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=selftests/lib/common.sh
. "$PROF/../../selftests/lib/common.sh"
# shellcheck source=selftests/lib/kernel.sh
. "$SELFTESTS/lib/kernel.sh"
# shellcheck source=selftests/lib/vm.sh
. "$SELFTESTS/lib/vm.sh"

usage() {
	sed -n '4,/^$/s/^# \{0,1\}//p' "$0"
	exit "${1:-2}"
}

impl=ours n=2 mtu=1500 duration=12 settle=3 window=5 top=40 out='' build=1
case_line='ib_write_bw -s 65536'
while [ $# -gt 0 ]; do
	case $1 in
	--impl) impl=${2:?}; shift ;;
	--loop) n=1 ;;
	--mtu) mtu=${2:?}; shift ;;
	-D) duration=${2:?}; shift ;;
	--settle) settle=${2:?}; shift ;;
	--window) window=${2:?}; shift ;;
	-n) top=${2:?}; shift ;;
	-o) out=${2:?}; shift ;;
	--no-build) build=0 ;;
	-h | --help) usage 0 ;;
	--) shift; [ $# = 0 ] || case_line=$*; break ;;
	*) usage ;;
	esac
	shift
done
case $case_line in
nvme\ *)
	[[ $case_line =~ ^nvme\ (randread|randwrite)\ [1-9][0-9]*$ ]] ||
		die "want 'nvme randread|randwrite QD', not '$case_line'"
	[ "$n" = 2 ] || die "nvme needs two guests (no --loop)"
	command -v fio >/dev/null || die "fio is not installed (selftests/setup.sh)"
	;;
esac
[ "$((settle + window + 2))" -le "$duration" ] ||
	die "the window ends after perftest: --settle + --window + 2 must be at most -D"

# add_deb_src: source packages of the suite the host runs, from the Debian
# mirror apt already uses (as selftests/setup.sh adds backports).
add_deb_src() {
	local uri suite sudo=()

	[ "$(id -u)" = 0 ] || sudo=(sudo)
	suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
	uri=$(apt-cache policy 2>/dev/null |
		awk '$3 ~ /^[a-z]+\/main$/ && $2 ~ /\/debian\/?$/ { print $2; exit }')
	[ -n "$uri" ] || die "no Debian mirror in apt's sources to fetch qemu's source from; set RXE_QEMU_INCLUDE"
	say "prof: adding deb-src $suite ($uri) to apt's sources"
	printf 'Types: deb-src\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
		"$uri" "$suite" | "${sudo[@]}" tee /etc/apt/sources.list.d/rxe-testbed-src.sources >/dev/null
	"${sudo[@]}" apt-get update -q >/dev/null
}

# build_plugin: tbprof.so in the cache, rebuilt when tbprof.c is newer.
build_plugin() {
	local cache=$PROF/.cache inc=${RXE_QEMU_INCLUDE:-} src

	mkdir -p "$cache"
	if [ -z "$inc" ]; then
		inc=$cache/include
		if [ ! -e "$inc/qemu-plugin.h" ]; then
			say "prof: fetching qemu-plugin.h from Debian's qemu source package"
			src=$(mktemp -d)
			if ! (cd "$src" && apt-get source --download-only qemu >/dev/null 2>&1); then
				add_deb_src
				(cd "$src" && apt-get source --download-only qemu >/dev/null 2>&1) ||
					die "apt-get source qemu failed: add a deb-src line to apt's sources, or set RXE_QEMU_INCLUDE"
			fi
			mkdir -p "$inc"
			tar -xJf "$src"/qemu_*.orig.tar.xz -C "$src" --wildcards '*/include/qemu/qemu-plugin.h'
			cp "$src"/qemu-*/include/qemu/qemu-plugin.h "$inc/"
			rm -rf "$src"
		fi
	fi
	if [ ! -e "$cache/tbprof.so" ] || [ "$PROF/tbprof.c" -nt "$cache/tbprof.so" ]; then
		gcc -O2 -Wall -Wextra -Werror -shared -fPIC -I"$inc" \
			-o "$cache/tbprof.so" "$PROF/tbprof.c" -lpthread ||
			die "cannot build the plugin"
	fi
}

out=${out:-$REPO/bench/results/prof-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
out=$(cd "$out" && pwd)

trap vm_cleanup EXIT
trap 'exit 130' INT TERM

build_plugin
kernel_prepare >"$out/kernel.log" 2>&1 || { tail_indented "$out/kernel.log"; die "cannot prepare the guest kernel"; }
case $impl in
ours)
	if [ "$build" = 1 ]; then
		build_module "$out/build.log" || { tail_indented "$out/build.log" 40; die "the build failed"; }
	fi
	;;
theirs) ;;
*)
	[ -e "$impl" ] || die "--impl: no such module '$impl'"
	RXE_KO=$(realpath "$impl")
	export RXE_KO
	impl=ours
	;;
esac

export RXE_VM_PLUGIN=$PROF/.cache/tbprof.so
export RXE_PROF_IMPL=$impl RXE_PROF_CASE=$case_line RXE_PROF_D=$duration
export RXE_PROF_SETTLE=$settle RXE_PROF_WINDOW=$window RXE_PROF_MTU=$mtu
{
	echo "case=$case_line"
	echo "impl=${RXE_KO:-$impl}"
	echo "guests=$n mtu=$mtu D=$duration settle=$settle window=$window"
	echo "git=$(git -C "$REPO" describe --always --dirty 2>/dev/null || echo unknown)"
} >"$out/setup.info"
say "prof: $case_line, $impl, $n guest(s), MTU $mtu; results in $out/"
rc=0
vm_run "$out" "$n" $((duration + 240)) "$PROF/guest-prof.sh" || rc=$?
[ "$rc" = 0 ] || warn "prof: the guests reported a failure: $VM_REASON"
python3 "$PROF/report.py" -n "$top" "$out" | tee "$out/report.txt"
exit "$rc"
