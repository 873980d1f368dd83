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
	# Every CPU for kbuild; the Makefile keeps its targets in order.
	make -j"$(nproc)" -C "$REPO" KDIR="$kdir" all ktest >"$log" 2>&1
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
		make -j"$(nproc)" -C "$tmp" KDIR="$kdir" RXE_VERSION="$ver" w1 ktest \
			>"$log" 2>&1 || rc=1
	if [ "$rc" = 0 ] && [ -n "$keep" ]; then
		mkdir -p "$keep" &&
			cp "$tmp/rdma_rxe.ko" "$tmp/selftests/ktest/rxe_ktest.ko" "$keep/" || rc=1
	fi
	rm -rf "$tmp"
	return "$rc"
}

# build_tools DIR: build the C helpers the guests run (selftests/lib/*.c)
# on the host into DIR, each NAME with its compiler output in DIR/NAME.log,
# and export RXE_TOOLS=DIR for the guests (lib/guest.sh: have_tool). A
# guest's gcc takes 3-10 s a file under TCG; the host's, a fraction of
# one. A helper that does not build is left out, and the check that wants
# it fails with its log. Returns non-zero when any failed.
build_tools() {
	local dir=$1 lib=$SELFTESTS/lib hdr rc=0
	local -a cc=(gcc -Wall -Wextra -Werror -O2)

	mkdir -p "$dir" || return 1
	export RXE_TOOLS=$dir
	# _tool NAME ARGS...: cc ARGS... -o DIR/NAME.
	_tool() {
		local name=$1

		shift
		rm -f "$dir/$name"
		"${cc[@]}" "$@" -o "$dir/$name" >"$dir/$name.log" 2>&1 || rc=1
	}
	_tool rxe-linger.so -shared -fPIC "$lib/rxe-linger.c" -ldl
	_tool rxe-ring -pthread "$lib/rxe-ring.c" -l:libibverbs.so.1
	_tool rxe-mcast "$lib/rxe-mcast.c" -l:libibverbs.so.1
	# The FLUSH WQE (6.2 on) is in the newest uapi rdma_user_rxe.h among
	# the installed kernel headers, whichever kernel a guest boots.
	hdr=$(grep -l '} flush;' /usr/src/linux-headers-*/include/uapi/rdma/rdma_user_rxe.h 2>/dev/null |
		sort -V | tail -n 1) || true
	if [ -n "$hdr" ]; then
		_tool rxe-flush -include "$hdr" "$lib/rxe-flush.c" -l:libibverbs.so.1
	else
		rm -f "$dir/rxe-flush"
		echo "no kernel headers with a FLUSH send WQE (6.2+) in /usr/src: selftests/setup.sh installs 6.12's" >"$dir/rxe-flush.log"
		rc=1
	fi
	unset -f _tool
	return "$rc"
}

# Install what the build and the guests need, unless RXE_NO_SETUP=1: on a
# fresh machine the first run does it (apt); afterwards it only checks.
ensure_setup() {
	[ "${RXE_NO_SETUP:-0}" = 1 ] && return 0
	"$SELFTESTS/setup.sh" || die "setup failed: see above"
}
