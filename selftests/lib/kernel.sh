# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Fetch a Debian kernel, unpack it into a cache and build the guests'
# initramfs; and unpack the few packages the guests use that the host
# should not install (guest_debs_prepare, below). Source it (after
# common.sh) and call kernel_prepare, which sets
#
#   KVER           kernel release, e.g. 6.1.0-56-amd64
#   KERNEL_DIR     its cache folder
#   KERNEL_IMAGE   the kernel to boot (vmlinux when it could be extracted)
#   KERNEL_MODULES the folder exported to the guest as /lib/modules
#   KERNEL_INITRD  the initramfs
#
# Parameters (environment):
#   RXE_KABI           kernel ABI = release to fetch (default: the one that
#                      apt-cache depends linux-image-amd64 names)
#   RXE_KSUITE         apt suite to fetch it from, e.g. bookworm-backports
#                      (default: whatever apt picks)
#   RXE_TESTBED_CACHE  cache folder (default ~/.cache/rxe-testbed)
#
# Cache layout: $RXE_TESTBED_CACHE/<release>/{root/,vmlinux,initramfs-*.cpio}

RXE_TESTBED_CACHE=${RXE_TESTBED_CACHE:-$HOME/.cache/rxe-testbed}

# Modules the initramfs loads: to reach the host root, and configfs (their
# dependencies are added from modules.dep).
INITRAMFS_MODULES="virtio_pci virtio_net 9pnet_virtio 9p overlay configfs"

kernel_default_abi() {
	local pkg=linux-image-amd64

	[ -z "${RXE_KSUITE:-}" ] || pkg="$pkg/$RXE_KSUITE"
	apt-cache depends "$pkg" 2>/dev/null |
		sed -n 's/^ *Depends: linux-image-\(.*\)$/\1/p' | head -n 1
}

# Print the modules.dep paths of module $2 and its dependencies, the
# dependencies first, for the modules folder $1. Builtins print nothing.
kernel_mod_deps() {
	local dir=$1 name=$2 line dep

	line=$(grep -E "(^|/)${name}\.ko(\.[a-z]+)?:" "$dir/modules.dep" | head -n 1)
	if [ -z "$line" ]; then
		grep -qE "/${name}\.ko" "$dir/modules.builtin" && return 0
		echo "kernel.sh: module $name not found in $dir" >&2
		return 1
	fi
	for dep in ${line#*:}; do
		dep=${dep##*/}
		kernel_mod_deps "$dir" "${dep%%.ko*}" || return 1
	done
	echo "${line%%:*}"
}

# Unpack linux-image-$KVER into $KERNEL_DIR (runs in a subshell so that
# its trap only cleans up its own temp folder).
kernel_fetch() (
	set -euo pipefail
	local tmp pkg vmlinuz off

	tmp=$(mktemp -d "$RXE_TESTBED_CACHE/.fetch.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	pkg=linux-image-$KVER
	[ -z "${RXE_KSUITE:-}" ] || pkg="$pkg/$RXE_KSUITE"
	echo "kernel: downloading $pkg" >&2
	(cd "$tmp" && apt-get download -q "$pkg") >"$tmp/apt.log" 2>&1 || {
		cat "$tmp/apt.log" >&2
		echo "kernel: apt-get download $pkg failed; run selftests/setup.sh" >&2
		exit 1
	}
	dpkg-deb -x "$tmp"/linux-image-*.deb "$tmp/root"
	rm -f "$tmp"/linux-image-*.deb
	[ -d "$tmp/root/lib/modules/$KVER" ] || {
		echo "kernel: the package has no lib/modules/$KVER" >&2
		exit 1
	}
	depmod -b "$tmp/root" "$KVER"

	# An uncompressed vmlinux boots much faster under TCG than the
	# bzImage, which has to decompress itself in emulated code. QEMU
	# boots the ELF through its PVH note. The XZ stream in vmlinuz is
	# followed by other data, so xz complains at the end: ignore that
	# and check that we got an ELF file.
	vmlinuz=$tmp/root/boot/vmlinuz-$KVER
	off=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$vmlinuz" | head -n 1 | cut -d: -f1)
	if [ -n "$off" ]; then
		tail -c "+$((off + 1))" "$vmlinuz" | xz -dc >"$tmp/vmlinux" 2>/dev/null || true
	fi
	if [ "$(head -c 4 "$tmp/vmlinux" 2>/dev/null | od -An -tx1 | tr -d ' ')" = 7f454c46 ]; then
		echo "kernel: extracted vmlinux" >&2
	else
		echo "kernel: no XZ vmlinux in $vmlinuz, booting the bzImage" >&2
		rm -f "$tmp/vmlinux"
	fi
	rm -rf "$KERNEL_DIR"
	mkdir -p "$KERNEL_DIR"
	mv "$tmp/root" "$KERNEL_DIR/root"
	[ ! -e "$tmp/vmlinux" ] || mv "$tmp/vmlinux" "$KERNEL_DIR/vmlinux"
	touch "$KERNEL_DIR/.complete"
)

# Build $KERNEL_INITRD: busybox, the modules for virtio, 9p and overlay
# (decompressed: busybox insmod may not read .ko.xz) and lib/initramfs-init.sh
# as /init. The name carries a hash of the init script and the module list,
# so editing either rebuilds it.
kernel_initramfs() (
	set -euo pipefail
	local staging mods m f name

	staging=$(mktemp -d "$RXE_TESTBED_CACHE/.initramfs.XXXXXX")
	trap 'rm -rf "$staging"' EXIT
	mkdir -p "$staging"/{bin,dev,proc,sys,lower,rw,newroot,modules}
	cp /bin/busybox "$staging/bin/busybox"
	for m in $("$staging/bin/busybox" --list); do
		[ "$m" = busybox ] || ln -s busybox "$staging/bin/$m"
	done
	mods=$(for m in $INITRAMFS_MODULES; do
		kernel_mod_deps "$KERNEL_MODULES/$KVER" "$m" || exit 1
	done | awk '!seen[$0]++')
	for f in $mods; do
		name=${f##*/}
		name=${name%%.ko*}.ko
		case $f in
		*.xz) xz -dc "$KERNEL_MODULES/$KVER/$f" ;;
		*.zst) zstd -qdc "$KERNEL_MODULES/$KVER/$f" ;;
		*.gz) gzip -dc "$KERNEL_MODULES/$KVER/$f" ;;
		*) cat "$KERNEL_MODULES/$KVER/$f" ;;
		esac >"$staging/modules/$name"
		echo "$name" >>"$staging/modules/order"
	done
	install -m 0755 "$SELFTESTS/lib/initramfs-init.sh" "$staging/init"
	(cd "$staging" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) >"$KERNEL_INITRD.tmp"
	mv "$KERNEL_INITRD.tmp" "$KERNEL_INITRD"
)

