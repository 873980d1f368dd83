#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install everything the build and the guest tests need, with apt. Safe to
# run again: when everything is there it only says so. Runs as root, or
# through sudo.
#
#   selftests/setup.sh           the build and the tests (run.sh, demo.sh
#                                and CI call it)
#   selftests/setup.sh --check   also what `make check` needs: sparse, and
#                                checkpatch from linux-source-6.1, unpacked
#                                (`make setup`)
#
# RXE_KABI picks the guest kernel's ABI (default: the one linux-image-amd64
# depends on); RXE_KSUITE the apt suite to take it from, e.g.
# bookworm-backports, which is added to apt's sources when missing.
# RXE_ALSO_KSUITES names the suites whose kernel the module must also build
# for (default bookworm-backports, the 6.12 kernel; empty for none): their
# headers are installed too when apt can reach them, and the suite's build
# step builds against them.

set -euo pipefail

PACKAGES=(
	# build
	make gcc kmod
	# guests
	qemu-system-x86 busybox-static xz-utils cpio zstd
	# in the guests (they run the host's root)
	rdma-core ibverbs-utils rdmacm-utils perftest python3-pyverbs
	libibverbs-dev
	iproute2 iputils-ping procps util-linux iperf3 nvme-cli fio nftables
	tshark python3-scapy gnuplot-nox
)

# `make check`'s gates only: a test run does without the 140 MB source
# package and its unpacking.
CHECK=0
case ${1:-} in
--check) CHECK=1 ;;
'') ;;
*) echo "usage: selftests/setup.sh [--check]" >&2; exit 2 ;;
esac
[ "$CHECK" = 0 ] || PACKAGES+=(sparse linux-source-6.1)

sudo=()
if [ "$(id -u)" != 0 ]; then
	command -v sudo >/dev/null || { echo "setup.sh: run as root (no sudo here)" >&2; exit 1; }
	sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive

ALSO_KSUITES=${RXE_ALSO_KSUITES-bookworm-backports}

# suite_abi [SUITE]: the ABI linux-image-amd64 depends on in SUITE (default:
# the one apt would install); empty when apt does not know the suite.
suite_abi() {
	local pkg=linux-image-amd64

	[ -z "${1:-}" ] || pkg="$pkg/$1"
	apt-cache depends "$pkg" 2>/dev/null |
		sed -n 's/^ *Depends: linux-image-\(.*\)$/\1/p' | head -n 1
}

# The guest kernel's ABI.
abi() {
	if [ -n "${RXE_KABI:-}" ]; then
		echo "$RXE_KABI"
		return
	fi
	suite_abi "${RXE_KSUITE:-}"
}

# The packages not installed yet, and "apt" when apt cannot tell us about
# the guest kernel (no package lists yet: the kernel is fetched with apt).
missing() {
	local p a=$ABI installed

	if [ -z "$a" ] || ! apt-cache show "linux-image-$a" >/dev/null 2>&1; then
		echo apt
		return
	fi
	installed=$(dpkg-query -W -f='${Package} ${Status}\n' "${PACKAGES[@]}" "linux-headers-$a" 2>/dev/null |
		awk '/ install ok installed$/ { print $1 }')
	for p in "${PACKAGES[@]}" "linux-headers-$a"; do
		grep -qx -- "$p" <<<"$installed" || echo "$p"
	done
}

# The suites of RXE_ALSO_KSUITES whose kernel headers are not installed
# (or that apt does not know yet).
missing_also() {
	local s a

	for s in $ALSO_KSUITES; do
		a=$(suite_abi "$s")
		if [ -z "$a" ] || ! dpkg-query -W -f='${Status}\n' "linux-headers-$a" 2>/dev/null |
			grep -qx 'install ok installed'; then
			echo "$s"
		fi
	done
}

# Install the headers of the RXE_ALSO_KSUITES kernels. They only add a
# build check, so a suite apt cannot reach is a warning, not a failure.
install_also() {
	local s b

	for s in $(missing_also); do
		b=
		if (add_suite "$s"); then
			b=$(suite_abi "$s")
		fi
		if [ -z "$b" ] || ! "${sudo[@]}" apt-get install -y -q --no-install-recommends \
			-t "$s" "linux-headers-$b"; then
			echo "setup.sh: warning: no kernel headers from $s; the module is not" \
				"build-checked for that kernel (RXE_ALSO_KSUITES)" >&2
		fi
	done
}

# Add a suite such as bookworm-backports to apt's sources, on the mirror
# the system already uses for Debian.
add_suite() {
	local suite=$1 uri list=/etc/apt/sources.list.d/rxe-testbed-$1.sources

	apt-cache policy 2>/dev/null | grep -q " $suite/main " && return 0
	uri=$(apt-cache policy 2>/dev/null |
		awk '$3 ~ /^[a-z]+\/main$/ && $2 ~ /\/debian\/?$/ { print $2; exit }')
	[ -n "$uri" ] || { echo "setup.sh: no Debian mirror in apt's sources to add $suite to" >&2; exit 1; }
	echo "setup.sh: adding $suite ($uri) to apt's sources"
	printf 'Types: deb\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
		"$uri" "$suite" | "${sudo[@]}" tee "$list" >/dev/null
	# A suite the mirror does not have would fail every later update.
	"${sudo[@]}" apt-get update -q -o APT::Update::Error-Mode=any || {
		echo "setup.sh: apt cannot fetch $suite: taking it out of apt's sources again" >&2
		"${sudo[@]}" rm -f "$list"
		return 1
	}
}

# checkpatch.pl ships in linux-source as a tarball: `make check` wants it
# unpacked next to it.
unpack_source() {
	local tar=/usr/src/linux-source-6.1.tar.xz

	[ "$CHECK" = 1 ] || return 0
	[ -d /usr/src/linux-source-6.1 ] || [ ! -e "$tar" ] && return 0
	echo "setup.sh: unpacking $tar (checkpatch for make check)"
	"${sudo[@]}" tar -C /usr/src -xJf "$tar"
}

ABI=$(abi)
todo=$(missing)
if [ -z "$todo" ]; then
	install_also
	unpack_source
	echo "setup.sh: everything is installed (guest kernel $ABI)"
	exit 0
fi

echo "setup.sh: installing: $(echo "$todo" | tr '\n' ' ')"
[ -z "${RXE_KSUITE:-}" ] || add_suite "$RXE_KSUITE"
"${sudo[@]}" apt-get update -q
ABI=$(abi)
a=$ABI
[ -n "$a" ] || { echo "setup.sh: apt knows no linux-image-amd64" >&2; exit 1; }
"${sudo[@]}" apt-get install -y -q --no-install-recommends "${PACKAGES[@]}"
if [ -n "${RXE_KSUITE:-}" ]; then
	"${sudo[@]}" apt-get install -y -q --no-install-recommends -t "$RXE_KSUITE" "linux-headers-$a"
else
	"${sudo[@]}" apt-get install -y -q --no-install-recommends "linux-headers-$a"
fi
install_also

todo=$(missing)
[ -z "$todo" ] || { echo "setup.sh: still missing: $todo" >&2; exit 1; }
unpack_source
echo "setup.sh: done (guest kernel $a)"
