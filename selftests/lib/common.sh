# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Host-side helpers shared by run.sh, demo.sh and vm.sh. Source it; it
# sets SELFTESTS (this folder) and REPO (the repository root).

SELFTESTS=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REPO=$(cd "$SELFTESTS/.." && pwd)
export SELFTESTS REPO

say() { printf '%s\n' "$*"; }
warn() { printf '%s\n' "$*" >&2; }
die() { printf '%s: %s\n' "${0##*/}" "$*" >&2; exit 1; }

# Print the last $2 (default 30) lines of file $1 indented, for CI logs.
tail_indented() {
	[ -s "$1" ] || return 0
	tail -n "${2:-30}" "$1" | sed 's/^/    | /'
}

# Build the module, and the kernel-verbs test module (selftests/ktest),
# against the headers of the guest kernel, into $1 (log).
build_module() {
	local log=$1 kdir=/usr/src/linux-headers-$KVER

	[ -d "$kdir" ] || {
		echo "no headers for $KVER in $kdir: run selftests/setup.sh" >"$log"
		return 1
	}
	make -C "$REPO" KDIR="$kdir" all ktest >"$log" 2>&1
}

# The other kernels the module supports, for build_elsewhere: every
# installed Debian headers tree but the guests' (selftests/setup.sh
# installs 6.12's from bookworm-backports).
other_kdirs() {
	local kdir

	for kdir in /usr/src/linux-headers-*-amd64; do
		[ -d "$kdir" ] && [ "$kdir" != "/usr/src/linux-headers-$KVER" ] &&
			echo "$kdir"
	done
	return 0
}

# Build the module and the kernel-verbs test module with W=1 -Werror
# against headers tree $1, into $2 (log); with $3, keep rdma_rxe.ko and
# rxe_ktest.ko in that folder. The build runs in a scratch copy of the
# sources, so that the guests' rdma_rxe.ko stays as it is.
build_elsewhere() {
	local kdir=$1 log=$2 keep=${3:-} tmp ver rc=0

	ver=$(git -C "$REPO" describe --always --dirty 2>/dev/null || echo unknown)
	tmp=$(mktemp -d) || return 1
	mkdir -p "$tmp/selftests/ktest"
	cp -r "$REPO"/Kbuild "$REPO"/Makefile "$REPO"/*.c "$REPO"/include \
		"$REPO"/scripts "$tmp/" &&
		cp "$REPO"/selftests/ktest/Kbuild "$REPO"/selftests/ktest/*.c \
			"$tmp/selftests/ktest/" &&
		make -C "$tmp" KDIR="$kdir" RXE_VERSION="$ver" w1 ktest \
			>"$log" 2>&1 || rc=1
	if [ "$rc" = 0 ] && [ -n "$keep" ]; then
		mkdir -p "$keep" &&
			cp "$tmp/rdma_rxe.ko" "$tmp/selftests/ktest/rxe_ktest.ko" "$keep/" || rc=1
	fi
	rm -rf "$tmp"
	return "$rc"
}

# Install what the build and the guests need, unless RXE_NO_SETUP=1: on a
# fresh machine the first run does it (apt); afterwards it only checks.
ensure_setup() {
	[ "${RXE_NO_SETUP:-0}" = 1 ] && return 0
	"$SELFTESTS/setup.sh" || die "setup failed: see above"
}