# Debian packages whose programs a test runs in the guests without the
# host installing them: nfs-kernel-server's and nfs-common's would start an
# NFS server and rpcbind on the host (selftests/tests/36-nfs-rdma.sh copies
# what it needs into its guest's root instead).
GUEST_DEBS="nfs-kernel-server nfs-common libwrap0"

# guest_debs_prepare: unpack $GUEST_DEBS into $RXE_TESTBED_CACHE/debs/root
# (once) and export RXE_GUEST_DEBS, that folder, to the guests. Without
# package lists or network it fails, and tests that need those programs
# fail saying so; the others run.
guest_debs_prepare() {
	local dir=$RXE_TESTBED_CACHE/debs lockfd rc=0

	mkdir -p "$RXE_TESTBED_CACHE" || return 1
	exec {lockfd}>"$RXE_TESTBED_CACHE/.lock"
	flock "$lockfd"
	if [ "$(cat "$dir/.complete" 2>/dev/null)" != "$GUEST_DEBS" ]; then
		guest_debs_fetch "$dir" || rc=1
	fi
	exec {lockfd}>&-
	[ "$rc" = 0 ] || return 1
	RXE_GUEST_DEBS=$dir/root
	export RXE_GUEST_DEBS
}

guest_debs_fetch() (
	set -euo pipefail
	local dir=$1 tmp deb

	tmp=$(mktemp -d "$RXE_TESTBED_CACHE/.debs.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	echo "guest debs: downloading $GUEST_DEBS" >&2
	# shellcheck disable=SC2086 # a list of package names
	(cd "$tmp" && apt-get download -q $GUEST_DEBS) >"$tmp/apt.log" 2>&1 || {
		cat "$tmp/apt.log" >&2
		echo "guest debs: apt-get download failed; run selftests/setup.sh" >&2
		exit 1
	}
	for deb in "$tmp"/*.deb; do
		dpkg-deb -x "$deb" "$tmp/root"
	done
	rm -rf "$dir"
	mkdir -p "$dir"
	mv "$tmp/root" "$dir/root"
	echo "$GUEST_DEBS" >"$dir/.complete"
)

kernel_prepare() {
	local abi lockfd hash

	abi=${RXE_KABI:-$(kernel_default_abi)}
	[ -n "$abi" ] || {
		echo "kernel: cannot tell the kernel ABI (apt-cache knows no linux-image-amd64);" \
			"run selftests/setup.sh or set RXE_KABI" >&2
		return 1
	}
	KVER=$abi
	KERNEL_DIR=$RXE_TESTBED_CACHE/$KVER
	KERNEL_MODULES=$KERNEL_DIR/root/lib/modules
	mkdir -p "$RXE_TESTBED_CACHE" || return 1

	# Runs in other checkouts share the cache: one fills it at a time.
	exec {lockfd}>"$RXE_TESTBED_CACHE/.lock"
	flock "$lockfd"
	if [ ! -e "$KERNEL_DIR/.complete" ]; then
		kernel_fetch || { exec {lockfd}>&-; return 1; }
	fi
	KERNEL_IMAGE=$KERNEL_DIR/vmlinux
	[ -e "$KERNEL_IMAGE" ] || KERNEL_IMAGE=$KERNEL_DIR/root/boot/vmlinuz-$KVER
	hash=$( (cat "$SELFTESTS/lib/initramfs-init.sh"; echo "$INITRAMFS_MODULES") |
		sha256sum | cut -c1-12)
	KERNEL_INITRD=$KERNEL_DIR/initramfs-$hash.cpio
	if [ ! -e "$KERNEL_INITRD" ]; then
		rm -f "$KERNEL_DIR"/initramfs-*.cpio
		kernel_initramfs || { exec {lockfd}>&-; return 1; }
	fi
	exec {lockfd}>&-
	export KVER KERNEL_DIR KERNEL_IMAGE KERNEL_MODULES KERNEL_INITRD
}
